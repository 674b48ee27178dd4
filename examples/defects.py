"""Small models that each show one defect onnx-lint finds (and their healthy twins).

Used by ``make_examples.py`` and by the test suite, so every example in the
README is also a tested case. Every model sets ``ir_version`` explicitly:
onnx 1.23 defaults to an IR that ONNX Runtime 1.31 refuses.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

IR_VERSION = 8
OPSET = 17


def _model(nodes, inputs, outputs, initializers=(), value_info=(), opset: int = OPSET,
           extra_opsets: Sequence[tuple[str, int]] = (), name: str = "example") -> onnx.ModelProto:
    graph = h.make_graph(list(nodes), name, list(inputs), list(outputs), list(initializers),
                         value_info=list(value_info))
    opsets = [h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in extra_opsets]
    model = h.make_model(graph, opset_imports=opsets, ir_version=IR_VERSION, producer_name="onnx-lint-examples")
    return model


def _weights(name: str, shape: Sequence[int], seed: int = 0) -> onnx.TensorProto:
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


def matmul(declared_y: Sequence[int | str] | None) -> onnx.ModelProto:
    """X[3,4] @ W[4,5] -> Y; ``declared_y=[]`` is the stale rank-0 output (OL001)."""
    return _model(
        [h.make_node("MatMul", ["X", "W"], ["Y"], name="MatMul_0")],
        [h.make_tensor_value_info("X", T.FLOAT, [3, 4])],
        [h.make_tensor_value_info("Y", T.FLOAT, declared_y)],
        [_weights("W", [4, 5])],
    )


def stale_rank0_output() -> onnx.ModelProto:
    return matmul([])


def healthy_matmul() -> onnx.ModelProto:
    return matmul([3, 5])


def renamed_batch() -> onnx.ModelProto:
    """X[batch,4] -> Relu -> Y[my_batch,4]: a renamed symbolic dim is not a defect."""
    return _model(
        [h.make_node("Relu", ["X"], ["Y"], name="Relu_0")],
        [h.make_tensor_value_info("X", T.FLOAT, ["batch", 4])],
        [h.make_tensor_value_info("Y", T.FLOAT, ["my_batch", 4])],
    )


def topk_untyped() -> onnx.ModelProto:
    """TopK with K=5 on an axis of 3: ONNX inference stops and leaves tensors untyped (OL003)."""
    return _model(
        [
            h.make_node("TopK", ["X", "K"], ["values", "indices"], axis=1, name="TopK_0"),
            h.make_node("Cast", ["indices"], ["indices_f"], to=T.FLOAT, name="Cast_0"),
            h.make_node("Add", ["values", "indices_f"], ["Y"], name="Add_0"),
        ],
        [h.make_tensor_value_info("X", T.FLOAT, [1, 3])],
        [h.make_tensor_value_info("Y", T.FLOAT, [1, 5])],
        [numpy_helper.from_array(np.array([5], dtype=np.int64), "K")],
    )


def rank0_feeding_reduce_mean() -> onnx.ModelProto:
    """A stale rank-0 output that also feeds ReduceMean(axes=[1]) (`axis must be in [-rank, rank-1]`)."""
    return _model(
        [
            h.make_node("MatMul", ["X", "W"], ["scores"], name="MatMul_0"),
            h.make_node("ReduceMean", ["scores"], ["mean"], axes=[1], keepdims=0, name="ReduceMean_0"),
        ],
        [h.make_tensor_value_info("X", T.FLOAT, ["batch", 4])],
        [h.make_tensor_value_info("scores", T.FLOAT, []), h.make_tensor_value_info("mean", T.FLOAT, ["batch"])],
        [_weights("W", [4, 5])],
    )


def concrete_dim_conflict() -> onnx.ModelProto:
    """[batch,5] declared where the graph computes [batch,4] (OL002)."""
    return _model(
        [h.make_node("Relu", ["X"], ["Y"], name="Relu_0")],
        [h.make_tensor_value_info("X", T.FLOAT, ["batch", 4])],
        [h.make_tensor_value_info("Y", T.FLOAT, ["batch", 5])],
    )


def pinned_batch() -> onnx.ModelProto:
    """The output pins 1 where the input batch is dynamic (OL002)."""
    return _model(
        [h.make_node("Sigmoid", ["X"], ["Y"], name="Sigmoid_0")],
        [h.make_tensor_value_info("X", T.FLOAT, ["batch", 4])],
        [h.make_tensor_value_info("Y", T.FLOAT, [1, 4])],
    )


def pinned_batch_through_reshape() -> onnx.ModelProto:
    """Reshape(-1) makes the derived batch anonymous; pinning shows it follows the input (OL002)."""
    return _model(
        [h.make_node("Reshape", ["X", "shape"], ["Y"], name="Reshape_0")],
        [h.make_tensor_value_info("X", T.FLOAT, ["batch", 2, 4])],
        [h.make_tensor_value_info("Y", T.FLOAT, [1, 4])],
        [numpy_helper.from_array(np.array([-1, 4], dtype=np.int64), "shape")],
    )


def stale_value_info() -> onnx.ModelProto:
    """value_info h declares [batch,8] where the graph computes [batch,4] (OL005)."""
    return _model(
        [h.make_node("Relu", ["X"], ["h"], name="Relu_0"), h.make_node("Neg", ["h"], ["Y"], name="Neg_0")],
        [h.make_tensor_value_info("X", T.FLOAT, ["batch", 4])],
        [h.make_tensor_value_info("Y", T.FLOAT, ["batch", 4])],
        value_info=[h.make_tensor_value_info("h", T.FLOAT, ["batch", 8])],
    )


def stale_output_rank() -> onnx.ModelProto:
    """Flatten computes [batch,12]; the output still declares the rank-3 input shape (OL004)."""
    return _model(
        [h.make_node("Flatten", ["X"], ["Y"], axis=1, name="Flatten_0")],
        [h.make_tensor_value_info("X", T.FLOAT, ["batch", 3, 4])],
        [h.make_tensor_value_info("Y", T.FLOAT, ["batch", 3, 4])],
    )


def stale_element_type() -> onnx.ModelProto:
    """Cast to INT64, output declared FLOAT (OL006)."""
    return _model(
        [h.make_node("Cast", ["X"], ["Y"], to=T.INT64, name="Cast_0")],
        [h.make_tensor_value_info("X", T.FLOAT, [3])],
        [h.make_tensor_value_info("Y", T.FLOAT, [3])],
    )


def if_branch_stale() -> onnx.ModelProto:
    """The then-branch output declares rank 0 where the branch computes [batch,4] (OL001 in a subgraph)."""
    then_graph = h.make_graph([h.make_node("Relu", ["X"], ["then_out"], name="then_Relu")], "then_branch", [],
                              [h.make_tensor_value_info("then_out", T.FLOAT, [])])
    else_graph = h.make_graph([h.make_node("Neg", ["X"], ["else_out"], name="else_Neg")], "else_branch", [],
                              [h.make_tensor_value_info("else_out", T.FLOAT, ["batch", 4])])
    return _model(
        [h.make_node("If", ["cond"], ["Y"], then_branch=then_graph, else_branch=else_graph, name="If_0")],
        [h.make_tensor_value_info("X", T.FLOAT, ["batch", 4]), h.make_tensor_value_info("cond", T.BOOL, [])],
        [h.make_tensor_value_info("Y", T.FLOAT, ["batch", 4])],
    )


def loop_body_stale() -> onnx.ModelProto:
    """A Loop body whose carried output declares [3,5] where it computes [3,4] (OL002 in a body)."""
    body = h.make_graph(
        [
            h.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
            h.make_node("Add", ["acc_in", "X"], ["acc_out"], name="body_Add"),
        ],
        "body",
        [h.make_tensor_value_info("iter", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("acc_in", T.FLOAT, [3, 4])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("acc_out", T.FLOAT, [3, 5])],
    )
    return _model(
        [h.make_node("Loop", ["trip", "cond", "init"], ["Y"], body=body, name="Loop_0")],
        [h.make_tensor_value_info("X", T.FLOAT, [3, 4]), h.make_tensor_value_info("init", T.FLOAT, [3, 4])],
        [h.make_tensor_value_info("Y", T.FLOAT, [3, 4])],
        [numpy_helper.from_array(np.array(3, dtype=np.int64), "trip"),
         numpy_helper.from_array(np.array(True), "cond")],
    )


def custom_op_output() -> onnx.ModelProto:
    """A custom-domain op no engine knows: its output shape is underivable (OL007, OL003)."""
    return _model(
        [h.make_node("MyOp", ["X"], ["Y"], domain="com.example", name="MyOp_0")],
        [h.make_tensor_value_info("X", T.FLOAT, [1, 8])],
        [h.make_tensor_value_info("Y", T.FLOAT, [1, 8])],
        extra_opsets=[("com.example", 1)],
    )


def symbolic_fallback() -> onnx.ModelProto:
    """com.microsoft Gelu: ONNX cannot infer it, ONNX Runtime's symbolic inference can."""
    return _model(
        [h.make_node("Gelu", ["X"], ["g"], domain="com.microsoft", name="Gelu_0"),
         h.make_node("Relu", ["g"], ["Y"], name="Relu_0")],
        [h.make_tensor_value_info("X", T.FLOAT, ["batch", 16])],
        [h.make_tensor_value_info("Y", T.FLOAT, [])],
        extra_opsets=[("com.microsoft", 1)],
    )


