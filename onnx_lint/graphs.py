"""Walking a model's graphs, including the subgraphs of If, Loop and Scan.

A graph is addressed by a *graph path*: ``graph`` for the main graph,
``graph/node[4]/then_branch`` for a subgraph attribute of node 4, and so on.
Paths are what diagnostics print and what fix edits use to find their target.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import onnx

ROOT = "graph"
# Only these standard ops carry graph attributes; any node of another domain may.
SUBGRAPH_OPS = frozenset({"If", "Loop", "Scan", "SequenceMap"})
# Standard ops whose attributes may hold a tensor (and so external data).
TENSOR_ATTRIBUTE_OPS = frozenset({"Constant", "ConstantOfShape"})
STANDARD_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml"})
_SPECIAL_OPS = SUBGRAPH_OPS | TENSOR_ATTRIBUTE_OPS
# An attribute name may hold any character but the path's own separators (model_io refuses those).
_SEGMENT = re.compile(r"node\[(\d+)\]/([^/\[\]]+)(?:\[(\d+)\])?")


@dataclass
class GraphScope:
    """One graph with its path, its parent scope and its node's position there."""

    path: str
    graph: onnx.GraphProto
    parent: GraphScope | None = None
    owner_node: onnx.NodeProto | None = None
    _producers: dict[str, int] | None = field(default=None, repr=False)
    _scan: NodeScan | None = field(default=None, repr=False)

    def scan(self) -> NodeScan:
        """The one pass over this graph's nodes that everything else reuses."""
        if self._scan is None:
            self._scan = scan_nodes(self.graph, _SPECIAL_OPS)
        return self._scan

    def special(self) -> list[int]:
        """Nodes that may carry graph or tensor attributes."""
        return self.scan().special

    def producers(self) -> dict[str, int]:
        """Tensor name -> index of the node producing it in this graph."""
        if self._producers is None:
            self._producers = {
                out: i for i, node in enumerate(self.graph.node) for out in node.output if out
            }
        return self._producers



def subgraph_attributes(node: onnx.NodeProto) -> Iterator[tuple[str, onnx.GraphProto]]:
    """(segment, graph) for every graph-valued attribute of a node."""
    for attr in node.attribute:
        if attr.type == onnx.AttributeProto.GRAPH:
            yield attr.name, attr.g
        elif attr.type == onnx.AttributeProto.GRAPHS:
            for j, g in enumerate(attr.graphs):
                yield f"{attr.name}[{j}]", g


@dataclass
class NodeScan:
    """What one pass over a graph's nodes collects (on a 100k-node model each pass costs ~0.1 s)."""

    special: list[int]  # nodes with one of the special op types or of a non-standard domain
    texts: list  # op_type, domain and name of every node (``bytes`` where protobuf found invalid UTF-8)
    outputs: list  # every node output, '' (an omitted optional output) included


def scan_nodes(graph: onnx.GraphProto, op_types: frozenset[str]) -> NodeScan:
    special: list[int] = []
    texts: list = []
    outputs: list = []
    add, extend, mark = texts.append, outputs.extend, special.append
    for i, node in enumerate(graph.node):
        op_type, domain = node.op_type, node.domain
        add(op_type)
        add(domain)
        add(node.name)
        extend(node.output)
        if op_type in op_types or domain not in STANDARD_DOMAINS:
            mark(i)
    return NodeScan(special, texts, outputs)


def iter_scopes(model: onnx.ModelProto) -> Iterator[GraphScope]:
    """Every graph of the model, parents before children.

    Only nodes that can hold graphs have their attributes read: on a 100k-node
    model that is the difference between one fast pass and a slow one.
    """
    stack = [GraphScope(ROOT, model.graph)]
    while stack:
        scope = stack.pop()
        yield scope
        children = []
        for i in scope.special():
            node = scope.graph.node[i]
            if node.op_type in TENSOR_ATTRIBUTE_OPS and node.domain in STANDARD_DOMAINS:
                continue
            for segment, g in subgraph_attributes(node):
                children.append(GraphScope(f"{scope.path}/node[{i}]/{segment}", g, scope, node))
        stack.extend(reversed(children))


def scopes_at(model: onnx.ModelProto, paths: list[str]) -> list[GraphScope]:
    """The graphs at ``paths`` in a model with the same nodes (a stripped or inferred copy)."""
    return [GraphScope(path, resolve_graph(model, path)) for path in paths]


def rebind_scopes(scopes: list[GraphScope], model: onnx.ModelProto) -> list[GraphScope]:
    """The same scopes over ``model``, a copy with the same nodes (a fix edits annotations only).

    Parents and owner nodes point into ``model``; each graph's node scan and producer
    table carry over, since they only read nodes (on 100k nodes a scan costs ~0.1 s).
    """
    rebound: dict[str, GraphScope] = {}
    for scope in scopes:
        parent = rebound[scope.parent.path] if scope.parent is not None else None
        owner = None
        if parent is not None:
            match = _SEGMENT.match(scope.path, len(parent.path) + 1)
            owner = parent.graph.node[int(match.group(1))] if match else None
        rebound[scope.path] = GraphScope(scope.path, resolve_graph(model, scope.path), parent, owner,
                                         scope._producers, scope._scan)
    return list(rebound.values())


def resolve_graph(model: onnx.ModelProto, path: str) -> onnx.GraphProto:
    """The graph a path names; ``KeyError`` if the model has no such graph."""
    if path == ROOT:
        return model.graph
    if not path.startswith(ROOT + "/"):
        raise KeyError(path)
    graph = model.graph
    rest = path[len(ROOT) + 1 :]
    pos = 0
    while pos < len(rest):
        match = _SEGMENT.match(rest, pos)
        if not match:
            raise KeyError(path)
        index, attr_name, sub = int(match.group(1)), match.group(2), match.group(3)
        if index >= len(graph.node):
            raise KeyError(path)
        found = None
        for attr in graph.node[index].attribute:
            if attr.name != attr_name:
                continue
            if sub is None and attr.type == onnx.AttributeProto.GRAPH:
                found = attr.g
            elif sub is not None and attr.type == onnx.AttributeProto.GRAPHS and int(sub) < len(attr.graphs):
                found = attr.graphs[int(sub)]
        if found is None:
            raise KeyError(path)
        graph = found
        pos = match.end() + 1
    return graph


def consumed_names(graph: onnx.GraphProto) -> set[str]:
    """Tensor names read by a graph's nodes, including reads from inside subgraphs."""
    names: set[str] = set()
    for node in graph.node:
        names.update(i for i in node.input if i)
        for _, sub in subgraph_attributes(node):
            names.update(consumed_names(sub))
    return names


def cyclic_nodes(graph: onnx.GraphProto) -> list[int]:
    """Indices of nodes that sit on (or behind) a dependency cycle; empty if acyclic.

    The common case, a graph already in topological order, costs one pass.
    """
    produced = {out: i for i, node in enumerate(graph.node) for out in node.output if out}
    if all(produced.get(name, -1) < i for i, node in enumerate(graph.node) for name in node.input):
        return []
    pending = [0] * len(graph.node)
    consumers: dict[int, list[int]] = {}
    for i, node in enumerate(graph.node):
        deps = {produced[name] for name in node.input if name in produced}
        pending[i] = len(deps)
        for dep in deps:
            consumers.setdefault(dep, []).append(i)
    ready = [i for i, count in enumerate(pending) if count == 0]
    while ready:
        index = ready.pop()
        for user in consumers.get(index, ()):
            pending[user] -= 1
            if pending[user] == 0:
                ready.append(user)
    return [i for i, count in enumerate(pending) if count > 0]
