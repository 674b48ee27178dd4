"""A fix writes only what it proved: every number carries its proof, and ONNX Runtime agrees.

A declared number where the static engines derive an anonymous dim (a strided Conv over a dynamic
length) is a claim: the pinned inferences confirm it, refute it (an error whose fix writes no such
number), or leave it unproven (no finding, and no fix keeps it). The planner refuses any edit whose
numbers carry no proof. ONNX Runtime, run at two sizes of every dynamic input dim, is the judge.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from rule_fixtures import FIXTURES
from truth import runtime_violations

from onnx_lint.base.errors import FixError
from onnx_lint.fixes.session import FixSession
from onnx_lint.lint.diagnostics import Applicability, Diagnostic, Fix, Location, Severity
from onnx_lint.model.edits import SetType, unproven_numbers
from onnx_lint.rules.registry import ALL_RULES

EXPORTS = Path(__file__).resolve().parent / "exports"


def _conv_model(y_dims, z_dims=("batch", 4, None)) -> onnx.ModelProto:
    """x[batch, 1, L] -> Conv(k=10, stride 5) -> y -> Relu -> z; y's value_info written at batch 2, L 1600."""
    weight = numpy_helper.from_array(np.random.default_rng(0).standard_normal((4, 1, 10)).astype(np.float32), "w")
    graph = h.make_graph(
        [h.make_node("Conv", ["x", "w"], ["y"], strides=[5]), h.make_node("Relu", ["y"], ["z"])], "conv",
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", 1, "L"])],
        [h.make_tensor_value_info("z", T.FLOAT, list(z_dims))], [weight],
        value_info=[h.make_tensor_value_info("y", T.FLOAT, list(y_dims))])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _value_info_dims(path: Path, name: str) -> list:
    model = onnx.load(path)
    [value] = [v for v in model.graph.value_info if v.name == name]
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in value.type.tensor_type.shape.dim]


def _plan_edits(path: Path) -> list:
    """Every edit the fixes of ``path`` would write (all rules, in memory)."""
    session = FixSession.lint(path, path.name, ALL_RULES, lambda code: True)
    return [e for d in session.result.diagnostics if d.fix is not None for e in d.fix.edits]


def test_a_stale_number_where_inference_derives_an_anonymous_dim_is_refuted_and_never_kept(cli, tmp_path):
    path = tmp_path / "conv.onnx"
    onnx.save(_conv_model([2, 4, 319]), path)
    assert runtime_violations(path, runs=((3, 2400), (2, 1600)), value_info=True) == [
        "y dim 0: declared 2, runtime 3", "y dim 2: declared 319, runtime 479"]
    [finding] = cli("check", str(path), "--output-format", "json").json()
    assert finding["code"] == "OL005" and finding["severity"] == "error"
    assert "dim 2 is declared 319, but the graph computes 7 with the dynamic input dims at batch = 37, L = 41" \
        in finding["message"]
    assert "[batch, 4, ?]" in finding["fix"]["title"]
    assert cli("check", "--fix", str(path)).code == 0
    assert _value_info_dims(path, "y") == ["batch", 4, None]  # floor((L - 10)/5) + 1: no affine fit, no number
    assert runtime_violations(path, runs=((3, 2400), (2, 1600), (5, 1000)), value_info=True) == []


def test_a_number_the_pinned_inferences_confirm_is_kept(cli, tmp_path):
    """y: [2, 4, L_out] where only dim 0 is stale: 4 is derived; nothing else is touched."""
    path = tmp_path / "conv.onnx"
    onnx.save(_conv_model([2, 4, None]), path)
    assert cli("check", "--fix", str(path)).code == 0
    assert _value_info_dims(path, "y") == ["batch", 4, None]
    [edit] = _plan_edits_of(_conv_model([2, 4, None]), tmp_path)
    assert edit.proofs[1].engine == "onnx" and edit.proofs[1].sizes.startswith("every size")


def _plan_edits_of(model: onnx.ModelProto, tmp_path: Path) -> list:
    path = tmp_path / "planned.onnx"
    onnx.save(model, path)
    return _plan_edits(path)


