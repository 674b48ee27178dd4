"""Each rule on the model that shows its defect, and the fix that repairs it (issue: engine, point 2)."""

from __future__ import annotations

import os

import onnx
import onnx.shape_inference
import pytest
from conftest import output_dims

from examples import defects


def codes(run) -> list[str]:
    return [d["code"] for d in run.json()]


def test_stale_rank0_matmul_output_is_reported_and_fixed(cli, save):
    path = save(defects.stale_rank0_output())
    run = cli("check", str(path), "--output-format", "json")
    assert run.code == 1
    [diag] = run.json()
    assert diag["code"] == "OL001" and diag["name"] == "stale-rank-zero-output"
    assert diag["location"] == {"path": "graph/output[0]", "tensor": "Y", "node": None, "op_type": None}
    assert diag["engine"] == "onnx" and diag["fix"] == {"applicability": "safe", "applied": False,
                                                        "title": "Declare the computed shape [3, 5] on output 'Y'"}
    assert "[3, 5]" in diag["message"]

    fixed = cli("check", str(path), "--fix")
    assert fixed.code == 0, fixed.out + fixed.err
    assert output_dims(path) == [3, 5]
    model = onnx.load(path)
    assert model.graph.output[0].type.tensor_type.HasField("shape")
    onnx.checker.check_model(model, full_check=True)
    assert cli("check", str(path)).code == 0


def test_healthy_matmul_has_no_diagnostic_and_fix_leaves_file_alone(cli, save):
    path = save(defects.healthy_matmul())
    before = path.read_bytes()
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    run = cli("check", str(path), "--output-format", "json")
    assert run.code == 0 and run.json() == []
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == 1_000_000_000


def test_renamed_symbolic_dim_is_not_a_defect_and_survives_fix(cli, save):
    path = save(defects.renamed_batch())
    before = path.read_bytes()
    assert cli("check", str(path), "--output-format", "json").json() == []
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == ["my_batch", 4]
    assert path.read_bytes() == before


def test_topk_larger_than_axis_reports_root_cause_once_and_fills_types(cli, save):
    path = save(defects.topk_untyped())
    run = cli("check", str(path), "--output-format", "json")
    [diag] = run.json()
    assert diag["code"] == "OL003"
    assert diag["location"]["node"] == "TopK_0" and diag["location"]["op_type"] == "TopK"
    assert diag["location"]["path"] == "graph/node[0]"
    assert "Axis has less than the requested k elements" in diag["message"]
    assert "'values'" in diag["message"] and "'indices'" in diag["message"]

    # The types get filled, but the TopK stays one the full checker and ONNX Runtime refuse: never clean.
    assert cli("check", str(path), "--fix").code == 1
    [left] = cli("check", str(path), "--output-format", "json").json()
    assert left["code"] == "OL102" and left["location"]["path"] == "graph/node[0]"
    assert "Axis has less than the requested k elements" in left["message"]
    fixed = onnx.load(path)
    declared = {v.name: v.type.tensor_type.elem_type for v in fixed.graph.value_info}
    assert declared["values"] == onnx.TensorProto.FLOAT
    assert declared["indices"] == onnx.TensorProto.INT64
    inferred = onnx.shape_inference.infer_shapes(fixed)
    types = {v.name: v.type.tensor_type.elem_type for v in inferred.graph.value_info}
    assert types["indices_f"] == onnx.TensorProto.FLOAT
    # Shapes ONNX did derive are kept: the declared output keeps [1,5], nothing lost.
    assert output_dims(path) == [1, 5]
    for node_before, node_after in zip(defects.topk_untyped().graph.node, fixed.graph.node):
        assert node_before == node_after


def test_stale_rank0_output_feeding_reduce_mean(cli, save):
    path = save(defects.rank0_feeding_reduce_mean())
    with pytest.raises(onnx.shape_inference.InferenceError, match="Input rank was 0"):
        onnx.checker.check_model(onnx.load(path), full_check=True)
    assert codes(cli("check", str(path), "--output-format", "json")) == ["OL001"]
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == ["batch", 5]
    onnx.checker.check_model(onnx.load(path), full_check=True)


