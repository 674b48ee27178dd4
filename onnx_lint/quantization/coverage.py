"""How much of the model computes in INT8: the share of multiply-accumulates, not of nodes.

A count of Q/DQ nodes reads like "quantized less" when placement keeps Q/DQ off the
tensors that gain nothing from them; what INT8 buys is measured in the work it takes
over. Each Conv, ConvTranspose, MatMul and Gemm is weighed by its multiply-accumulates
at the calibration shapes (ONNX's inference with the inputs pinned to the first
sample's shapes), and counts as INT8 when both its data and its weight input are
dequantized INT8 in the written model. Every compute node left in FP16 is listed with
the reason placement gave for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import onnx

from onnx_lint.quantization.placement import HEAD_OPS, inferred_shapes

NOT_QUANTIZED = "ONNX Runtime's quantizer left it in float (no calibrated range or an unsupported form)"


def node_macs(node: onnx.NodeProto, shapes: dict[str, list[int]], weights: dict[str, tuple[int, ...]]) -> int | None:
    """Multiply-accumulates of one compute node at these shapes; ``None`` where a shape is unknown."""

    def shape(name: str) -> list[int] | None:
        found = list(weights[name]) if name in weights else shapes.get(name)
        return found if found and all(d > 0 for d in found) else None

    out = shape(node.output[0]) if node.output else None
    a = shape(node.input[0]) if node.input else None
    b = shape(node.input[1]) if len(node.input) > 1 else None
    if out is None or b is None:
        return None
    attrs = {x.name: x for x in node.attribute}
    if node.op_type == "Conv":  # every output element: C_in / group x kernel (the weight's dims 1+)
        return math.prod(out) * math.prod(b[1:])
    if node.op_type == "ConvTranspose":  # every input element scatters into C_out / group x kernel (dims 1+)
        return math.prod(a) * (b[1] * math.prod(b[2:])) if a else None
    if node.op_type == "MatMul":
        return math.prod(out) * a[-1] if a else None
    if node.op_type == "Gemm":
        transposed = attrs["transA"].i if "transA" in attrs else 0
        return math.prod(out) * (a[0] if transposed else a[-1]) if a else None
    return None


def node_macs_by_name(model: onnx.ModelProto, shapes: dict[str, list[int]], names: set[str]) -> dict[str, int]:
    """``node_macs`` of the named nodes of ``model``'s graph, 0 where unknown (a pooling, an unsized node)."""
    weights = {i.name: tuple(i.dims) for i in model.graph.initializer}
    return {n.name: node_macs(n, shapes, weights) or 0 for n in model.graph.node if n.name in names}


def int8_coverage(fp32: onnx.ModelProto, written: onnx.ModelProto, input_shapes: dict[str, tuple[int, ...]],
                  kept_in_float: Sequence[dict], inferred: dict[str, list[int]] | None = None) -> dict:
    """The INT8 share of the compute nodes' multiply-accumulates, per op type, and the FP16 ones with why.

    ``inferred`` is ``inferred_shapes(fp32, input_shapes)`` where the caller has it already (the pipeline
    infers once for placement and this report)."""
    shapes = inferred if inferred is not None else inferred_shapes(fp32, input_shapes)
    weights = {i.name: tuple(i.dims) for i in fp32.graph.initializer}
    dequantized = {o for n in written.graph.node if n.op_type == "DequantizeLinear" for o in n.output}
    int8 = {n.name for n in written.graph.node
            if n.op_type in HEAD_OPS and len(n.input) > 1 and n.input[0] in dequantized and n.input[1] in dequantized}
    reasons = {name: kept["reason"] for kept in kept_in_float for name in kept.get("nodes", [])}
    total = quantized = 0
    unknown: list[str] = []
    by_type: dict[str, dict[str, int]] = {}
    in_fp16: list[dict] = []
    for node in fp32.graph.node:
        if node.op_type not in HEAD_OPS:
            continue
        macs = node_macs(node, shapes, weights)
        label = node.name or f"<unnamed {node.op_type}>"
        if macs is None:
            unknown.append(label)
            continue
        counts = by_type.setdefault(node.op_type, {"macs": 0, "int8_macs": 0, "nodes": 0, "int8_nodes": 0})
        counts["macs"] += macs
        counts["nodes"] += 1
        total += macs
        if node.name in int8:
            quantized += macs
            counts["int8_macs"] += macs
            counts["int8_nodes"] += 1
        else:
            in_fp16.append({"node": label, "op_type": node.op_type, "macs": macs,
                            "reason": reasons.get(node.name, NOT_QUANTIZED)})
    shares = {op: {**counts, "share": counts["int8_macs"] / counts["macs"] if counts["macs"] else 0.0}
              for op, counts in by_type.items()}
    in_fp16.sort(key=lambda entry: -entry["macs"])
    return {"int8_mac_share": quantized / total if total else 0.0, "macs": total, "int8_macs": quantized,
            "by_op_type": shares, "fp16_compute_nodes": in_fp16, "unknown_shape_nodes": unknown,
            "shapes": {name: list(shape) for name, shape in input_shapes.items()}}