def weakly_typed_mlp(seed: int = 0) -> onnx.ModelProto:
    """The quantize seed: output Y declared rank 0 (really [batch,8]) behind a com.microsoft Gelu
    that ONNX's inference cannot type, upstream of float MatMul/Add computation."""
    rng = np.random.default_rng(seed)
    w1 = numpy_helper.from_array((rng.standard_normal((16, 32)) * 0.3).astype(np.float32), "W1")
    w2 = numpy_helper.from_array((rng.standard_normal((32, 8)) * 0.3).astype(np.float32), "W2")
    b2 = numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32), "B2")
    return _model(
        [
            h.make_node("MatMul", ["X", "W1"], ["hidden"], name="MatMul_1"),
            h.make_node("Gelu", ["hidden"], ["activated"], domain="com.microsoft", name="Gelu_1"),
            h.make_node("MatMul", ["activated", "W2"], ["projected"], name="MatMul_2"),
            h.make_node("Add", ["projected", "B2"], ["Y"], name="Add_2"),
        ],
        [h.make_tensor_value_info("X", T.FLOAT, ["batch", 16])],
        [h.make_tensor_value_info("Y", T.FLOAT, [])],
        [w1, w2, b2],
        extra_opsets=[("com.microsoft", 1)],
    )


def dynamo_style_conv(bias_declared: Sequence[int] = (4,)) -> onnx.ModelProto:
    """Conv + bias with ``value_info`` for its initializers, as ``torch.onnx.export(dynamo=True)`` writes.

    Inference never lists initializers, so only the tensors themselves prove these
    entries; ``bias_declared=(5,)`` makes the bias entry stale (OL005).
    """
    weight, bias = _weights("conv.weight", [4, 3, 3, 3]), _weights("conv.bias", [4], seed=1)
    return _model(
        [h.make_node("Conv", ["x", "conv.weight", "conv.bias"], ["conv"], pads=[1, 1, 1, 1], name="node_conv"),
         h.make_node("Relu", ["conv"], ["relu"], name="node_relu")],
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 8, 8])],
        [h.make_tensor_value_info("relu", T.FLOAT, ["batch", 4, 8, 8])],
        [weight, bias],
        value_info=[h.make_tensor_value_info("conv.weight", T.FLOAT, [4, 3, 3, 3]),
                    h.make_tensor_value_info("conv.bias", T.FLOAT, list(bias_declared)),
                    h.make_tensor_value_info("conv", T.FLOAT, ["batch", 4, 8, 8])],
    )


