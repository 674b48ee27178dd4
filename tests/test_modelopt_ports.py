"""NVIDIA ModelOpt PR #1627's test models, ported: its assertions a user would notice, met by `--fix`.

The builders are copied from Model-Optimizer ``tests/unit/onnx/test_onnx_utils.py`` and
``tests/unit/onnx/autocast/test_autocast.py``. ModelOpt calls ``clear_stale_value_info`` /
``infer_types`` / ``convert_to_f16`` in memory; the user-visible equivalent here is
``onnx-lint check --fix`` on the file (and, for the FP16 case, onnx-lint's own FP16 step).

One deliberate difference: ModelOpt *removes* a stale value_info entry; docs/design.md corrects it
(entries can be the only type source for custom-op outputs). Both leave the declared type right.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx.helper import (
    make_graph,
    make_model,
    make_node,
    make_opsetid,
    make_tensor,
    make_tensor_value_info,
)


def _make_cast_model(cast_to, output_elem_type, with_value_info=False):
    """Build a tiny X -> Cast(to=cast_to) -> Y model."""
    nodes = [make_node("Cast", ["X"], ["Y"], to=cast_to, name="cast")]
    inputs = [make_tensor_value_info("X", onnx.TensorProto.FLOAT16, [1, 4])]
    outputs = [make_tensor_value_info("Y", output_elem_type, [1, 4])]
    value_info = (
        [make_tensor_value_info("Y", onnx.TensorProto.FLOAT16, [1, 4])] if with_value_info else []
    )
    graph = make_graph(nodes, "cast_graph", inputs, outputs, value_info=value_info)
    return make_model(graph, producer_name="modelopt test", opset_imports=[make_opsetid("", 17)])


def _make_matmul_model(output_shape):
    """Build an X[3,4] @ W[4,5] -> Y model with Y declared using ``output_shape``."""
    weights = make_tensor("W", onnx.TensorProto.FLOAT, [4, 5], np.zeros(20, dtype=np.float32))
    nodes = [make_node("MatMul", ["X", "W"], ["Y"], name="matmul")]
    inputs = [make_tensor_value_info("X", onnx.TensorProto.FLOAT, [3, 4])]
    outputs = [make_tensor_value_info("Y", onnx.TensorProto.FLOAT, output_shape)]
    graph = make_graph(nodes, "matmul_graph", inputs, outputs, initializer=[weights])
    return make_model(graph, producer_name="modelopt test", opset_imports=[make_opsetid("", 17)])


def _make_dynamic_dim_model():
    """Build an X[batch,4] -> Relu -> Y[my_batch,4] model (output declares a different dim_param)."""
    nodes = [make_node("Relu", ["X"], ["Y"], name="relu")]
    inputs = [make_tensor_value_info("X", onnx.TensorProto.FLOAT, ["batch", 4])]
    outputs = [make_tensor_value_info("Y", onnx.TensorProto.FLOAT, ["my_batch", 4])]
    graph = make_graph(nodes, "dyn_graph", inputs, outputs)
    return make_model(graph, producer_name="modelopt test", opset_imports=[make_opsetid("", 17)])


def _make_topk_overflow_model():
    """Build a model whose TopK ``k`` (5) exceeds the static axis dim (3)."""
    k = make_tensor("k", onnx.TensorProto.INT64, [1], [5])
    nodes = [
        make_node("TopK", ["X", "k"], ["vals", "inds"], axis=1, name="topk"),
        make_node("Cast", ["inds"], ["out"], to=onnx.TensorProto.FLOAT, name="cast_inds"),
    ]
    inputs = [make_tensor_value_info("X", onnx.TensorProto.FLOAT, [1, 3])]
    outputs = [make_tensor_value_info("out", onnx.TensorProto.FLOAT, [1, 5])]
    graph = make_graph(nodes, "topk_overflow", inputs, outputs, initializer=[k])
    return make_model(graph, producer_name="modelopt test", opset_imports=[make_opsetid("", 17)])


def weakly_typed_topk_model():
    # TopK k (5) exceeds the static axis size (3), so ONNX shape inference cannot resolve it.
    x = make_tensor_value_info("X", onnx.TensorProto.FLOAT, [1, 3])
    out = make_tensor_value_info("out", onnx.TensorProto.FLOAT, [1, 5])
    weight = onnx.numpy_helper.from_array(np.ones((1, 3), dtype=np.float32), name="weight")
    k = onnx.numpy_helper.from_array(np.array([5], dtype=np.int64), name="k")
    nodes = [
        make_node("Add", ["X", "weight"], ["a"], name="add"),
        make_node("TopK", ["a", "k"], ["vals", "inds"], axis=1, name="topk"),
        make_node("Cast", ["inds"], ["out"], to=onnx.TensorProto.FLOAT, name="cast"),
    ]
    graph = make_graph(nodes, "weakly_typed_topk", [x], [out], [weight, k])
    model = make_model(graph, opset_imports=[make_opsetid("", 17)])
    model.ir_version = 10
    return model


@pytest.mark.parametrize(
    ("output_elem_type", "with_value_info", "expected_codes"),
    [
        (onnx.TensorProto.FLOAT16, True, ["OL006", "OL006"]),  # stale output + value_info
        (onnx.TensorProto.FLOAT, False, []),  # output already matches Cast.to: no-op
    ],
    ids=["stale_output_and_value_info", "no_op_when_matching"],
)
def test_clear_stale_value_info(cli, save, output_elem_type, with_value_info, expected_codes):
    path = save(_make_cast_model(onnx.TensorProto.FLOAT, output_elem_type, with_value_info))
    before = path.read_bytes()
    assert sorted(d["code"] for d in cli("check", str(path), "--output-format", "json").json()) == expected_codes
    assert cli("check", str(path), "--fix").code == 0
    model = onnx.load(path)
    assert model.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    # ModelOpt removes the entry; onnx-lint corrects it (docs/design.md): no stale FLOAT16 is left either way.
    assert all(v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT for v in model.graph.value_info)
    if not expected_codes:
        assert path.read_bytes() == before


def test_clear_stale_value_info_reconciles_stale_rank0_output(cli, save):
    path = save(_make_matmul_model(output_shape=[]))
    [diag] = cli("check", str(path), "--output-format", "json").json()
    assert diag["code"] == "OL001"
    assert cli("check", str(path), "--fix").code == 0
    out_type = onnx.load(path).graph.output[0].type.tensor_type
    assert out_type.HasField("shape")  # shape field must remain (onnx.checker requires it)
    assert [d.dim_value for d in out_type.shape.dim] == [3, 5]
    onnx.checker.check_model(onnx.load(path))


def test_clear_stale_value_info_preserves_valid_output_shape(cli, save):
    path = save(_make_matmul_model(output_shape=[3, 5]))
    before = path.read_bytes()
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == before


def test_clear_stale_value_info_preserves_dynamic_dim_names(cli, save):
    path = save(_make_dynamic_dim_model())
    before = path.read_bytes()
    assert cli("check", str(path), "--output-format", "json").json() == []
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == before
    out_dims = onnx.load(path).graph.output[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in out_dims] == ["my_batch", 4]


def test_infer_types_falls_back_to_standalone_when_onnx_fails(cli, save):
    path = save(_make_topk_overflow_model())
    [diag] = cli("check", str(path), "--output-format", "json").json()
    assert diag["code"] == "OL003" and "Axis has less than the requested k elements" in diag["message"]
    # The types get filled; the TopK stays one ONNX Runtime refuses, an OL102 error (exit 1), never clean.
    assert cli("check", str(path), "--fix").code == 1
    model = onnx.load(path)
    value_info_types = {vi.name: vi.type.tensor_type.elem_type for vi in model.graph.value_info}
    output_types = {o.name: o.type.tensor_type.elem_type for o in model.graph.output}
    assert value_info_types.get("vals") == onnx.TensorProto.FLOAT  # the unused TopK values
    assert value_info_types.get("inds") == onnx.TensorProto.INT64  # TopK indices
    assert output_types.get("out") == onnx.TensorProto.FLOAT


def test_convert_to_f16_after_fix_on_unresolvable_op(cli, save):
    """ModelOpt: FP16 conversion of a graph ONNX inference cannot resolve must not crash."""
    pytest.importorskip("onnxruntime")
    from onnx_lint.quantization.fp16 import convert_to_fp16

    path = save(weakly_typed_topk_model())
    assert cli("check", str(path), "--fix").code == 1  # types filled; the TopK itself stays an OL102 error
    converted = convert_to_fp16(onnx.load(path), keep_io_types=True)
    onnx.checker.check_model(converted)
    assert any(n.op_type == "TopK" for n in converted.graph.node)
