"""The quantize report names its accuracy target: the editor's report page states its verdict against it."""

from __future__ import annotations

import json

from conftest import run_process
from test_quantize import _samples, residual_model

from onnx_lint.quantization.report import QuantizeReport


def test_the_report_names_the_accuracy_target_that_the_first_pass_met(tmp_path):
    """With --min-cosine met at the first pass no fallback search runs (``fallback`` is null): ``min_cosine`` is
    then the only place the report says which target the written model met."""
    source = residual_model(tmp_path / "res.onnx")
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "--calibration-data",
                      str(_samples(tmp_path / "c.npz")), "--min-cosine", "0.5", "--sensitivity-time", "0",
                      "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["min_cosine"] == 0.5 and report["fallback"] is None and report["written"] is True
    assert min(o["cosine_similarity"] for o in report["outputs"]) >= 0.5


def test_a_report_without_an_accuracy_target_says_so():
    assert QuantizeReport("m.onnx", "q.onnx", {}).to_json()["min_cosine"] is None
