"""The whole model as a graph, for the editor's graph view: structure compactly, details on demand.

``model_graph`` sends every graph of a model (the main one and the bodies of If/Loop/Scan) as
columns: op types and tensor names once each, nodes as indices into them. It reads names only, one
pass over each graph's nodes, so a 100k-node model costs a fraction of a second and a few MB of
JSON; types, shapes and attributes are what ``node_details`` answers for the node the user clicks.
Each graph also carries the overview's groups (``graph_groups``: scopes, repeats, chains), as columns.
"""

from __future__ import annotations

from typing import Any

import onnx

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.neighbourhood import _Labeller
from onnx_lint.model.graphs import ONNX_DOMAINS, GraphScope, subgraph_attributes
from onnx_lint.server.graph_groups import group_columns

MAX_LIST = 8  # attribute list items shown before "…"
MAX_TEXT = 80  # characters of a string attribute shown


def _text(value: str | bytes) -> str:
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def graph_structure(scope: GraphScope) -> dict[str, Any]:
    """One graph as columns (see the module docstring); tensor ``-1`` is an omitted optional input.

    One pass over the nodes reads their inputs and outputs (op types and names come from the scan the
    lint already made); names are interned afterwards, in bulk (about 0.7 s for 100k nodes).
    """
    graph = scope.graph
    texts = scope.scan().texts  # op_type, domain, name of every node
    names: list[str] = []
    input_end: list[int] = []
    output_end: list[int] = []
    extend, end_in, end_out = names.extend, input_end.append, output_end.append
    for node in graph.node:
        extend(node.input)
        end_in(len(names))
        extend(node.output)
        end_out(len(names))
    declared = [v.name for v in graph.input] + [v.name for v in graph.output]
    tensors = dict.fromkeys(_text(n) for n in [*names, *declared] if n)
    index = {name: i for i, name in enumerate(tensors)}
    index[""] = -1
    ids = [index[_text(n)] for n in names]
    # Split the one list back into each node's inputs and outputs.
    inputs: list[int] = []
    outputs: list[int] = []
    inputs_end: list[int] = []
    outputs_end: list[int] = []
    start = 0
    for stop_in, stop_out in zip(input_end, output_end):
        inputs.extend(ids[start:stop_in])
        inputs_end.append(len(inputs))
        outputs.extend(ids[stop_in:stop_out])
        outputs_end.append(len(outputs))
        start = stop_out
    ops: dict[str, int] = {}
    node_op = [ops.setdefault(_text(op) if domain in ONNX_DOMAINS else f"{_text(domain)}.{_text(op)}", len(ops))
               for op, domain in zip(texts[0::3], texts[1::3])]
    subgraphs = [[i, segment, f"{scope.path}/node[{i}]/{segment}"]
                 for i in scope.special() for segment, _g in subgraph_attributes(graph.node[i])]
    initializers = [index[t.name] for t in graph.initializer if t.name in index]
    initializers += [index[t.values.name] for t in graph.sparse_initializer if t.values.name in index]
    node_names = [_text(n) for n in texts[2::3]]
    groups = group_columns(graph, node_names, list(ops), node_op, inputs, inputs_end, outputs, outputs_end,
                           len(tensors), initializers)
    return {
        "path": scope.path,
        "name": graph.name,
        "ops": list(ops),
        "nodeOp": node_op,
        "nodeName": node_names,
        "tensors": list(tensors),
        "inputs": inputs, "inputEnd": inputs_end,
        "outputs": outputs, "outputEnd": outputs_end,
        "graphInputs": [index[v.name] for v in graph.input],
        "graphOutputs": [index[v.name] for v in graph.output],
        "initializers": initializers,
        "subgraphs": subgraphs,
        **groups,
    }


def model_graph(scopes: list[GraphScope]) -> dict[str, Any]:
    """Every graph of a model, parents before children (``graph_structure`` each)."""
    graphs = [graph_structure(scope) for scope in scopes]
    return {"graphs": graphs, "nodes": sum(len(g["nodeOp"]) for g in graphs)}


def _attribute(attr: onnx.AttributeProto) -> str:
    """A short, readable value of one attribute (lists and strings cut, tensors and graphs summarised)."""
    kind = attr.type
    if kind == onnx.AttributeProto.INT:
        return str(attr.i)
    if kind == onnx.AttributeProto.FLOAT:
        return f"{attr.f:g}"
    if kind == onnx.AttributeProto.STRING:
        text = _text(attr.s)
        return repr(text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…")
    if kind in (onnx.AttributeProto.INTS, onnx.AttributeProto.FLOATS, onnx.AttributeProto.STRINGS):
        values = list(attr.ints or attr.floats or attr.strings)
        shown = [f"{v:g}" if isinstance(v, float) else repr(_text(v)) if isinstance(v, bytes) else str(v)
                 for v in values[:MAX_LIST]]
        return "[" + ", ".join(shown) + (f", … {len(values)} in all" if len(values) > MAX_LIST else "") + "]"
    if kind == onnx.AttributeProto.TENSOR:
        dims = "×".join(str(d) for d in attr.t.dims) or "scalar"
        return f"tensor {onnx.helper.tensor_dtype_to_np_dtype(attr.t.data_type).name} {dims}"
    if kind == onnx.AttributeProto.GRAPH:
        return f"graph '{attr.g.name}' ({len(attr.g.node)} nodes)"
    if kind == onnx.AttributeProto.GRAPHS:
        return f"{len(attr.graphs)} graphs"
    return onnx.AttributeProto.AttributeType.Name(kind).lower()


def node_details(ctx: LintContext, graph_path: str, index: int) -> dict[str, Any]:
    """One node for the graph view's details: attributes, and each input and output declared and
    derived (with the engine that derived it), the way the rules compared them."""
    scope = next((s for s in ctx.scopes if s.path == graph_path), None)
    if scope is None or not 0 <= index < len(scope.graph.node):
        raise ValueError(f"no node {index} in graph '{graph_path}'")
    node = scope.graph.node[index]
    declared = {v.name: v for values in (scope.graph.input, scope.graph.value_info, scope.graph.output)
                for v in values}
    labeller = _Labeller(ctx, scope, declared, set())
    initializers = {t.name for t in scope.graph.initializer}

    def tensor(name: str) -> dict[str, Any]:
        return {**labeller.edge(name), "initializer": name in initializers}

    return {
        "graph": graph_path, "index": index, "path": f"{graph_path}/node[{index}]",
        "name": node.name, "op": node.op_type, "domain": node.domain,
        "attributes": [{"name": a.name, "value": _attribute(a)} for a in node.attribute],
        "inputs": [tensor(n) for n in node.input if n],
        "outputs": [tensor(n) for n in node.output if n],
        "subgraphs": [f"{graph_path}/node[{index}]/{segment}" for segment, _g in subgraph_attributes(node)],
    }

