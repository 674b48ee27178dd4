"""The neighbourhood of a finding in its graph: what the editor draws around a diagnostic.

Two layers. ``GraphIndex`` + ``neighbourhood`` walk producers and consumers a
few steps out from the finding; the walk is bounded by a node budget and a
per-tensor fan-out cap, so once the index exists (one pass over the graph) it
costs the same on a 100-node and a 100k-node model, even where one tensor feeds
thousands of nodes. ``finding_graph`` turns such a walk into plain data for a
drawing: nodes, and edges labelled with the declared and the derived type and
shape of their tensor, the stale ones marked, and the engine that derived them.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import onnx

from onnx_lint.engines.engine import Engine
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.declarations import Declaration
from onnx_lint.lint.diagnostics import Location
from onnx_lint.model.graphs import GraphScope
from onnx_lint.model.shapes import format_info, value_tensor_info

MAX_NODES = 24  # nodes in one drawing: more is unreadable in an editor pane anyway
MAX_DEPTH = 3  # steps out from the finding
MAX_FANOUT = 6  # producers/consumers followed per tensor (a shared weight can feed every layer)

_ITEM = re.compile(r"^(?P<graph>.+)/(?P<kind>output|input|value_info|node|initializer)\[(?P<index>\d+)\]$")


@dataclass(frozen=True)
class GraphIndex:
    """Who produces and who consumes each tensor of one graph, and what it declares for each."""

    producers: dict[str, int]
    consumers: dict[str, list[int]]
    declared: dict[str, onnx.ValueInfoProto] = field(default_factory=dict)

    @classmethod
    def build(cls, graph: onnx.GraphProto) -> GraphIndex:
        producers: dict[str, int] = {}
        consumers: dict[str, list[int]] = {}
        for i, node in enumerate(graph.node):
            for name in node.output:
                if name:
                    producers[name] = i
            for name in node.input:
                if name:
                    consumers.setdefault(name, []).append(i)
        declared: dict[str, onnx.ValueInfoProto] = {}
        for values in (graph.input, graph.value_info, graph.output):  # an output's own entry wins
            for value in values:
                declared[value.name] = value
        return cls(producers, consumers, declared)


@dataclass
class Neighbourhood:
    """The nodes to draw (graph node indices, nearest first) and what the bounds left out."""

    nodes: list[int]
    hidden: dict[int, int] = field(default_factory=dict)  # node -> neighbours not drawn
    examined: int = 0  # node visits: bounded by the budget, never by the graph's size

    @property
    def truncated(self) -> bool:
        return bool(self.hidden)


def neighbourhood(graph: onnx.GraphProto, index: GraphIndex, nodes: Iterable[int] = (),
                  tensors: Iterable[str] = (), depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES,
                  max_fanout: int = MAX_FANOUT) -> Neighbourhood:
    """Breadth-first from the given nodes and the producers/consumers of the given tensors."""
    chosen: dict[int, int] = {}  # node -> distance
    queue: deque[int] = deque()
    hidden: dict[int, int] = {}
    examined = 0

    def add(node: int, distance: int) -> bool:
        if node in chosen:
            return True
        if len(chosen) >= max_nodes:
            return False
        chosen[node] = distance
        queue.append(node)
        return True

    for node in nodes:
        add(node, 0)
    for name in tensors:
        if name in index.producers:
            add(index.producers[name], 0)
        for consumer in index.consumers.get(name, ())[:max_fanout]:
            add(consumer, 0)
    while queue:
        current = queue.popleft()
        examined += 1
        distance = chosen[current]
        node = graph.node[current]
        neighbours: list[int] = []
        left_out = 0
        for name in node.input:
            if name in index.producers:
                neighbours.append(index.producers[name])
        for name in node.output:
            followers = index.consumers.get(name, ())
            neighbours.extend(followers[:max_fanout])
            left_out += max(0, len(followers) - max_fanout)
        for neighbour in neighbours:
            if neighbour in chosen:
                continue
            if distance >= depth or not add(neighbour, distance + 1):
                left_out += 1
        if left_out:
            hidden[current] = left_out
    order = sorted(chosen, key=lambda n: (chosen[n], n))
    return Neighbourhood(order, hidden, examined)


# -- the drawing's data ------------------------------------------------------------------

def split_location(path: str) -> tuple[str, str | None, int | None]:
    """``graph/node[4]/then_branch/output[0]`` -> (graph path, item kind, item index)."""
    match = _ITEM.match(path)
    if match is None:
        return path, None, None
    return match["graph"], match["kind"], int(match["index"])


@dataclass
class _Labeller:
    """Declared vs derived for each tensor of one graph, the way the rules compared them."""

    ctx: LintContext
    scope: GraphScope
    declared: dict[str, onnx.ValueInfoProto]
    untyped: set[str]
    compared: dict[str, Declaration] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.compared = {d.name: d for d in self.ctx.declarations if d.graph == self.scope.path}

    def edge(self, name: str) -> dict[str, Any]:
        decl = self.compared.get(name)
        if decl is not None:
            derived, engine = decl.derived, decl.engine
            stale = decl.shape_stale or decl.type_mismatch
        else:
            derived, engine = self.ctx.oracle.derived(self.scope.path, name)
            stale = False
        value = self.declared.get(name)
        declared = value_tensor_info(value)
        untyped = name in self.untyped
        if untyped:
            engine = Engine.ONNX  # the engine that left it untyped, whatever a fallback found later
        return {
            "tensor": name,
            "declared": format_info(declared) if name in self.declared else None,
            "derived": "<no type>" if untyped else (format_info(derived) if derived is not None else None),
            "engine": engine,
            "stale": stale or untyped,
        }


def finding_graph(ctx: LintContext, location: Location, max_nodes: int = MAX_NODES, depth: int = MAX_DEPTH,
                  indexes: dict[str, GraphIndex] | None = None) -> dict[str, Any]:
    """The drawing of a finding's neighbourhood as JSON-ready data (see the module docstring).

    ``indexes`` keeps each graph's index between calls on the same model: building one is the only
    step whose cost grows with the graph (about a second for 100k nodes); the walk does not.
    """
    graph_path, kind, item = split_location(location.path)
    scope = next((s for s in ctx.scopes if s.path == graph_path), None)
    if scope is None:
        raise ValueError(f"no graph at '{graph_path}' in this model")
    graph = scope.graph
    indexes = {} if indexes is None else indexes
    if graph_path not in indexes:
        indexes[graph_path] = GraphIndex.build(graph)
    index = indexes[graph_path]
    seed_nodes: list[int] = []
    seed_tensors: list[str] = []
    if kind == "node" and item is not None and item < len(graph.node):
        seed_nodes.append(item)
    if location.tensor:
        seed_tensors.append(location.tensor)
        if location.tensor in index.producers:  # the node that computes the tensor is where to look
            seed_nodes.append(index.producers[location.tensor])
    untyped = {t for g in ctx.untyped_groups if g.graph == graph_path and
               (g.node_index in seed_nodes or location.tensor in g.tensors) for t in g.tensors}
    hood = neighbourhood(graph, index, seed_nodes, seed_tensors, depth=depth, max_nodes=max_nodes)
    labeller = _Labeller(ctx, scope, index.declared, untyped)
    drawn = set(hood.nodes)
    focus_tensors = set(seed_tensors)
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    terminals: dict[str, dict[str, Any]] = {}
    graph_inputs = {v.name for v in graph.input}
    graph_outputs = {v.name for v in graph.output}

    def terminal(kind: str, name: str) -> str:
        key = f"{kind}:{name}"
        if key not in terminals:
            terminals[key] = {"id": key, "kind": kind, "label": name, "op": kind,
                              "focus": name in focus_tensors, "hidden": 0}
        return key

    for i in hood.nodes:
        node = graph.node[i]
        nodes.append({"id": f"node:{i}", "kind": "node", "label": node.name or node.op_type, "op": node.op_type,
                      "domain": node.domain, "path": f"{graph_path}/node[{i}]", "focus": i in seed_nodes,
                      "hidden": hood.hidden.get(i, 0)})
        for name in node.input:
            if name in index.producers and index.producers[name] in drawn:
                edges.append({"from": f"node:{index.producers[name]}", "to": f"node:{i}", **labeller.edge(name)})
            elif name in graph_inputs:
                edges.append({"from": terminal("input", name), "to": f"node:{i}", **labeller.edge(name)})
            elif name in focus_tensors:  # an initializer the finding is about (others are not drawn)
                edges.append({"from": terminal("initializer", name), "to": f"node:{i}", **labeller.edge(name)})
        for name in node.output:
            if name in graph_outputs:
                edges.append({"from": f"node:{i}", "to": terminal("output", name), **labeller.edge(name)})
    if location.tensor and location.tensor not in index.producers and kind in ("output", "input", None):
        # A tensor nothing produces (a graph input, or an output no node writes): draw it alone.
        terminal("output" if kind == "output" else "input", location.tensor)
    for edge in edges:
        edge["focus"] = edge["tensor"] in focus_tensors or (edge["stale"] and bool(untyped))
    return {
        "graph": graph_path,
        "location": location.display(),
        "nodes": nodes + list(terminals.values()),
        "edges": edges,
        "truncated": hood.truncated,
        "limits": {"nodes": max_nodes, "depth": depth, "fanout": MAX_FANOUT},
    }
