"""A finding that says a tool refuses the model quotes that tool's verdict in this run.

onnx-lint infers on a copy without the declarations; a failure that exists only there is a limit
of the copy. The full checker and ONNX Runtime, asked about the model as it is, decide.
"""

from __future__ import annotations

import onnx
import onnxruntime as ort
import pytest
from real_models import package_root
from test_modelopt_ports import _make_topk_overflow_model


def _accepted(path) -> bool:
    onnx.checker.check_model(str(path), full_check=True)
    ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return True


def test_an_onnxslim_rewritten_silero_vad_that_both_tools_accept_gets_no_refusal_claim(cli, tmp_path):
    onnxslim = pytest.importorskip("onnxslim")
    root = package_root("silero_vad")
    assert root is not None
    path = tmp_path / "silero_slim.onnx"
    onnx.save(onnxslim.slim(str(root / "data" / "silero_vad.onnx")), path)  # inlines the If branches
    assert _accepted(path)
    found = cli("check", str(path), "--output-format", "json").json()
    assert [d for d in found if d["code"] == "OL102"] == []
    assert not any("refuse" in d["message"] for d in found)
    assert [d for d in found if d["severity"] == "error"] == []


def test_a_covered_failure_both_tools_refuse_quotes_their_words(cli, tmp_path):
    """TopK with k beyond its axis, its outputs' types declared (as OL003's fix leaves them)."""
    path = tmp_path / "topk.onnx"
    onnx.save(_make_topk_overflow_model(), path)
    assert cli("check", str(path), "--fix").code == 1
    [finding] = [d for d in cli("check", str(path), "--output-format", "json").json() if d["code"] == "OL102"]
    assert finding["severity"] == "error" and finding["engine"] == "onnx.checker, full"
    message = finding["message"]
    assert message.startswith("ONNX inference fails at this node (Axis has less than the requested k elements)")
    # Each tool's own words, from this run: the full checker's strict inference, ONNX Runtime's session.
    assert "onnx.checker (full) fails on the model: " in message and "requested k" in message.split("checker")[-1]
    with pytest.raises(Exception) as refused:
        ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert "ONNX Runtime refuses to load it: " in message
    assert str(refused.value).strip().splitlines()[0][-60:] in message