def with_external_data(folder: Path, name: str = "external.onnx") -> Path:
    """A stale rank-0 output whose weights live in ``<name>.data`` beside the model."""
    model = _model(
        [h.make_node("MatMul", ["X", "W"], ["Y"], name="MatMul_0")],
        [h.make_tensor_value_info("X", T.FLOAT, ["batch", 64])],
        [h.make_tensor_value_info("Y", T.FLOAT, [])],
        [_weights("W", [64, 256])],
    )
    path = folder / name
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=f"{name}.data", size_threshold=0)
    return path


# name -> (builder, what it shows); the healthy ones must stay untouched by --fix.
DEFECTS = {
    "stale_rank0_output": (stale_rank0_output, "OL001: output declared rank 0, graph computes [3,5]"),
    "rank0_feeding_reduce_mean": (rank0_feeding_reduce_mean, "OL001: stale rank-0 output feeding ReduceMean"),
    "concrete_dim_conflict": (concrete_dim_conflict, "OL002: [batch,5] declared, [batch,4] computed"),
    "pinned_batch": (pinned_batch, "OL002: output pins 1 where the input batch is dynamic"),
    "pinned_batch_through_reshape": (pinned_batch_through_reshape, "OL002: pinned 1 behind a Reshape(-1)"),
    "topk_untyped": (topk_untyped, "OL003: TopK K>axis leaves tensors untyped"),
    "stale_output_rank": (stale_output_rank, "OL004: Flatten output still declared rank 3"),
    "stale_value_info": (stale_value_info, "OL005: stale value_info entry"),
    "stale_element_type": (stale_element_type, "OL006: output declared FLOAT, graph computes INT64"),
    "custom_op_output": (custom_op_output, "OL007: custom op, output shape underivable"),
    "if_branch_stale": (if_branch_stale, "OL001 inside an If branch"),
    "loop_body_stale": (loop_body_stale, "OL002 inside a Loop body"),
    "symbolic_fallback": (symbolic_fallback, "OL001 found by ONNX Runtime's symbolic inference"),
    "weakly_typed_mlp": (weakly_typed_mlp, "OL001 + OL003: the quantize seed (plain INT8+FP16 fails)"),
}
HEALTHY = {
    "healthy_matmul": (healthy_matmul, "no defect"),
    "renamed_batch": (renamed_batch, "no defect: my_batch vs batch is a rename"),
}
