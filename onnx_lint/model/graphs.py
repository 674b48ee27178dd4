"""Walking a model's graphs, including the subgraphs of If, Loop and Scan.

A graph is addressed by a *graph path*: ``graph`` for the main graph,
``graph/node[4]/then_branch`` for a subgraph attribute of node 4, and so on.
Paths are what diagnostics print and what fix edits use to find their target.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain, repeat

import onnx

ROOT = "graph"
# Only these standard ops carry graph attributes; any node of another domain may.
SUBGRAPH_OPS = frozenset({"If", "Loop", "Scan", "SequenceMap"})
# Standard ops whose attributes may hold a tensor (and so external data).
TENSOR_ATTRIBUTE_OPS = frozenset({"Constant", "ConstantOfShape"})
STANDARD_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml"})
# The default ONNX operator set has two spellings: "" and "ai.onnx".
ONNX_DOMAINS = frozenset({"", "ai.onnx"})


def onnx_domain(domain: str) -> str:
    """A domain as ONNX's schemas and ONNX Runtime's registry key it: "" for the default operator set."""
    return "" if domain in ONNX_DOMAINS else domain

_SPECIAL_OPS = SUBGRAPH_OPS | TENSOR_ATTRIBUTE_OPS
# An attribute name may hold any character but the path's own separators (model/validate.py refuses those).
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
    _reads: tuple[list[tuple[int, str]], set[str]] | None = field(default=None, repr=False)
    _op_types: frozenset[str] | None = field(default=None, repr=False)
    _initializers: dict[str, onnx.TensorProto | onnx.SparseTensorProto] | None = field(default=None, repr=False)
    _initializer_names: frozenset[str] | None = field(default=None, repr=False)

    def outward(self) -> Iterator[GraphScope]:
        """This graph, then each enclosing graph out to the main one: the order a name resolves in."""
        current: GraphScope | None = self
        while current is not None:
            yield current
            current = current.parent

    def lookup(self, name: str) -> GraphScope | None:
        """The innermost graph, from this one outward, that defines ``name`` (input, initializer, node output)."""
        return next((scope for scope in self.outward() if name in scope.unresolved_reads()[1]), None)

    def initializers(self) -> dict[str, onnx.TensorProto | onnx.SparseTensorProto]:
        """This graph's initializers by name (a sparse one by its values' name), built once."""
        if self._initializers is None:
            table: dict[str, onnx.TensorProto | onnx.SparseTensorProto] = {t.name: t for t in self.graph.initializer}
            table.update((t.values.name, t) for t in self.graph.sparse_initializer)
            self._initializers = table
        return self._initializers

    def initializer_names(self) -> frozenset[str]:
        """The names ``initializers`` has, built once without it: the table keeps a wrapper object per
        tensor alive (0.07 s for 50k small weights), a question of names needs none."""
        if self._initializer_names is None:
            if self._initializers is not None:
                self._initializer_names = frozenset(self._initializers)
            else:
                names = {t.name for t in self.graph.initializer}
                names.update(t.values.name for t in self.graph.sparse_initializer)
                self._initializer_names = frozenset(names)
        return self._initializer_names

    def scan(self) -> NodeScan:
        """The one pass over this graph's nodes that everything else reuses."""
        if self._scan is None:
            self._scan = scan_nodes(self.graph, _SPECIAL_OPS)
        return self._scan

    def op_types(self) -> frozenset[str]:
        """Every op_type in this graph: rules about rare operators skip a graph without a loop."""
        if self._op_types is None:
            self._op_types = frozenset(self.scan().texts[0::3])
        return self._op_types

    def special(self) -> list[int]:
        """Nodes that may carry graph or tensor attributes."""
        return self.scan().special

    def unresolved_reads(self) -> tuple[list[tuple[int, str]], set[str]]:
        """One pass over node inputs in file order: the (node, name) reads of a name not defined
        *before* that node in this graph (produced later, defined in an enclosing graph, or nowhere),
        and every name the graph defines. Empty list for a sorted, self-contained graph.

        Names a subgraph reads from this graph count as reads of the node that owns the subgraph.
        """
        if self._reads is None:
            graph = self.graph
            seen = {v.name for v in graph.input} | self.initializer_names()
            special = set(self.special())
            found: list[tuple[int, str]] = []
            add, define = found.append, seen.update
            for i, node in enumerate(graph.node):
                for name in node.input:
                    if name not in seen and name:
                        add((i, name))
                if i in special:
                    produced = self.producers()
                    # sorted by text: a name protobuf could not decode is bytes (OL000 refuses such a model)
                    found.extend((i, n) for n in sorted(outer_reads(node), key=str) if n in produced and n not in seen)
                define(node.output)
            self._reads = (found, seen)
        return self._reads

    def producers(self) -> dict[str, int]:
        """Tensor name -> index of the node producing it in this graph (the last one, where a name is
        produced twice). Built in C from the scan's outputs: a second pass over 100k nodes' outputs
        cost 0.13 s."""
        if self._producers is None:
            scan = self.scan()
            owners = chain.from_iterable(map(repeat, range(len(scan.counts)), scan.counts))
            table = dict(zip(scan.outputs, owners))
            table.pop("", None)  # an omitted optional output names no tensor
            self._producers = table
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
    counts: list[int]  # how many of ``outputs`` each node has, in node order


