"""The overview's groups: a graph's nodes grouped the way users know the model, for the whole-graph view.

A big graph cannot be drawn node by node, so the view opens to collapsed groups. They follow the
model's own structure first, as TensorBoard and Netron do:

* **name scopes**: ``/model/layers.3/self_attn/q_proj/MatMul`` (torch.onnx, tf2onnx) sits in
  ``model`` > ``layers.3`` > ``self_attn``; ``encoder.layer.0.attention.MatMul`` splits on dots (a
  number stays with the word before it); a dynamo export's ``pkg.torch.onnx.name_scopes`` metadata wins
  over its names. An unscoped node (a ``Constant``, a shape computation) joins the scope its consumers
  share. A graph whose named nodes all share one scope (paddle2onnx's ``p2o.Add.68``) has no scopes.
* **repeats**: sibling scopes numbered in a row (``layers.0`` … ``layers.31``) form one series,
  "layers.0–31", noted "32 × 27 nodes" when the layers are alike;
* **chains** where there are no scopes: the graph is cut where a single tensor flows on (weights and
  constants aside), and a stretch whose pieces repeat (``MatMul, Add, Relu, Add`` 25,000 times) is a
  series of its repeats;
* **Q/DQ islands**: in a quantized graph a DequantizeLinear sits just before the op that reads it and a
  QuantizeLinear just after the op whose output it quantizes, so the island stays with its op;
* **stages** where there are no scopes: consecutive members whose outputs share a spatial size (a CNN's
  ``40×40`` stage; ``H/8×W/8`` for dynamic inputs) form one group, named by that size;
* **ranges** last: whatever still has more than ``SHOW`` members is split into consecutive ranges, each named
  by what it computes (its most frequent operators, its spatial size) or by the units it spans.

No drawing of the groups has a cycle: every group is made an interval of one topological order of the nodes
(``_intervals``; a scope that data leaves and re-enters is cut into parts), so whichever groups are collapsed,
every edge between two drawn boxes points forward in that order.

The answer is columns (``group_columns``): groups numbered parents first in file order (pre-order), so
a group's descendants are the groups numbered after it up to its subtree's end, and each node's
innermost group. It runs in the worker with the graph's columns: about 1 s for 100k nodes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx

SHOW = 48  # members an expanded group draws directly, at most
MIN_REPEAT = 3  # numbered scopes, or chain pieces, that make a series
MAX_PERIOD = 8  # chain pieces in one repeat, at most
MIN_STAGE = 4  # computing nodes in a stage of its own; fewer join the stage before
QDQ_OPS = frozenset({"QuantizeLinear", "DequantizeLinear", "com.microsoft.QuantizeLinear",
                     "com.microsoft.DequantizeLinear"})
NAME_SCOPES = "pkg.torch.onnx.name_scopes"  # a dynamo export's module path of each node
_TOOL_OPS = frozenset({"QuantizeLinear", "DequantizeLinear", "Cast", "Constant"})  # what tools add, named by tensor

_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")
_NUMBERED = re.compile(r"^(.*?)(\d+)$")

Scope = tuple[str, ...]


@dataclass(eq=False)
class _Group:
    kind: str  # scope | series | repeat | stage | range
    label: str
    title: str  # the full name: unique within a graph, the view's key for the group
    note: str = ""
    members: list[int | _Group] = field(default_factory=list)  # nodes and sub-groups, in file order
    children: dict[str, _Group] = field(default_factory=dict)  # scopes by name, while building

    def size(self) -> int:
        return sum(1 if isinstance(m, int) else m.size() for m in self.members)


def torch_scopes(value: str) -> Scope:
    """``"['', 'layer4', 'layer4.0', 'layer4.0.relu', 'relu_14']"`` -> ``('layer4', '0', 'relu')``:
    each module relative to its parent; the last entry (the node's own FX name) is not a scope."""
    paths = [p for p in _QUOTED.findall(value) if p][:-1]
    scope: list[str] = []
    previous = ""
    for path in paths:
        scope.append(path[len(previous) + 1:] if previous and path.startswith(previous + ".") else path)
        previous = path
    return tuple(scope)


def name_scope(name: str) -> Scope:
    """The scope a node's name gives: its ``/``-separated prefix, else its ``.``-separated one."""
    if "/" in name:
        return tuple(p for p in name.split("/") if p)[:-1]
    if "." in name:
        parts: list[str] = []
        for part in name.split("."):
            if part.isdigit() and parts:
                parts[-1] += "." + part  # "layers.3" is one scope, not two
            else:
                parts.append(part)
        return tuple(parts[:-1])
    return ()


def _named_after_a_tensor(node: onnx.NodeProto, name: str) -> bool:
    """A node a tool added and named after a tensor (a quantizer's ``conv2d_0.w_0_DequantizeLinear``, an FP16
    converter's ``conv2d_491.tmp_0_cast_to_fp32_node``): its dots are a tensor's name, no module path, so it
    says nothing about scopes (it joins its readers' scope instead). A ``/`` path (torch.onnx's
    ``/model/layers.0/Constant``) is an exporter's scope and kept."""
    if node.op_type not in _TOOL_OPS:
        return False
    return "/" not in name or any(t and name.startswith(t) for t in (*node.input, *node.output))


def node_scopes(graph: onnx.GraphProto, names: Sequence[str]) -> list[Scope]:
    """Each node's scope (``()`` for none); none at all when the named nodes all share one."""
    scopes: list[Scope] = []
    # An exporter that writes scope metadata writes it on every node: look only where the first nodes have some.
    tagged = any(len(node.metadata_props) for node in graph.node[:64])
    for node, name in zip(graph.node, names):
        scope: Scope = ()
        for prop in node.metadata_props if tagged else ():
            if prop.key == NAME_SCOPES:
                scope = torch_scopes(prop.value)
        scopes.append(scope or (() if _named_after_a_tensor(node, name) else name_scope(name)))
    if len(set(scopes) - {()}) <= 1:
        return [()] * len(scopes)
    return scopes


def _adopt(scopes: list[Scope], consumers: list[list[int]]) -> None:
    """An unscoped node joins the scope its consumers share (a Constant, a shape computation feeding one
    layer). Last node first, so that a chain of unscoped nodes follows its consumer in."""
    for i in range(len(scopes) - 1, -1, -1):
        if scopes[i] or not consumers[i]:
            continue
        shared = scopes[consumers[i][0]]
        for c in consumers[i][1:]:
            other = scopes[c]
            n = 0
            while n < len(shared) and n < len(other) and shared[n] == other[n]:
                n += 1
            shared = shared[:n]
            if not shared:
                break
        scopes[i] = shared


class _Columns:
    """The graph's columns as the grouping reads them (flat, as numpy arrays: 100k nodes in milliseconds)."""

    def __init__(self, ops: Sequence[str], node_op: Sequence[int], inputs: Sequence[int], input_end: Sequence[int],
                 outputs: Sequence[int], output_end: Sequence[int], tensors: int, weights: Sequence[int]) -> None:
        self.ops = ops
        self.node_op = node_op
        n = len(node_op)
        self.inputs = np.asarray(inputs, dtype=np.int64)
        self.outputs = np.asarray(outputs, dtype=np.int64)
        self.input_end = np.asarray(input_end, dtype=np.int64)
        self.input_count = np.diff(np.concatenate(([0], self.input_end)))
        self.input_node = np.repeat(np.arange(n), self.input_count)
        self.output_node = np.repeat(np.arange(n), np.diff(np.concatenate(([0], np.asarray(output_end, np.int64)))))
        self.producer = np.full(tensors, -1, dtype=np.int64)
        made = self.outputs >= 0
        self.producer[self.outputs[made]] = self.output_node[made]
        self.tensors = tensors
        self.weights = np.asarray(weights, dtype=np.int64)
        self.constant_node = np.zeros(n, dtype=bool)
        self.first_reader = np.full(n, n, dtype=np.int64)  # each node's first reader (n: none), from keys()
        self.order: list[float] = []
        # The Q/DQ nodes of a quantized graph: a cut never separates an op from its island.
        qdq = [k for k, op in enumerate(ops) if op in QDQ_OPS]
        kinds = np.asarray(node_op, dtype=np.int64)
        self.dequantize = np.isin(kinds, [k for k in qdq if ops[k].endswith("DequantizeLinear")])
        self.quantize = np.isin(kinds, [k for k in qdq if not ops[k].endswith("DequantizeLinear")])

    def splits_island(self, before: int, after: int | None) -> bool:
        """Whether a cut between two nodes would part an op from its Q/DQ island: after a DequantizeLinear (it
        feeds the op that follows), or before a QuantizeLinear (it quantizes the op before it)."""
        return bool(self.dequantize[before] and not self.constant_node[before]) or \
            (after is not None and bool(self.quantize[after]))

    def consumers(self) -> list[list[int]]:
        """Each node's readers, in file order."""
        found: list[list[int]] = [[] for _ in self.node_op]
        read = self.inputs >= 0
        producers = self.producer[self.inputs[read]].tolist()
        for p, i in zip(producers, self.input_node[read].tolist()):
            if p >= 0 and (not found[p] or found[p][-1] != i):
                found[p].append(i)
        return found

    def _constant(self) -> np.ndarray:
        """Tensors that are weights, or computed from weights only (a Constant, a Cast of a weight); and,
        in ``self.constant_node``, the nodes that compute them."""
        n = len(self.node_op)
        constant = np.zeros(self.tensors + 1, dtype=bool)  # the last: an omitted optional input
        constant[self.weights] = True
        constant[-1] = True
        starts = self.input_end - self.input_count
        read = np.where(self.inputs >= 0, self.inputs, self.tensors)
        made = self.outputs >= 0
        for _ in range(8):  # constant chains are short: a few rounds reach them
            by_node = np.ones(n, dtype=bool)
            some = self.input_count > 0
            if read.size:
                by_node[some] = np.logical_and.reduceat(constant[read], starts[some])
            grown = constant.copy()
            grown[self.outputs[made]] |= by_node[self.output_node[made]]
            if (grown == constant).all():
                break
            constant = grown
        self.constant_node = by_node
        return constant[:-1]

    def keys(self) -> list[float]:
        """Where each node sits for the overview: its place in the file, except that a constant (a
        ``Constant``, a ``Cast`` of a weight) sits just before the first node that reads it, since
        exporters hoist constants to the top, away from what they belong to."""
        self._constant()
        n = len(self.node_op)
        keys = [float(i) for i in range(n)]
        read = self.inputs >= 0
        producers = self.producer[self.inputs[read]]
        fed = producers >= 0
        first = np.full(n, n, dtype=np.int64)
        np.minimum.at(first, producers[fed], self.input_node[read][fed])
        for i in np.flatnonzero(self.constant_node)[::-1].tolist():
            if i < first[i] < n:
                keys[i] = keys[int(first[i])] - 1e-7 * (n - i)
        self._islands(keys, first)
        self.first_reader = first
        return keys

    def by_size(self, keys: list[float], sizes: Sequence[str | None]) -> list[float]:
        """``keys`` made into a topological order that stays at one spatial size while it can: exporters and
        quantizers interleave a CNN's parallel branches (a strided conv beside its shortcut), which would cut
        its stages into slivers. Among the nodes ready, one of the size just placed (or of none: a pooled
        1×1, a shape computation) comes first, the lowest key first; a Q/DQ node counts at its op's size."""
        import heapq

        n = len(self.node_op)
        size = list(sizes)
        for i in np.flatnonzero(self.dequantize & ~self.constant_node).tolist():
            if self.first_reader[i] < n:
                size[i] = size[int(self.first_reader[i])]
        starts = self.input_end - self.input_count
        for i in np.flatnonzero(self.quantize & ~self.constant_node).tolist():
            source = int(self.inputs[starts[i]]) if self.input_count[i] else -1
            if source >= 0 and self.producer[source] >= 0:
                size[i] = size[int(self.producer[source])]
        read = self.inputs >= 0
        producers = self.producer[self.inputs[read]]
        fed = producers >= 0
        followers: list[list[int]] = [[] for _ in range(n)]
        waiting = [0] * n
        constant = self.constant_node.tolist()
        for p, r in zip(producers[fed].tolist(), self.input_node[read][fed].tolist()):
            if p != r and not constant[p]:  # constants are placed with their reader, afterwards
                followers[p].append(r)
                waiting[r] += 1
        recent: list[tuple[int, float, int]] = []  # the node made ready last first: where the data just went
        at_size: dict[str | None, list[tuple[float, int]]] = {}

        def push(node: int, rank: int) -> None:
            heapq.heappush(recent, (-rank, keys[node], node))
            heapq.heappush(at_size.setdefault(size[node], []), (keys[node], node))

        def top(heap: list[tuple[float, int]]) -> tuple[float, int] | None:
            while heap and placed[heap[0][1]]:
                heapq.heappop(heap)
            return heap[0] if heap else None

        placed = bytearray(n)
        computing = [node for node in range(n) if not constant[node]]
        for node in computing:
            if not waiting[node]:
                push(node, -1)
        order: list[float] = [0.0] * n
        current: str | None = None
        for rank in range(len(computing)):
            here = top(at_size[current]) if current is not None and current in at_size else None
            if here is not None:  # a node of no size of its own goes first where its key says so
                sizeless = top(at_size.get(None, []))
                node = (here if sizeless is None else min(here, sizeless))[1]
            else:  # nothing more at this size: on where the data just went (the next stage, not a side branch)
                while recent and placed[recent[0][2]]:
                    heapq.heappop(recent)
                if not recent:  # a cycle in the graph itself (an invalid model): keep the keys
                    return keys
                node = recent[0][2]
            placed[node] = 1
            order[node] = float(rank)
            if size[node] is not None:
                current = size[node]
            for r in followers[node]:
                waiting[r] -= 1
                if not waiting[r]:
                    push(r, rank)
        for i in np.flatnonzero(self.constant_node)[::-1].tolist():  # just before the first node that reads it
            reader = int(self.first_reader[i])
            order[i] = order[reader] - 1e-7 * (n - i) if reader < n else float(n + i)
        return order

    def _islands(self, keys: list[float], first: np.ndarray) -> None:
        """A quantized op's Q/DQ island sits with it: a DequantizeLinear of an activation just before the op that
        reads it, a QuantizeLinear just after the op whose output it quantizes (weights' DequantizeLinear are
        constants, already moved to their reader). Both stay between producer and consumer, so the order stays
        topological."""
        kinds = {k for k, op in enumerate(self.ops) if op in QDQ_OPS}
        if not kinds:
            return
        n = len(self.node_op)
        node_op = np.asarray(self.node_op, dtype=np.int64)
        qdq = np.isin(node_op, list(kinds))
        starts = self.input_end - self.input_count
        for i in np.flatnonzero(qdq & ~self.constant_node).tolist():
            if self.ops[self.node_op[i]].endswith("DequantizeLinear"):
                reader = int(first[i])
                if reader < n and not qdq[reader]:
                    keys[i] = keys[reader] - 1e-9
            elif self.input_count[i]:
                source = int(self.inputs[starts[i]])
                producer = int(self.producer[source]) if source >= 0 else -1
                if producer >= 0 and not qdq[producer]:
                    keys[i] = keys[producer] + 1e-9

    def cuts(self) -> list[bool]:
        """Whether at most one computed tensor flows past each node (weights, constants and graph inputs
        aside): the places where a chain can be cut into pieces."""
        n = len(self.node_op)
        last_use = np.full(self.tensors, -1, dtype=np.int64)
        read = self.inputs >= 0
        np.maximum.at(last_use, self.inputs[read], self.input_node[read])
        made = self.outputs >= 0
        tensor, node = self.outputs[made], self.output_node[made]
        flows = ~self._constant()[tensor] & (last_use[tensor] > node)
        flow = np.zeros(n + 1, dtype=np.int64)
        np.add.at(flow, node[flows], 1)
        np.add.at(flow, last_use[tensor[flows]], -1)
        return (np.cumsum(flow[:n]) <= 1).tolist()


def _scope_tree(scopes: list[Scope], keys: list[float]) -> _Group:
    root = _Group("root", "", "")
    if not any(scopes):
        ordered: list[int | _Group] = [i for i in sorted(range(len(scopes)), key=keys.__getitem__)]
        root.members = ordered
        return root
    for i, scope in enumerate(scopes):
        group = root
        for depth, part in enumerate(scope):
            child = group.children.get(part)
            if child is None:
                child = _Group("scope", part, "/".join(scope[:depth + 1]))
                group.children[part] = child
                group.members.append(child)
            group = child
        group.members.append(i)
    _order(root, keys)
    return root


def _order(group: _Group, keys: list[float]) -> float:
    """Members in the order their computations end: an exporter hoists a layer's constants and weight
    copies to the top of the file, so where a scope starts says less than where it ends."""
    last = {id(m): _order(m, keys) for m in group.members if isinstance(m, _Group)}
    group.members.sort(key=lambda m: keys[m] if isinstance(m, int) else last[id(m)])
    tail = group.members[-1]
    return keys[tail] if isinstance(tail, int) else last[id(tail)]


def _series_note(units: Sequence[int | _Group], sizes: Sequence[int] | None = None) -> str:
    sizes = sizes or [1 if isinstance(u, int) else u.size() for u in units]
    total = sum(sizes)
    if len(set(sizes)) == 1:
        size = sizes[0]
        return f"{len(units):,} × {size} node{'s' if size > 1 else ''}"
    return f"{len(units):,} blocks, {total:,} nodes"


def _numbered_series(group: _Group) -> None:
    """Sibling scopes numbered in a row (``layers.0``, ``layers.1``, …) become one series; unscoped
    nodes between them stay beside it."""
    members = group.members
    result: list[int | _Group] = []
    k = 0
    while k < len(members):
        head = members[k]
        match = _NUMBERED.match(head.label) if isinstance(head, _Group) and head.kind == "scope" else None
        if not isinstance(head, _Group) or match is None:
            result.append(head)
            k += 1
            continue
        prefix, number = match.group(1), int(match.group(2))
        units, last = [head], k
        for j in range(k + 1, len(members)):
            item = members[j]
            if isinstance(item, int):
                continue
            following = _NUMBERED.match(item.label) if item.kind == "scope" else None
            if following is None or following.group(1) != prefix or int(following.group(2)) != number + len(units):
                break
            units.append(item)
            last = j
        if len(units) < MIN_REPEAT:
            result.append(head)
            k += 1
            continue
        label = f"{prefix}{number}–{number + len(units) - 1}"
        series = _Group("series", label, f"{group.title}/{label}".lstrip("/"), _series_note(units), list(units))
        result.append(series)
        result.extend(m for m in members[k:last] if isinstance(m, int))
        k = last + 1
    group.members = result


def _repeats(group: _Group, columns: _Columns, cut: list[bool], counter: list[int]) -> None:
    """Runs of a group's nodes cut into pieces; pieces that repeat in a row become a series of repeats."""
    members = group.members
    result: list[int | _Group] = []
    k = 0
    while k < len(members):
        if not isinstance(members[k], int):
            result.append(members[k])
            k += 1
            continue
        run: list[int] = []
        while k < len(members) and isinstance(members[k], int):
            run.append(members[k])  # type: ignore[arg-type]
            k += 1
        pieces: list[list[int]] = [[]]
        for at, node in enumerate(run):
            pieces[-1].append(node)
            following = run[at + 1] if at + 1 < len(run) else None
            if cut[node] and not columns.constant_node[node] and not columns.splits_island(node, following):
                pieces.append([])
        if not pieces[-1]:
            pieces.pop()
        kinds: dict[tuple[int, ...], int] = {}
        shapes = [kinds.setdefault(tuple(columns.node_op[n] for n in piece), len(kinds)) for piece in pieces]
        j = 0
        while j < len(pieces):
            best, period = 0, 0
            for p in range(1, MAX_PERIOD + 1):
                if j + MIN_REPEAT * p > len(pieces):
                    break
                r = 1
                while j + (r + 1) * p <= len(pieces) and shapes[j + r * p:j + (r + 1) * p] == shapes[j:j + p]:
                    r += 1
                if r >= MIN_REPEAT and r * p > best:
                    best, period = r * p, p
            if not best:
                result.extend(pieces[j])
                j += 1
                continue
            counter[0] += 1
            title = f"{group.title}/chain {counter[0]}".lstrip("/")
            spans = [[n for piece in pieces[j + u * period:j + (u + 1) * period] for n in piece]
                     for u in range(best // period)]
            # The first repeat may be cut differently (its input is the graph's, which flows everywhere):
            # the nodes just before the series that do what one repeat does are its first repeat.
            unit_ops = [columns.node_op[n] for n in spans[0]]
            if len(unit_ops) <= len(result) and all(isinstance(m, int) for m in result[-len(unit_ops):]) and \
                    [columns.node_op[m] for m in result[-len(unit_ops):]] == unit_ops:  # type: ignore[index]
                spans.insert(0, result[-len(unit_ops):])  # type: ignore[arg-type]
                del result[-len(unit_ops):]
            units: list[int | _Group] = []
            sizes: list[int] = []
            for u, span in enumerate(spans):
                nodes: list[int | _Group] = list(span)
                units.append(nodes[0] if len(nodes) == 1 else _Group("repeat", f"#{u}", f"{title}/#{u}", members=nodes))
                sizes.append(len(nodes))
            ops = [columns.ops[columns.node_op[n]] for piece in pieces[j:j + period] for n in piece
                   if not columns.constant_node[n]] or ["Constant"]
            label = "→".join(ops) if len(ops) <= 4 else f"{ops[0]}→…→{ops[-1]}"
            result.append(_Group("series", label, title, _series_note(units, sizes), units))
            j += best
    group.members = result


def _ranges(group: _Group, columns: _Columns, spatial: Sequence[str | None] | None, context: str = "",
            sized: bool = True) -> None:
    """More than ``SHOW`` members: runs of plain nodes become ranges first (the scopes stay in sight),
    then, if still too many, consecutive ranges of all members, at most ``SHOW`` a level. Each range is
    named by what it holds (``_range_label``), never by where it sits in the file alone; ``context``: the
    series' name, which the ranges of its repeats carry; ``sized``: whether a range says its spatial size (not
    inside a stage, which says it)."""
    if len(group.members) <= SHOW:
        return
    context = group.label if group.kind == "series" else context
    sized = sized and group.kind != "stage"
    sizes = spatial if sized else None
    runs: list[int | _Group] = []
    run: list[int | _Group] = []
    for member in [*group.members, None]:
        if isinstance(member, int):
            run.append(member)
            continue
        if len(run) > 1:
            pieces = -(-len(run) // SHOW)
            step = -(-len(run) // pieces)
            for part in _chunks(run, step, columns):
                label = _range_label(part, columns, sizes, context)
                runs.append(_Group("range", label, f"{group.title}/{label}".lstrip("/"), members=part))
        else:
            runs.extend(run)
        run = []
        if member is not None:
            runs.append(member)
    if sum(isinstance(m, _Group) for m in group.members) and len(runs) <= SHOW:
        group.members = runs
    else:
        pieces = min(SHOW, -(-len(group.members) // SHOW))
        step = -(-len(group.members) // pieces)
        runs = []
        for start in range(0, len(group.members), step):
            part = group.members[start:start + step]
            label = _range_label(part, columns, sizes, context)
            runs.append(_Group("range", label, f"{group.title}/{label}".lstrip("/"), members=part))
        group.members = runs
    for piece in group.members:
        if isinstance(piece, _Group) and piece.kind == "range":
            _ranges(piece, columns, spatial, context, sized)


def _chunks(run: list[int | _Group], step: int, columns: _Columns) -> list[list[int | _Group]]:
    """``run`` in pieces of about ``step``, each end moved on (a few nodes at most) past a Q/DQ island."""
    found: list[list[int | _Group]] = []
    start = 0
    while start < len(run):
        end = min(len(run), start + step)
        while end < len(run) and end < start + step + 4:
            before, after = run[end - 1], run[end]
            following = after if isinstance(after, int) else None
            if not isinstance(before, int) or not columns.splits_island(before, following):
                break
            end += 1
        found.append(run[start:end])
        start = end
    return found


def _unit(member: int | _Group, end: int) -> str | None:
    """The label of the first (``end`` 0) or last (-1) unit a range spans: ``layers.3``, ``#12``."""
    while isinstance(member, _Group) and member.kind == "range":
        member = member.members[end]
    return member.label if isinstance(member, _Group) and member.kind in ("scope", "repeat") else None


def _nodes(members: Sequence[int | _Group]) -> list[int]:
    found: list[int] = []
    for member in members:
        found.extend([member] if isinstance(member, int) else _nodes(member.members))
    return found


def _describe_ops(nodes: Sequence[int], columns: _Columns, most: int = 3) -> str:
    """"Conv, Mul, Add": a set of nodes' most frequent computing operators (constants aside)."""
    counts: dict[int, int] = {}
    for n in nodes:
        if not columns.constant_node[n]:
            op = columns.node_op[n]
            counts[op] = counts.get(op, 0) + 1
    if not counts:
        return f"Constant ×{len(nodes)}"
    ranked = sorted(counts, key=lambda op: -counts[op])
    return ", ".join(columns.ops[op] for op in ranked[:most]) + (", …" if len(ranked) > most else "")


def _sizes(nodes: Sequence[int], spatial: Sequence[str | None] | None) -> list[str]:
    """The spatial sizes a set of nodes computes, in order of first appearance."""
    if spatial is None:
        return []
    return list(dict.fromkeys(s for n in nodes if (s := spatial[n]) is not None))


def _range_label(part: Sequence[int | _Group], columns: _Columns, spatial: Sequence[str | None] | None,
                 context: str = "") -> str:
    """"layers.0–15" for a range of numbered units, "#0–520 of MatMul→Add" of a chain's repeats, else what the
    range computes: "Conv, Mul, Add · 40×40"."""
    head, tail = _unit(part[0], 0), _unit(part[-1], -1)
    first = _NUMBERED.match(head) if head else None
    last = _NUMBERED.match(tail) if tail else None
    if first and last and first.group(1) == last.group(1):
        label = f"{first.group(1)}{first.group(2)}–{last.group(2)}"
        return f"{label} of {context}" if first.group(1) == "#" and context else label
    nodes = _nodes(part)
    sizes = _sizes(nodes, spatial)
    return _describe_ops(nodes, columns) + (f" · {sizes[0]}" if len(sizes) == 1 else "")


@dataclass(eq=False)
class _Run:
    """Consecutive members of one spatial size (or several, once small runs are merged)."""

    sizes: list[str]
    members: list[int | _Group] = field(default_factory=list)
    count: int = 0  # computing nodes (constants aside)
    small: bool = False  # a run of small runs, collecting more
    weights: dict[str, int] = field(default_factory=dict)  # computing nodes of each size

    def take(self, other: _Run) -> None:
        self.sizes.extend(s for s in other.sizes if s not in self.sizes)
        self.members.extend(other.members)
        self.count += other.count
        for size, weight in other.weights.items():
            self.weights[size] = self.weights.get(size, 0) + weight

    def label(self) -> str | None:
        """"stage 40×40"; "stage 20×20→40×40" where the size changes within it (a few nodes of another size,
        merged in, do not count)."""
        total = sum(self.weights.values())
        shown = [s for s in self.sizes if self.weights.get(s, 0) * 4 >= total] or self.sizes[:1]
        if not shown:
            return None
        if len(shown) == 1:
            return f"stage {shown[0]}"
        return f"stage {shown[0]}→{shown[-1]}" if len(shown) == 2 else f"stage {shown[0]}→…→{shown[-1]}"


def _stages(group: _Group, columns: _Columns, spatial: Sequence[str | None]) -> None:
    """A long unscoped level cut where the spatial size of what it computes changes: a CNN's stages
    (``stage 40×40``). Members without a size of their own (constants, a squeeze-excite's 1×1, shape
    computations) stay in the stage around them; a run of fewer than ``MIN_STAGE`` computing nodes joins
    the one before it (consecutive small runs, such as an FPN's lateral convolutions, form one)."""
    if len(group.members) <= SHOW or group.kind in ("series", "repeat", "range", "stage"):
        return
    if any(isinstance(m, _Group) and m.kind == "scope" for m in group.members):
        return

    def size_of(member: int | _Group) -> str | None:
        nodes = [member] if isinstance(member, int) else _nodes(member.members)
        return next((s for n in reversed(nodes) if (s := spatial[n]) is not None), None)

    def weight(member: int | _Group) -> int:
        nodes = [member] if isinstance(member, int) else _nodes(member.members)
        return sum(1 for n in nodes if not columns.constant_node[n])

    sizes = [size_of(member) for member in group.members]
    for at in range(len(sizes) - 2, -1, -1):  # a DequantizeLinear goes with the op it feeds, into that op's stage
        member = group.members[at]
        if isinstance(member, int) and columns.dequantize[member] and not columns.constant_node[member]:
            sizes[at] = sizes[at + 1]
    runs: list[_Run] = []
    for member, size in zip(group.members, sizes):
        if runs and (size is None or not runs[-1].sizes or runs[-1].sizes[-1] == size):
            if size is not None and not runs[-1].sizes:
                runs[-1].sizes.append(size)
        else:
            runs.append(_Run([size] if size else []))
        runs[-1].members.append(member)
        runs[-1].count += weight(member)
        if size is not None:
            runs[-1].weights[size] = runs[-1].weights.get(size, 0) + weight(member)
    collected: list[_Run] = []
    for run in runs:  # consecutive small runs become one
        if collected and run.count < MIN_STAGE and collected[-1].small:
            collected[-1].take(run)
        else:
            run.small = run.count < MIN_STAGE
            collected.append(run)
    merged: list[_Run] = []
    for run in collected:  # what is still small joins the stage before (the first: the one after)
        if merged and (run.count < MIN_STAGE or merged[-1].count < MIN_STAGE):
            merged[-1].take(run)
        else:
            merged.append(run)
    if len(merged) < 2 or not any(run.sizes for run in merged):
        return
    result: list[int | _Group] = []
    for run in merged:
        members = run.members
        if len(members) == 1:
            result.append(members[0])
            continue
        label = run.label() or f"stage {_describe_ops(_nodes(members), columns)}"
        result.append(_Group("stage", label, f"{group.title}/{label}".lstrip("/"), members=members))
    group.members = result


def _finish(group: _Group, columns: _Columns, spatial: Sequence[str | None] | None) -> None:
    """Top down: stages where the level is a long unscoped run, then ranges where it is still too long."""
    if spatial is not None:
        _stages(group, columns, spatial)
    for member in group.members:
        if isinstance(member, _Group) and member.kind == "series":
            _ranges(member, columns, spatial)
    _ranges(group, columns, spatial)
    for member in group.members:
        if isinstance(member, _Group):
            _finish(member, columns, spatial)


def _intervals(root: _Group, columns: _Columns) -> None:
    """Make every group an interval of one topological order of the nodes, so that no drawing has a cycle.

    The groups' own order (pre-order of the tree) usually is topological already: then nothing changes.
    Where it is not (a scope that data leaves and comes back to, as an exporter's shared helper nodes do),
    the nodes are ordered again, topologically, staying inside the group of the node just placed while it
    has a node ready; a group whose nodes still fall in several runs becomes one group per run
    ("attn (1/2)", "attn (2/2)").
    """
    order: list[int] = []
    paths: list[tuple[int, ...]] = [()] * len(columns.node_op)
    groups: list[_Group] = [root]

    def walk(group: _Group, path: tuple[int, ...]) -> None:
        for member in group.members:
            if isinstance(member, int):
                order.append(member)
                paths[member] = path
            else:
                groups.append(member)
                walk(member, (*path, len(groups) - 1))

    walk(root, ())
    n = len(order)
    if n != len(columns.node_op):
        return
    position = np.empty(n, dtype=np.int64)
    position[np.asarray(order, dtype=np.int64)] = np.arange(n)
    read = columns.inputs >= 0
    producers = columns.producer[columns.inputs[read]]
    readers = columns.input_node[read]
    fed = producers >= 0
    producers, readers = producers[fed], readers[fed]
    if bool((position[producers] < position[readers]).all()):
        return
    import heapq

    # Constants (a Constant, an Identity or Cast of a weight) wait outside the order and are placed just before
    # their first reader: ready from the start, they would otherwise fill their scope's first run on their own
    # and cut it from the nodes they feed (a BERT export's "encoder (1/2)" of nothing but weight aliases).
    constant = columns.constant_node.tolist()
    followers: list[list[int]] = [[] for _ in range(n)]
    waiting = [0] * n
    for p, r in zip(producers.tolist(), readers.tolist()):
        if p != r:
            followers[p].append(r)
            if not constant[p]:
                waiting[r] += 1
    ready: list[list[tuple[int, int]]] = [[] for _ in groups]
    pos = position.tolist()

    def push(node: int) -> None:
        item = (pos[node], node)
        heapq.heappush(ready[0], item)
        for g in paths[node]:
            heapq.heappush(ready[g], item)

    for node in range(n):
        if not waiting[node] and not constant[node]:
            push(node)
    placed = bytearray(n)
    ordered: list[int] = []
    here: tuple[int, ...] = ()
    computed = n - sum(constant)
    while len(ordered) < computed:
        chosen = -1
        for g in (*reversed(here), 0):
            heap = ready[g]
            while heap and placed[heap[0][1]]:
                heapq.heappop(heap)
            if heap:
                chosen = heapq.heappop(heap)[1]
                break
        if chosen < 0:  # a cycle in the graph itself (an invalid model): the rest in the groups' order
            ordered.extend(node for node in order if not placed[node] and not constant[node])
            break
        placed[chosen] = 1
        ordered.append(chosen)
        here = paths[chosen]
        for r in followers[chosen]:
            waiting[r] -= 1
            if not waiting[r] and not constant[r]:
                push(r)
    ordered = _with_constants(ordered, constant, followers)
    parts: dict[int, list[_Group]] = {}
    root.members = []
    stack: list[tuple[int, _Group]] = []
    for node in ordered:
        path = paths[node]
        k = 0
        while k < len(stack) and k < len(path) and stack[k][0] == path[k]:
            k += 1
        del stack[k:]
        for g in path[k:]:
            old = groups[g]
            part = _Group(old.kind, old.label, old.title, old.note)
            parts.setdefault(g, []).append(part)
            (stack[-1][1] if stack else root).members.append(part)
            stack.append((g, part))
        (stack[-1][1] if stack else root).members.append(node)
    for pieces in parts.values():
        kept = [piece for piece in pieces if len(piece.members) > 1]  # a part of one member is that member
        for k, piece in enumerate(kept, 1):
            if len(kept) > 1:
                piece.label = f"{piece.label} ({k}/{len(kept)})"
                piece.title = f"{piece.title} ({k}/{len(kept)})"
            if piece.kind == "series" and len(pieces) > 1:  # a part of a series: its own count of repeats
                piece.note = _series_note(piece.members)
    _dissolve(root)


def _with_constants(ordered: list[int], constant: list[bool], followers: list[list[int]]) -> list[int]:
    """``ordered`` (the computed nodes) with each constant node just before the first node that reads it,
    directly or through other constants (a chain ``Constant -> Cast -> MatMul`` keeps its file order, which
    is topological); a constant nobody reads goes last."""
    n = len(constant)
    at = [n] * n  # where each node sits in ``ordered``; a constant: where its first reader does
    for i, node in enumerate(ordered):
        at[node] = i
    for node in range(n - 1, -1, -1):  # file order is topological: readers come later
        if constant[node]:
            at[node] = min((at[r] for r in followers[node]), default=n)
    before: dict[int, list[int]] = {}
    for node in range(n):  # in file order
        if constant[node]:
            before.setdefault(at[node], []).append(node)
    result: list[int] = []
    for i, node in enumerate(ordered):
        result.extend(before.get(i, ()))
        result.append(node)
    result.extend(before.get(n, ()))
    return result


def _dissolve(group: _Group) -> None:
    """A group of one member (a part that kept one node) is that member."""
    members: list[int | _Group] = []
    for member in group.members:
        if isinstance(member, _Group):
            _dissolve(member)
            if len(member.members) == 1:
                members.append(member.members[0])
                continue
        members.append(member)
    group.members = members


def _simplify(group: _Group, columns: _Columns, cut: list[bool] | None, counter: list[int]) -> list[bool] | None:
    """Bottom up: one-node scopes dissolve, a scope holding only one scope merges with it, numbered
    scopes make series and long runs of nodes their repeats (stages and ranges come later, ``_finish``)."""
    members: list[int | _Group] = []
    for member in group.members:
        if isinstance(member, _Group):
            cut = _simplify(member, columns, cut, counter)
            while len(member.members) == 1 and isinstance(member.members[0], _Group) and member.kind == "scope" \
                    and member.members[0].kind == "scope":
                inner = member.members[0]
                inner.label = f"{member.label}/{inner.label}"
                member = inner
            if len(member.members) == 1:
                members.append(member.members[0])
                continue
        members.append(member)
    group.members = members
    group.children = {}
    _numbered_series(group)
    if len(group.members) > SHOW and sum(isinstance(m, int) for m in group.members) > SHOW // 2:
        if cut is None:
            cut = columns.cuts()
        _repeats(group, columns, cut, counter)
    return cut


def group_columns(graph: onnx.GraphProto, names: Sequence[str], ops: Sequence[str], node_op: Sequence[int],
                  inputs: Sequence[int], input_end: Sequence[int], outputs: Sequence[int], output_end: Sequence[int],
                  tensors: int, weights: Sequence[int],
                  spatial: Callable[[], Sequence[str | None] | None] | None = None) -> dict[str, Any]:
    """A graph's groups as columns: ``groupParent`` (-1: the graph itself), ``groupKind``, ``groupLabel``,
    ``groupNote``, ``groupTitle`` (unique), ``groupSize``, numbered parents first in file order, and
    ``nodeGroup``, each node's innermost group (-1: drawn in the graph itself).

    ``spatial``, asked only for a graph too big to draw whole, gives each node's spatial size (``"40×40"``,
    ``"H/8×W/8"``; None: none of its own), from which unscoped CNNs are cut into stages."""
    columns = _Columns(ops, node_op, inputs, input_end, outputs, output_end, tensors, weights)
    scopes = node_scopes(graph, names)
    if any(scopes):
        _adopt(scopes, columns.consumers())
    columns.order = columns.keys()
    sizes = spatial() if spatial is not None and len(node_op) > SHOW else None
    if sizes is not None:  # a constant's shape (a 3×3 kernel) is no size the graph computes at
        sizes = [None if constant else size for size, constant in zip(sizes, columns.constant_node.tolist())]
        if not any(scopes):
            columns.order = columns.by_size(columns.order, sizes)
    root = _scope_tree(scopes, columns.order)
    _simplify(root, columns, None, [0])
    _intervals(root, columns)
    _finish(root, columns, sizes)
    out: dict[str, list[Any]] = {key: [] for key in
                                 ("groupParent", "groupKind", "groupLabel", "groupNote", "groupTitle", "groupSize")}
    node_group = [-1] * len(node_op)
    titles: set[str] = set()

    def number(group: _Group, parent: int) -> int:
        """Pre-order: this group's number, then its sub-groups'; returns its node count."""
        me = len(out["groupParent"])
        title, copy = group.title, 1
        while title in titles:  # two stages of one size, two ranges of the same operators
            copy += 1
            title = f"{group.title} [{copy}]"
        titles.add(title)
        for key, value in (("groupParent", parent), ("groupKind", group.kind), ("groupLabel", group.label),
                           ("groupNote", group.note), ("groupTitle", title), ("groupSize", 0)):
            out[key].append(value)
        size = 0
        for member in group.members:
            if isinstance(member, int):
                node_group[member] = me
                size += 1
            else:
                size += number(member, me)
        out["groupSize"][me] = size
        return size

    for member in root.members:
        if isinstance(member, _Group):
            number(member, -1)
    return {**out, "nodeGroup": node_group}