def _nonzero_model() -> onnx.ModelProto:
    """x[batch, 4] -> NonZero -> y [2, nnz]: y declared [5, 7]. Dim 0 is stale; nnz is known to no engine."""
    graph = h.make_graph(
        [h.make_node("NonZero", ["x"], ["y"]), h.make_node("Identity", ["y"], ["z"])], "nz",
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", 4])],
        [h.make_tensor_value_info("z", T.INT64, [2, None])],
        value_info=[h.make_tensor_value_info("y", T.INT64, [5, 7])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def test_an_unproven_number_is_not_a_finding_and_no_fix_keeps_it(cli, tmp_path):
    path = tmp_path / "nonzero.onnx"
    onnx.save(_nonzero_model(), path)
    [finding] = cli("check", str(path), "--output-format", "json").json()
    assert "dim 0 is declared 5 but the graph computes 2" in finding["message"]
    assert "dim 1" in finding["message"] and "no engine proves" in finding["message"]
    assert cli("check", "--fix", str(path)).code == 0
    assert _value_info_dims(path, "y") == [2, None]  # the declared 7 claimed what nothing can prove


def test_the_planner_refuses_an_edit_with_an_unproven_number(tmp_path):
    path = tmp_path / "conv.onnx"
    onnx.save(_conv_model([2, 4, 319]), path)
    before = path.read_bytes()
    session = FixSession.lint(path, path.name, ALL_RULES, lambda code: True)
    forged = Diagnostic(file=path.name, code="OL005", name="stale-value-info", severity=Severity.ERROR,
                        message="forged", location=Location.at_entry("graph", "value_info", 0, tensor="y"),
                        fix=Fix((SetType("graph", "value_info", "y", dims=("batch", 4, 319)),), "forged",
                                Applicability.SAFE))
    session.result.diagnostics = [forged]
    with pytest.raises(FixError, match=r"would write dim 1 = 4, dim 2 = 319, which no engine proved"):
        session.fix()
    assert path.read_bytes() == before


def _fixable_models(tmp_path: Path) -> list[Path]:
    """Every rule fixture's bad model and variants, and the committed real exports."""
    paths = []
    for code, fixture in FIXTURES.items():
        for name, build in {code: fixture.bad, **fixture.variants}.items():
            model = build()
            if isinstance(model, bytes):
                continue
            path = tmp_path / f"{name}.onnx"
            onnx.save(model, path)
            paths.append(path)
    for export in sorted(EXPORTS.glob("*.onnx")):
        paths.append(Path(shutil.copy(export, tmp_path / export.name)))
    return paths


def test_every_number_a_fix_writes_carries_its_proof_and_onnx_runtime_agrees(cli, tmp_path):
    """The property over every rule fixture and every committed real export: each edit's numbers are proven,
    and after ``--fix`` ONNX Runtime at two sizes of every dynamic dim agrees with every declaration."""
    judged = 0
    for path in _fixable_models(tmp_path):
        edits = _plan_edits(path)
        assert all(unproven_numbers(e) == [] for e in edits), path.name
        if not edits or cli("check", "--fix", str(path)).code not in (0, 1):
            continue
        try:
            violations = runtime_violations(path, runs=((3, 2400, 7, 11), (4, 1600, 10, 12)), value_info=True)
        except Exception:  # a model ONNX Runtime does not run (the rule's defect, or inputs it cannot feed)
            continue
        written = {e.tensor for e in edits if getattr(e, "dims", None) is not None}
        assert [v for v in violations if v.split(" ")[0].rstrip(":") in written] == [], path.name
        judged += 1
    assert judged >= 5


def test_the_wav2vec2_front_end_made_stale_by_make_dim_param_fixed_is_repaired(cli, tmp_path):
    """A transformers Wav2Vec2 export through ORT's make_dim_param_fixed + shape inference, then made dynamic
    again: its value_info keep batch 2 / length 1600. ``--fix`` leaves none that ONNX Runtime contradicts."""
    path = Path(shutil.copy(EXPORTS / "wav2vec2_tiny_fixed_then_dynamic.onnx", tmp_path / "w2v.onnx"))
    assert runtime_violations(path, runs=((3, 2400),), value_info=True) != []
    found = cli("check", str(path), "--output-format", "json").json()
    assert {d["code"] for d in found if d["severity"] == "error"} == {"OL005"}
    assert cli("check", "--fix", str(path)).code == 0
    assert runtime_violations(path, runs=((3, 2400), (1, 1000)), value_info=True) == []
    assert cli("check", str(path)).code == 0


def test_the_healthy_wav2vec2_export_stays_byte_identical(cli, tmp_path):
    path = Path(shutil.copy(EXPORTS / "wav2vec2_tiny.onnx", tmp_path / "w2v.onnx"))
    before = path.read_bytes()
    found = cli("check", str(path), "--output-format", "json").json()
    assert [d for d in found if d["severity"] in ("error", "warning")] == []
    cli("check", "--fix", str(path))
    assert path.read_bytes() == before
