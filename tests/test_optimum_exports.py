"""Issue 22, item 1 on the real exporter: optimum's GPT-2 decoder-with-past and its rewrites.

The .onnx files are committed, made by tests/exports/make_optimum_exports.py (optimum-onnx 0.1.0,
transformers 4.57, torch 2.14; onnxsim 0.8; ONNX Runtime's transformer optimizer). optimum declares
``past_sequence_length + sequence_length`` on the attention mask and on dim 2 of every ``present.*``
output. onnx-lint used to take that for one independent name, report OL002 on each present output
and make ``--fix`` write ``present.0.key_dim2`` over a declaration ONNX Runtime confirms.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import onnx
import pytest
from exports.make_optimum_exports import runtime_dims

EXPORTS = Path(__file__).resolve().parent / "exports"
TOTAL = "past_sequence_length + sequence_length"
CLEAN = ["optimum_gpt2_with_past.onnx", "optimum_gpt2_with_past_onnxsim.onnx"]
ORT_OPTIMIZED = "optimum_gpt2_with_past_ortopt.onnx"


def _declared(path: Path) -> list[list]:
    graph = onnx.load(path).graph
    return [[d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in [*graph.input, *graph.output]]


@pytest.mark.parametrize("name", [*CLEAN, ORT_OPTIMIZED])
def test_onnx_runtime_confirms_the_total_length_name(name):
    path = EXPORTS / name
    assert path.stat().st_size < 1_000_000
    assert [TOTAL in dims for dims in _declared(path)].count(True) == 3  # the mask and two present outputs
    for past, seq in ((5, 7), (9, 11)):
        assert runtime_dims(path, past, seq) == []


@pytest.mark.parametrize("name", CLEAN)
def test_optimum_export_and_its_onnxsim_rewrite_are_clean_and_byte_identical_after_fix(cli, tmp_path, name):
    path = tmp_path / name
    shutil.copy(EXPORTS / name, path)
    run = cli("check", str(path), "--output-format", "json")
    assert run.json() == [] and run.code == 0
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == (EXPORTS / name).read_bytes()


def test_ort_transformer_optimizer_rewrite_has_no_dim_error_and_the_fix_keeps_every_declared_dim(cli, tmp_path):
    """Its fused com.microsoft operators have no ONNX schema: what that costs is OL003's business; the
    dims must be left alone."""
    path = tmp_path / ORT_OPTIMIZED
    shutil.copy(EXPORTS / ORT_OPTIMIZED, path)
    diags = cli("check", str(path), "--output-format", "json").json()
    assert [d for d in diags if d["severity"] == "error"] == []
    assert "OL002" not in {d["code"] for d in diags}
    before = _declared(path)
    cli("check", str(path), "--fix")
    assert _declared(path) == before
    for past, seq in ((5, 7), (9, 11)):
        assert runtime_dims(path, past, seq) == []
