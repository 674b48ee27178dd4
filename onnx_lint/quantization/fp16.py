"""FP16 conversion of a QDQ model, keeping Q/DQ consistent and the model sorted.

ONNX Runtime's converter (``onnxruntime.transformers.float16``) turns the
remaining float computation, Q/DQ scales included, into FP16 and inserts casts
at float32 graph inputs and outputs; it can leave the inserted Cast nodes after
their consumers, which ONNX Runtime tolerates but the checker rejects, so the
nodes are put back in topological order afterwards.
"""

from __future__ import annotations

import onnx

from onnx_lint.base.errors import OnnxLintError
from onnx_lint.model.graphs import sort_topologically
from onnx_lint.quantization.quiet import quiet


class ConversionError(OnnxLintError):
    """A conversion step failed; the message says which and why."""


def convert_to_fp16(model: onnx.ModelProto, keep_io_types: bool = True,
                    keep_nodes: tuple[str, ...] = ()) -> onnx.ModelProto:
    """``keep_nodes`` (quantize's --exclude-nodes) stay FP32, and so do initializers only they read:
    what OL201 suggests for constants FP16 cannot hold."""
    from onnxruntime.transformers.float16 import convert_float_to_float16

    try:
        with quiet():  # its warnings, for this thread only: the logger's level is the process's
            converted = convert_float_to_float16(model, keep_io_types=keep_io_types, disable_shape_infer=False,
                                                 node_block_list=list(keep_nodes))
    except Exception as exc:
        raise ConversionError(f"FP16 conversion failed: {type(exc).__name__}: {exc}") from None
    _drop_fp16_round_trips(converted.graph, set(keep_nodes))
    try:
        sort_topologically(converted.graph)
    except ValueError as exc:
        raise ConversionError(f"the converted model has a dependency cycle: {exc}") from None
    return converted


def _drop_fp16_round_trips(graph: onnx.GraphProto, keep_nodes: set[str]) -> None:
    """A float32 value cast to FP16 and straight back (the converter's casts at a graph output that a node
    kept in FP32 computes) loses what FP16 cannot hold: a value beyond 65504 becomes inf. The second cast
    reads the float32 value instead; the first goes when nothing else reads it."""
    to_float, to_half = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16
    producer = {o: n for n in graph.node for o in n.output if o}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)

    def cast_to(node: onnx.NodeProto | None) -> int | None:
        if node is None or node.op_type != "Cast":
            return None
        return next((a.i for a in node.attribute if a.name == "to"), None)

    def float32(name: str) -> bool:
        source = producer.get(name)
        return source is not None and (source.name in keep_nodes or cast_to(source) == to_float)

    for first in list(graph.node):
        if cast_to(first) != to_half or not float32(first.input[0]):
            continue
        for second in readers.get(first.output[0], []):
            if cast_to(second) == to_float:
                second.input[0] = first.input[0]
        if not any(first.output[0] in n.input for n in graph.node) and first.output[0] not in {
                o.name for o in graph.output}:
            graph.node.remove(first)
