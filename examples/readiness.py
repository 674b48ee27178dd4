"""Small models that each break FP16 conversion, INT8 quantization or ONNX Runtime (OL102-OL108, OL2xx),
each with a healthy twin that differs only in the defect.

Used by ``make_examples.py``, by ``tests/test_readiness.py`` and by the fixture table ``tests/rule_fixtures.py``.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

IR_VERSION = 8
OPSET = 17


def _model(nodes, inputs, outputs, initializers=(), opset: int = OPSET, ir_version: int = IR_VERSION,
           extra_opsets=()) -> onnx.ModelProto:
    graph = h.make_graph(list(nodes), "readiness", list(inputs), list(outputs), list(initializers))
    opsets = [h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in extra_opsets]
    return h.make_model(graph, opset_imports=opsets, ir_version=ir_version, producer_name="onnx-lint-examples")


def _x(dims=(2, 4), elem_type: int = T.FLOAT, name: str = "X") -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem_type, list(dims))


def _const(name: str, values, dtype=np.float32) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


# -- OL102 checker errors ----------------------------------------------------------------------------
def checker_errors(bad: bool = True) -> onnx.ModelProto:
    """Two nodes the checker rejects (an unknown attribute, an op the opset lacks); it names only the first."""
    relu = h.make_node("Relu", ["X"], ["A"], name="relu")
    if bad:
        relu.attribute.append(h.make_attribute("alpha", 0.1))
    gelu = h.make_node("Gelu" if bad else "Sigmoid", ["A"], ["Y"], name="act")  # Gelu is opset 20
    return _model([relu, gelu], [_x()], [_x(name="Y")])


# -- OL103 unsorted nodes ----------------------------------------------------------------------------
def unsorted_nodes(bad: bool = True) -> onnx.ModelProto:
    """Relu reads what Neg, listed after it, produces: what FP16 converters leave behind."""
    nodes = [h.make_node("Neg", ["X"], ["A"], name="neg"), h.make_node("Relu", ["A"], ["Y"], name="relu")]
    return _model(list(reversed(nodes)) if bad else nodes, [_x(("batch", 4))], [_x(("batch", 4), name="Y")])


# -- OL104 undefined tensors -------------------------------------------------------------------------
def undefined_output(bad: bool = True) -> onnx.ModelProto:
    """Graph output 'Z' after the node that produced it was deleted."""
    nodes = [h.make_node("Relu", ["X"], ["Y"], name="relu")]
    if not bad:
        nodes.append(h.make_node("Neg", ["X"], ["Z"], name="neg"))
    return _model(nodes, [_x()], [_x(name="Y"), _x(name="Z")])


# -- OL105 duplicate node names ----------------------------------------------------------------------
def duplicate_node_name(bad: bool = True) -> onnx.ModelProto:
    return _model([h.make_node("Relu", ["X"], ["A"], name="layer"),
                   h.make_node("Neg", ["A"], ["Y"], name="layer" if bad else "layer_1")], [_x()], [_x(name="Y")])


# -- OL106 / OL107 ONNX Runtime ----------------------------------------------------------------------
def runtime_opset_too_new(bad: bool = True) -> onnx.ModelProto:
    """Imports com.microsoft version 2, which ONNX Runtime (1.32) does not load."""
    return _model([h.make_node("Relu", ["X"], ["Y"], name="relu")], [_x()], [_x(name="Y")],
                  extra_opsets=[("com.microsoft", 2 if bad else 1)])


def runtime_missing_kernel(bad: bool = True) -> onnx.ModelProto:
    """Relu on INT16: ONNX allows it since opset 14, ONNX Runtime's CPU provider has no such kernel."""
    elem = T.INT16 if bad else T.INT8
    return _model([h.make_node("Relu", ["X"], ["Y"], name="relu")], [_x(elem_type=elem)],
                  [_x(elem_type=elem, name="Y")])


def runtime_old_opset(bad: bool = True) -> onnx.ModelProto:
    """Add at opset 6: ONNX Runtime's Add kernels start at version 7."""
    return _model([h.make_node("Add", ["X", "X"], ["Y"], name="add")], [_x()], [_x(name="Y")],
                  opset=6 if bad else 7, ir_version=3)


# -- OL108 batch baked into a Reshape ------------------------------------------------------------------
def batch_baked_reshape(bad: bool = True) -> onnx.ModelProto:
    """x[batch,4,8] reshaped to [1,-1]: the exporter's batch of 1 is baked into the constant."""
    target = [1, -1] if bad else [0, -1]
    return _model([h.make_node("Reshape", ["X", "shape"], ["Y"], name="flatten")],
                  [_x(("batch", 4, 8))], [_x(("batch", 32) if not bad else (1, None), name="Y")],
                  [_const("shape", target, np.int64)])


