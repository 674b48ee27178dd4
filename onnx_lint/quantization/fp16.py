"""FP16 conversion of a QDQ model, keeping Q/DQ consistent and the model sorted.

ONNX Runtime's converter (``onnxruntime.transformers.float16``) turns the
remaining float computation, Q/DQ scales included, into FP16 and inserts casts
at float32 graph inputs and outputs; it can leave the inserted Cast nodes after
their consumers, which ONNX Runtime tolerates but the checker rejects, so the
nodes are put back in topological order afterwards.
"""

from __future__ import annotations

import logging

import onnx

from onnx_lint.errors import OnnxLintError
from onnx_lint.graphs import subgraph_attributes


class ConversionError(OnnxLintError):
    """A conversion step failed; the message says which and why."""


def convert_to_fp16(model: onnx.ModelProto, keep_io_types: bool = True,
                    keep_nodes: tuple[str, ...] = ()) -> onnx.ModelProto:
    """``keep_nodes`` (quantize's --exclude-nodes) stay FP32, and so do initializers only they read:
    what OL201 suggests for constants FP16 cannot hold."""
    from onnxruntime.transformers.float16 import convert_float_to_float16

    logging.getLogger("onnxruntime.transformers.float16").setLevel(logging.ERROR)
    try:
        converted = convert_float_to_float16(model, keep_io_types=keep_io_types, disable_shape_infer=False,
                                             node_block_list=list(keep_nodes))
    except Exception as exc:
        raise ConversionError(f"FP16 conversion failed: {type(exc).__name__}: {exc}") from None
    sort_topologically(converted.graph)
    return converted


def sort_topologically(graph: onnx.GraphProto) -> None:
    """Reorder nodes so every input is produced before it is read; stable for sorted graphs."""
    import heapq

    nodes = list(graph.node)
    for node in nodes:
        for _, sub in subgraph_attributes(node):
            sort_topologically(sub)
    producer = {out: i for i, node in enumerate(nodes) for out in node.output if out}
    users: dict[int, list[int]] = {}
    waiting = [0] * len(nodes)
    for i, node in enumerate(nodes):
        deps = {producer[name] for name in set(node.input) | _implicit_inputs(node) if name in producer}
        deps.discard(i)
        waiting[i] = len(deps)
        for dep in deps:
            users.setdefault(dep, []).append(i)
    ready = [i for i, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        index = heapq.heappop(ready)
        order.append(index)
        for user in users.get(index, ()):
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, user)
    if len(order) != len(nodes):
        raise ConversionError("the converted model has a dependency cycle")
    if order != list(range(len(nodes))):
        del graph.node[:]
        graph.node.extend(nodes[i] for i in order)


def _implicit_inputs(node: onnx.NodeProto) -> set[str]:
    """Names a node's subgraphs read from the enclosing graph."""
    names: set[str] = set()
    for _, sub in subgraph_attributes(node):
        local = {v.name for v in sub.input} | {i.name for i in sub.initializer}
        for inner in sub.node:
            local.update(inner.output)
        for inner in sub.node:
            names.update(i for i in inner.input if i and i not in local)
            names.update(n for n in _implicit_inputs(inner) if n not in local)
    return names
