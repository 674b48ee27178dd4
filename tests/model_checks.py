"""Properties every --fix must keep, shared by the corpus tests and the fuzz target."""

from __future__ import annotations

import onnx


def computation(model: onnx.ModelProto) -> list[bytes]:
    """What the model computes: every node (with attributes and subgraphs), initializer and function.

    A fix edits declarations and may reorder nodes (OL103), but never changes a node's content,
    so this must be byte-identical before and after: nodes are compared as a sorted list, in
    every graph. Subgraph declarations live inside node attributes; they are compared with
    their own ``value_info``/``output`` stripped, since a fix may correct them.
    """
    parts: list[bytes] = []
    for tensor in list(model.graph.initializer):
        parts.append(tensor.SerializeToString())
    for sparse in model.graph.sparse_initializer:
        parts.append(sparse.SerializeToString())
    for function in model.functions:
        parts.append(function.SerializeToString())
    parts.extend(sorted(_node_without_declarations(node).SerializeToString() for node in model.graph.node))
    return parts


def _node_without_declarations(node: onnx.NodeProto) -> onnx.NodeProto:
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    for attr in copy.attribute:
        graphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
        for graph in graphs:
            _strip_declarations(graph)
    return copy


def _strip_declarations(graph: onnx.GraphProto) -> None:
    graph.ClearField("value_info")
    for value in list(graph.output) + list(graph.input):
        value.ClearField("type")
    for node in graph.node:
        for attr in node.attribute:
            for sub in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                _strip_declarations(sub)
    ordered = sorted(graph.node, key=lambda n: n.SerializeToString())  # order is not content (OL103 sorts)
    copies = [onnx.NodeProto.FromString(n.SerializeToString()) for n in ordered]
    del graph.node[:]
    graph.node.extend(copies)


def checker_error(model: onnx.ModelProto | str) -> str | None:
    """The full checker's complaint, or None; a path is checked as a file (external data resolves)."""
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as exc:  # the checker raises several types
        return f"{type(exc).__name__}: {exc}"
    return None