# -- OL201 FP16 overflow -----------------------------------------------------------------------------
def fp16_overflow(bad: bool = True) -> onnx.ModelProto:
    """An attention mask of -1e9 (inf in FP16) and an epsilon of 1e-12 held in a Constant (0 in FP16)."""
    mask = -1e9 if bad else -1e4
    eps = 1e-12 if bad else 1e-5
    nodes = [h.make_node("Add", ["X", "mask"], ["A"], name="add_mask"),
             h.make_node("Constant", [], ["eps"], name="eps_const", value=_const("eps", eps)),
             h.make_node("Add", ["A", "eps"], ["Y"], name="add_eps")]
    return _model(nodes, [_x()], [_x(name="Y")], [_const("mask", np.full((2, 4), mask))])


# -- OL202-OL205 Q/DQ --------------------------------------------------------------------------------
def qdq(scale_q: float = 0.02, scale_dq: float | None = None, zero_point=0, zp_dtype=np.int8,
        quantized: bool = True) -> onnx.ModelProto:
    """X -> QuantizeLinear -> DequantizeLinear -> Relu (or plain Relu when ``quantized`` is False)."""
    if not quantized:
        return _model([h.make_node("Relu", ["X"], ["Y"], name="relu")], [_x()], [_x(name="Y")])
    scale_dq = scale_q if scale_dq is None else scale_dq
    inits = [_const("s_q", scale_q), _const("s_dq", scale_dq), _const("zp", zero_point, zp_dtype)]
    nodes = [h.make_node("QuantizeLinear", ["X", "s_q", "zp"], ["Xq"], name="quant"),
             h.make_node("DequantizeLinear", ["Xq", "s_dq", "zp"], ["Xd"], name="dequant"),
             h.make_node("Relu", ["Xd"], ["Y"], name="relu")]
    return _model(nodes, [_x()], [_x(name="Y")], inits)


def qdq_present(bad: bool = True) -> onnx.ModelProto:
    return qdq(quantized=bad)


def qdq_zero_scale(bad: bool = True) -> onnx.ModelProto:
    return qdq(scale_q=0.0 if bad else 0.02)


def qdq_pair_mismatch(bad: bool = True) -> onnx.ModelProto:
    return qdq(scale_dq=0.04 if bad else 0.02)


def qdq_uint8_zero_point(bad: bool = True) -> onnx.ModelProto:
    return qdq(zero_point=128 if bad else 0, zp_dtype=np.uint8 if bad else np.int8)


# name -> (builder taking ``bad``, what the defective model shows, the codes it must give)
READINESS = {
    "checker_errors": (checker_errors, "OL102: two checker errors, each at its node", {"OL102"}),
    "unsorted_nodes": (unsorted_nodes, "OL103: nodes out of topological order (fix: reorder)", {"OL103"}),
    "undefined_output": (undefined_output, "OL104: a graph output nothing produces", {"OL104"}),
    "duplicate_node_name": (duplicate_node_name, "OL105: two nodes named 'layer'", {"OL105"}),
    "runtime_opset_too_new": (runtime_opset_too_new, "OL106: com.microsoft opset 2 (ORT loads 1)", {"OL106"}),
    "runtime_missing_kernel": (runtime_missing_kernel, "OL107: Relu on INT16, no ORT CPU kernel", {"OL107"}),
    "runtime_old_opset": (runtime_old_opset, "OL107: Add at opset 6, ORT's kernels start at 7", {"OL107"}),
    "batch_baked_reshape": (batch_baked_reshape, "OL108: Reshape to [1,-1] with a dynamic batch", {"OL108"}),
    "fp16_overflow": (fp16_overflow, "OL201: mask -1e9 and epsilon 1e-12 do not survive FP16", {"OL201"}),
    "qdq_present": (qdq_present, "OL202: already quantized", {"OL202"}),
    "qdq_zero_scale": (qdq_zero_scale, "OL203: a zero Q/DQ scale", {"OL202", "OL203"}),
    "qdq_pair_mismatch": (qdq_pair_mismatch, "OL204: Q scale 0.02, DQ scale 0.04", {"OL202", "OL204"}),
    "qdq_uint8_zero_point": (qdq_uint8_zero_point, "OL205: uint8 zero-point (TensorRT)", {"OL202", "OL205"}),
}