def scan_nodes(graph: onnx.GraphProto, op_types: frozenset[str]) -> NodeScan:
    special: list[int] = []
    texts: list = []
    outputs: list = []
    counts: list[int] = []
    add, extend, mark, count = texts.append, outputs.extend, special.append, counts.append
    for i, node in enumerate(graph.node):
        op_type, domain = node.op_type, node.domain
        add(op_type)
        add(domain)
        add(node.name)
        produced = node.output
        extend(produced)
        count(len(produced))
        if op_type in op_types or domain not in STANDARD_DOMAINS:
            mark(i)
    return NodeScan(special, texts, outputs, counts)


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


def outer_reads(node: onnx.NodeProto) -> set[str]:
    """Names a node's subgraphs read from the enclosing scopes (defined neither inside them nor by them).

    These are dependencies of the node itself: an If whose branch reads ``t``
    must come after the producer of ``t``, as the checker requires.
    """
    names: set[str] = set()
    for _, sub in subgraph_attributes(node):
        local = {v.name for v in sub.input} | {i.name for i in sub.initializer}
        for inner in sub.node:
            local.update(inner.output)
        for inner in sub.node:
            names.update(i for i in inner.input if i and i not in local)
            names.update(n for n in outer_reads(inner) if n not in local)
    return names


def _reads(node: onnx.NodeProto) -> set[str]:
    reads = {i for i in node.input if i}
    if node.op_type in SUBGRAPH_OPS or node.domain not in STANDARD_DOMAINS:
        reads |= outer_reads(node)
    return reads


def topological_order(graph: onnx.GraphProto) -> list[int]:
    """Node indices in dependency order, including what subgraphs read from this graph.

    Kahn's algorithm taking the smallest index first, so a graph already in
    order keeps its file order (and costs one pass). Nodes on a dependency
    cycle, or behind one, never become ready and are left out: callers that
    must not loop simply skip them, and ``cyclic_nodes`` names them.
    """
    import heapq

    nodes = graph.node
    produced = {out: i for i, node in enumerate(nodes) for out in node.output if out}
    reads = [_reads(node) for node in nodes]
    if all(produced.get(name, -1) < i for i, names in enumerate(reads) for name in names):
        return list(range(len(nodes)))
    waiting = [0] * len(nodes)
    users: dict[int, list[int]] = {}
    for i, names in enumerate(reads):
        deps = {produced[name] for name in names if name in produced}
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
    return order


def cyclic_nodes(graph: onnx.GraphProto) -> list[int]:
    """Indices of nodes that sit on (or behind) a dependency cycle; empty if acyclic."""
    order = topological_order(graph)
    if len(order) == len(graph.node):
        return []
    return sorted(set(range(len(graph.node))) - set(order))


def sort_topologically(graph: onnx.GraphProto) -> bool:
    """Reorder the nodes of a graph and its subgraphs into dependency order; True if anything moved.

    Only the order changes: every node keeps its content. A graph already in
    order is left as it is. Raises ``ValueError`` on a dependency cycle.
    """
    moved = False
    for node in graph.node:
        for _, sub in subgraph_attributes(node):
            moved |= sort_topologically(sub)
    order = topological_order(graph)
    if len(order) != len(graph.node):
        raise ValueError(f"graph '{graph.name}' has a dependency cycle")
    if order != list(range(len(order))):
        nodes = list(graph.node)
        del graph.node[:]
        graph.node.extend(nodes[i] for i in order)
        moved = True
    return moved


def out_of_order_nodes(scope: GraphScope) -> list[tuple[int, str, int]]:
    """(node, tensor, producer) for each node that reads a tensor a later node produces (first such read).

    Empty for a sorted graph, at the cost of the scope's one pass over node inputs.
    """
    unresolved, _ = scope.unresolved_reads()
    if not unresolved:
        return []
    produced = scope.producers()
    found: dict[int, tuple[int, str, int]] = {}
    for i, name in unresolved:
        if i not in found and produced.get(name, -1) > i:
            found[i] = (i, name, produced[name])
    return list(found.values())



def defined_outside(scope: GraphScope, name: str) -> bool:
    """Whether an enclosing graph defines ``name`` (a subgraph may read outer-scope tensors)."""
    return scope.parent is not None and scope.parent.lookup(name) is not None


def holds_runtime_operators(model: onnx.ModelProto, main: GraphScope) -> bool:
    """Whether the main graph (``main``, the model's first scope) has a node of a domain ONNX has no
    schemas for (ONNX Runtime's ``com.microsoft`` fused and quantized operators, a custom library's)
    that no function of the model defines: ONNX's inference leaves such a node's outputs, and
    everything after them, untyped."""
    local = {function.domain for function in model.functions}
    graph = main.graph
    return any(graph.node[i].domain not in STANDARD_DOMAINS and graph.node[i].domain not in local
               for i in main.special())
