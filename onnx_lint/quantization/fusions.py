"""FP32 scales where ONNX Runtime fuses Q/DQ into kernels that refuse FP16 scales.

At its default optimization level ORT fuses ``DequantizeLinear -> Concat ->
QuantizeLinear`` into ``QLinearConcat``, whose kernel accepts only float32
scales: an INT8+FP16 model with FP16 scales there fails to load
(``INVALID_GRAPH``), though it runs at BASIC. Leaving the Concat out of INT8 does
not help, because its producers' and consumers' Q/DQ stay and still form the
pattern. So such an island gets its own DequantizeLinear nodes and scales in
float32, and the fused op computes in float32 between them: ORT then fuses it
into a real INT8 kernel, and at lower levels it runs as plain float32.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import onnx
from onnx import numpy_helper

FUSED_BY_DEFAULT = frozenset({"Concat"})  # FIELD-NOTES: QLinearConcat rejects FP16 scales in ORT 1.32


def fp32_islands(model: onnx.ModelProto, op_types: Iterable[str]) -> list[str]:
    """Rewrite every ``DQ -> op -> Q`` island of ``op_types`` to float32 scales; returns the node names."""
    wanted = set(op_types)
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output if o}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    inits = {i.name: i for i in graph.initializer}
    outputs = {o.name for o in graph.output}
    rewritten: list[str] = []
    fp32_scales: dict[str, str] = {}

    def scale32(name: str) -> str | None:
        tensor = inits.get(name)
        if tensor is None or tensor.data_type not in (onnx.TensorProto.FLOAT16, onnx.TensorProto.FLOAT):
            return None
        if tensor.data_type == onnx.TensorProto.FLOAT:
            return name
        if name not in fp32_scales:
            copy = numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float32), f"{name}_fp32")
            graph.initializer.append(copy)
            inits[copy.name] = copy
            fp32_scales[name] = copy.name
        return fp32_scales[name]

    for node in list(graph.node):
        if node.op_type not in wanted or len(node.output) != 1 or node.output[0] in outputs:
            continue
        feeds = [producer.get(i) for i in node.input if i]
        users = consumers.get(node.output[0], [])
        if not feeds or not users or any(f is None or f.op_type != "DequantizeLinear" for f in feeds):
            continue
        if any(u.op_type != "QuantizeLinear" for u in users):
            continue
        if any(scale32(f.input[1]) is None for f in feeds if f) or any(scale32(u.input[1]) is None for u in users):
            continue
        new_inputs = []
        for name in node.input:
            dq = producer[name]
            twin = onnx.NodeProto()
            twin.CopyFrom(dq)
            twin.name = f"{dq.name}_fp32_for_{node.name}"
            twin.input[1] = scale32(dq.input[1]) or dq.input[1]
            twin.output[0] = f"{dq.output[0]}_fp32_for_{node.name}"
            graph.node.insert(list(graph.node).index(node), twin)
            new_inputs.append(twin.output[0])
        del node.input[:]
        node.input.extend(new_inputs)
        for user in users:
            user.input[1] = scale32(user.input[1]) or user.input[1]
        _forget_type(graph, node.output[0])
        rewritten.append(node.name)
    _drop_unused_dequantize(graph)
    return rewritten


def _forget_type(graph: onnx.GraphProto, name: str) -> None:
    """The tensor is float32 now; an FP16 value_info would contradict inference."""
    keep = [v for v in graph.value_info if v.name != name]
    if len(keep) != len(graph.value_info):
        del graph.value_info[:]
        graph.value_info.extend(keep)


def _drop_unused_dequantize(graph: onnx.GraphProto) -> None:
    used = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
    dead = [n for n in graph.node if n.op_type == "DequantizeLinear" and not any(o in used for o in n.output)]
    for node in dead:
        graph.node.remove(node)