@pytest.mark.parametrize(
    ("builder", "expected_dims", "evidence"),
    [
        (defects.concrete_dim_conflict, ["batch", 4], "declared 5 but the graph computes 4"),
        (defects.pinned_batch, ["batch", 4], "dynamic input dim 'batch'"),
        (defects.pinned_batch_through_reshape, ["2*batch", 4], "changes with the dynamic input dims"),
    ],
)
def test_dim_conflicts_are_found_and_reconciled(cli, save, builder, expected_dims, evidence):
    path = save(builder())
    [diag] = cli("check", str(path), "--output-format", "json").json()
    assert diag["code"] == "OL002" and evidence in diag["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == expected_dims
    onnx.checker.check_model(onnx.load(path), full_check=True)


def test_stale_value_info_is_corrected(cli, save):
    path = save(defects.stale_value_info())
    [diag] = cli("check", str(path), "--output-format", "json").json()
    assert diag["code"] == "OL005" and diag["location"]["tensor"] == "h"
    assert cli("check", str(path), "--fix").code == 0
    [entry] = onnx.load(path).graph.value_info
    assert [d.dim_param or d.dim_value for d in entry.type.tensor_type.shape.dim] == ["batch", 4]


def test_stale_output_rank_and_element_type(cli, save):
    rank = save(defects.stale_output_rank(), "rank.onnx")
    dtype = save(defects.stale_element_type(), "dtype.onnx")
    assert codes(cli("check", str(rank), "--output-format", "json")) == ["OL004"]
    assert codes(cli("check", str(dtype), "--output-format", "json")) == ["OL006"]
    assert cli("check", str(rank), str(dtype), "--fix").code == 0
    assert output_dims(rank) == ["batch", 12]
    assert onnx.load(dtype).graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.INT64


def test_defects_inside_if_branch_and_loop_body(cli, save):
    branch = save(defects.if_branch_stale(), "if.onnx")
    body = save(defects.loop_body_stale(), "loop.onnx")
    run = cli("check", str(branch), str(body), "--output-format", "json")
    found = {(d["code"], d["location"]["path"]) for d in run.json()}
    assert ("OL001", "graph/node[0]/then_branch/output[0]") in found
    assert ("OL002", "graph/node[0]/body/output[1]") in found
    assert cli("check", str(branch), str(body), "--fix").code == 0
    for path in (branch, body):
        onnx.checker.check_model(onnx.load(path), full_check=True)
        assert cli("check", str(path), "--output-format", "json").json() == []


def test_external_data_model_is_fixed_without_touching_weights(cli, tmp_path):
    path = defects.with_external_data(tmp_path)
    data = tmp_path / "external.onnx.data"
    weights = data.read_bytes()
    stat = data.stat()
    assert codes(cli("check", str(path), "--output-format", "json")) == ["OL001"]
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == ["batch", 256]
    assert data.read_bytes() == weights and data.stat().st_mtime_ns == stat.st_mtime_ns
    model = onnx.load(path, load_external_data=False)
    locations = {e.value for e in model.graph.initializer[0].external_data if e.key == "location"}
    assert locations == {"external.onnx.data"}
    onnx.checker.check_model(str(path), full_check=True)


def test_an_external_data_model_linted_from_another_folder_gets_no_phantom_findings(cli, tmp_path):
    """The weights live beside the model, not in the working folder: nothing may go looking for them there
    (an in-memory onnx.checker call once reported every external tensor as a missing file)."""
    models = tmp_path / "models"
    models.mkdir()
    path = defects.with_external_data(models)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert codes(cli("check", str(path), "--output-format", "json", cwd=elsewhere)) == ["OL001"]
    assert cli("check", str(path), "--fix", cwd=elsewhere).code == 0
    assert cli("check", str(path), "--output-format", "json", cwd=elsewhere).json() == []


def test_underivable_output_gets_an_info_note_and_is_never_guessed(cli, save):
    path = save(defects.custom_op_output())
    before = path.read_bytes()
    run = cli("check", str(path), "--output-format", "json")
    [diag] = [d for d in run.json() if d["code"] == "OL007"]
    assert diag["severity"] == "info" and "no inference engine could derive" in diag["message"]
    assert diag["fix"] is None
    assert run.code == 0  # an info note does not fail CI
    cli("check", str(path), "--fix")
    assert path.read_bytes() == before


def test_symbolic_fallback_finds_what_onnx_cannot(cli, save):
    path = save(defects.symbolic_fallback())
    run = cli("check", str(path), "--output-format", "json", "--select", "OL001")
    [diag] = run.json()
    assert diag["engine"] == "onnxruntime-symbolic" and "[batch, 16]" in diag["message"]
    assert cli("check", str(path), "--fix", "--select", "OL001").code == 0
    assert output_dims(path) == ["batch", 16]
