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
* **ranges** last: whatever still has more than ``SHOW`` members is split into consecutive ranges.

The answer is columns (``group_columns``): groups numbered parents first in file order (pre-order), so
a group's descendants are the groups numbered after it up to its subtree's end, and each node's
innermost group. It runs in the worker with the graph's columns: about 1 s for 100k nodes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx

SHOW = 48  # members an expanded group draws directly, at most
MIN_REPEAT = 3  # numbered scopes, or chain pieces, that make a series
MAX_PERIOD = 8  # chain pieces in one repeat, at most
NAME_SCOPES = "pkg.torch.onnx.name_scopes"  # a dynamo export's module path of each node

_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")
_NUMBERED = re.compile(r"^(.*?)(\d+)$")

Scope = tuple[str, ...]


@dataclass(eq=False)
class _Group:
    kind: str  # scope | series | repeat | range
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
        scopes.append(scope or name_scope(name))
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
        self.order: list[float] = []

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
        return keys

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
        for node in run:
            pieces[-1].append(node)
            if cut[node] and not columns.constant_node[node]:
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


def _ranges(group: _Group, keys: list[float]) -> None:
    """More than ``SHOW`` members: runs of plain nodes become ranges first (the scopes stay in sight),
    then, if still too many, consecutive ranges of all members, at most ``SHOW`` a level."""
    if len(group.members) <= SHOW:
        return
    runs: list[int | _Group] = []
    run: list[int | _Group] = []
    for member in [*group.members, None]:
        if isinstance(member, int):
            run.append(member)
            continue
        if len(run) > 1:
            pieces = -(-len(run) // SHOW)
            step = -(-len(run) // pieces)
            for start in range(0, len(run), step):
                part = run[start:start + step]
                label = _range_label(part, keys)
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
            label = _range_label(part, keys)
            runs.append(_Group("range", label, f"{group.title}/{label}".lstrip("/"), members=part))
        group.members = runs
    for piece in group.members:
        if isinstance(piece, _Group) and piece.kind == "range":
            _ranges(piece, keys)


def _range_label(part: Sequence[int | _Group], keys: list[float]) -> str:
    """"layers.0–15" for a range of numbered units, "#0–520" of a chain's repeats, else "nodes 120–239"."""
    first, last = part[0], part[-1]
    if isinstance(first, _Group) and isinstance(last, _Group):
        if first.kind == "range" and last.kind == "range":
            return f"{first.label.split('–')[0]}–{last.label.split('–')[-1]}"
        head, tail = _NUMBERED.match(first.label), _NUMBERED.match(last.label)
        if head and tail and head.group(1) == tail.group(1):
            return f"{head.group(1)}{head.group(2)}–{tail.group(2)}"
    return f"nodes {_place(first, keys, min)}–{_place(last, keys, max)}"


def _place(member: int | _Group, keys: list[float], pick: Any) -> int:
    """Where a member sits in the file (a moved constant: where its reader is), its first or last node."""
    if isinstance(member, int):
        return math.ceil(keys[member])
    return int(pick(_place(m, keys, pick) for m in member.members))


def _simplify(group: _Group, columns: _Columns, cut: list[bool] | None, counter: list[int]) -> list[bool] | None:
    """Bottom up: one-node scopes dissolve, a scope holding only one scope merges with it, numbered
    scopes make series, long runs of nodes their repeats, and what is still too long its ranges."""
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
    for member in group.members:
        if isinstance(member, _Group) and member.kind == "series":
            _ranges(member, columns.order)
    _ranges(group, columns.order)
    return cut


def group_columns(graph: onnx.GraphProto, names: Sequence[str], ops: Sequence[str], node_op: Sequence[int],
                  inputs: Sequence[int], input_end: Sequence[int], outputs: Sequence[int], output_end: Sequence[int],
                  tensors: int, weights: Sequence[int]) -> dict[str, Any]:
    """A graph's groups as columns: ``groupParent`` (-1: the graph itself), ``groupKind``, ``groupLabel``,
    ``groupNote``, ``groupTitle`` (unique), ``groupSize``, numbered parents first in file order, and
    ``nodeGroup``, each node's innermost group (-1: drawn in the graph itself)."""
    columns = _Columns(ops, node_op, inputs, input_end, outputs, output_end, tensors, weights)
    scopes = node_scopes(graph, names)
    if any(scopes):
        _adopt(scopes, columns.consumers())
    columns.order = columns.keys()
    root = _scope_tree(scopes, columns.order)
    _simplify(root, columns, None, [0])
    out: dict[str, list[Any]] = {key: [] for key in
                                 ("groupParent", "groupKind", "groupLabel", "groupNote", "groupTitle", "groupSize")}
    node_group = [-1] * len(node_op)
    titles: set[str] = set()

    def number(group: _Group, parent: int) -> int:
        """Pre-order: this group's number, then its sub-groups'; returns its node count."""
        me = len(out["groupParent"])
        title = group.title
        while title in titles:
            title += "'"
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
