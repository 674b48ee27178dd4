"""What changed between a model and its rewritten twin: a fix, a quantization, an FP16 conversion, onnxsim.

Users chain tools, and each says little about what it did: ``--fix`` rewrites declarations, ORT's
quantizers wrap operators in QuantizeLinear/DequantizeLinear or swap them for integer kernels, FP16
converters retype tensors and keep a few nodes in FP32 behind Casts, onnxsim and onnxslim fold and fuse
nodes away. ``compare_models`` answers, for two linted models, *which node now runs in what precision*,
*which declarations changed*, *what was removed, added or rewritten*, with each claim read from the two
files (a node's precision is the element type ONNX's inference gives its float inputs, or the
quantized producer of those inputs; where inference has no type, nothing is claimed).

Nodes are matched by name where both files name them uniquely, then by their first output's name (a
quantizer that replaces ``MatMul`` keeps its output's name), then by op type and inputs. Q/DQ pairs,
Casts and ``DynamicQuantizeLinear`` that appear are the plumbing of a precision change: counted by op,
never listed one by one (a quantized 100k-node model adds 200k of them).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import onnx

from onnx_lint.lint.context import LintContext
from onnx_lint.model.graphs import ONNX_DOMAINS, GraphScope
from onnx_lint.model.provenance import read_record
from onnx_lint.model.shapes import format_info, value_tensor_info

T = onnx.TensorProto
# The element types a node computes in, as people name them.
_FLOAT_NAMES: dict[int, str] = {T.FLOAT: "FP32", T.FLOAT16: "FP16", T.BFLOAT16: "BF16", T.DOUBLE: "FP64"}
_QUANT_NAMES: dict[int, str] = {T.INT8: "INT8", T.UINT8: "INT8", T.INT16: "INT16", T.UINT16: "INT16", T.INT4: "INT4",
                T.UINT4: "INT4", T.FLOAT8E4M3FN: "FP8", T.FLOAT8E4M3FNUZ: "FP8", T.FLOAT8E5M2: "FP8",
                T.FLOAT8E5M2FNUZ: "FP8"}
# Operators that compute in integers themselves (ONNX Runtime's QOperator format and dynamic quantization).
INTEGER_OPS = frozenset({
    "QLinearConv", "QLinearMatMul", "QLinearAdd", "QLinearMul", "ConvInteger", "MatMulInteger",
    "DynamicQuantizeMatMul", "MatMulIntegerToFloat", "QAttention", "DynamicQuantizeLSTM", "QGemm",
    "QLinearGlobalAveragePool", "QLinearConcat", "QLinearLeakyRelu", "QLinearSigmoid", "QLinearSoftmax",
    "QLinearAveragePool", "QLinearReduceMean", "QLinearWhere", "QEmbedLayerNormalization", "QOrderedMatMul",
})
# What a precision change adds around the nodes it changes.
PLUMBING_OPS = frozenset({"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "Cast"})
# Operators that move or select values without computing: their precision is their input's, and no claim.
MOVES_DATA = frozenset({"Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Transpose", "Shape", "Size",
                        "Expand", "Slice", "Split", "Concat", "Gather", "GatherElements", "GatherND", "Tile", "Pad"})
# Listed first among precision changes: where the arithmetic (and the speed-up) is.
HEAVY_OPS = frozenset({"Conv", "ConvTranspose", "MatMul", "Gemm", "Attention", "MultiHeadAttention", "LSTM", "GRU"})
MAX_LISTED = 5000  # changes of one kind listed in full; beyond, only counted (the view and JSON stay bounded)

Kind = Literal["precision", "kept", "rewritten", "removed", "added"]


@dataclass(frozen=True)
class NodeChange:
    """One node that changed: in ``graph`` (a graph path), its index in the twin (``index``, None when removed)
    and in the original (``before``, None when added)."""

    kind: Kind
    graph: str
    name: str
    op: str
    detail: str
    index: int | None
    before: int | None
    precision: str | None = None  # the precision it runs in now (INT8, FP16, ...), for "precision" and "kept"

    def to_json(self) -> dict:
        return {"kind": self.kind, "graph": self.graph, "name": self.name, "op": self.op, "detail": self.detail,
                "index": self.index, "before": self.before, "precision": self.precision}


@dataclass(frozen=True)
class DeclarationChange:
    """A graph input, output or value_info entry whose declared type changed, appeared or went away."""

    graph: str
    tensor: str
    where: Literal["input", "output", "value_info"]
    before: str | None  # the declared type in ONNX's text syntax; None: not declared there
    after: str | None
    node: int | None  # the twin's node that produces the tensor (None for a graph input or a removed tensor)
    node_before: int | None = None  # the original's node that produced it

    @property
    def change(self) -> Literal["changed", "dropped", "added"]:
        """``changed`` (declared in both, differently), ``dropped`` (only before), ``added`` (only after)."""
        return "changed" if self.before and self.after else "dropped" if self.before else "added"

    def to_json(self) -> dict:
        return {"graph": self.graph, "tensor": self.tensor, "where": self.where, "before": self.before,
                "after": self.after, "node": self.node, "nodeBefore": self.node_before, "change": self.change}


@dataclass(frozen=True)
class Side:
    """One of the two models in numbers."""

    file: str
    nodes: int
    weight_bytes: int
    precision: dict[str, int]  # nodes per precision (only nodes whose precision is known)

    def to_json(self) -> dict:
        return {"file": self.file, "nodes": self.nodes, "weightBytes": self.weight_bytes,
                "precision": self.precision}


@dataclass
class Comparison:
    """Everything ``compare_models`` found; ``counts`` holds the true totals where a list was cut short."""

    before: Side
    after: Side
    ops: list[tuple[str, int, int]]  # op type, count before, count after: only where they differ
    nodes: list[NodeChange] = field(default_factory=list)
    declarations: list[DeclarationChange] = field(default_factory=list)
    weights_retyped: dict[str, int] = field(default_factory=dict)  # "float -> float16": how many initializers
    counts: Counter[str] = field(default_factory=Counter)  # per node kind, and "declarations"

    @property
    def identical(self) -> bool:
        return not (self.nodes or self.declarations or self.ops or self.weights_retyped)

    def to_json(self) -> dict:
        return {"before": self.before.to_json(), "after": self.after.to_json(),
                "ops": [list(row) for row in self.ops], "nodes": [c.to_json() for c in self.nodes],
                "declarations": [d.to_json() for d in self.declarations], "weightsRetyped": self.weights_retyped,
                "counts": dict(self.counts), "identical": self.identical}


def order_twins(first: LintContext, second: LintContext) -> tuple[LintContext, LintContext, str]:
    """Which of two models is the original: the one the other's quantize record names as its source, else
    the older file (a fix, a quantizer, a converter writes its twin after reading it). Returns (before,
    after, why), ``why`` worded for the view: "q.onnx was quantized from m.onnx"."""
    for ctx, other in ((first, second), (second, first)):
        record = read_record(ctx.model)
        if record is not None and record.source == Path(other.display).name:
            return other, ctx, f"{Path(ctx.display).name} was quantized from {record.source}"
    times = []
    for ctx in (first, second):
        try:
            times.append(Path(ctx.display).stat().st_mtime)
        except OSError:
            times.append(0.0)
    if times[0] > times[1]:
        return second, first, f"{Path(first.display).name} is the newer file"
    return first, second, f"{Path(second.display).name} is the newer file" if times[0] < times[1] else "as given"


def compare_models(before: LintContext, after: LintContext) -> Comparison:
    """The changes from ``before`` to ``after`` (see the module docstring), graph by graph where both have it."""
    sides = [_Graphs(before), _Graphs(after)]
    ops_before = Counter(_op(n) for s in before.scopes for n in s.graph.node)
    ops_after = Counter(_op(n) for s in after.scopes for n in s.graph.node)
    ops = sorted(((op, ops_before[op], ops_after[op]) for op in ops_before.keys() | ops_after.keys()
                  if ops_before[op] != ops_after[op]), key=lambda row: (-abs(row[2] - row[1]), row[0]))
    result = Comparison(sides[0].side(), sides[1].side(), ops)
    after_paths = {s.path: s for s in after.scopes}
    converted = False
    changes: list[NodeChange] = []
    for scope in before.scopes:
        twin = after_paths.get(scope.path)
        if twin is None:
            continue
        found = list(_node_changes(scope, twin, sides[0], sides[1]))
        converted = converted or any(c.kind == "precision" and c.precision in _HALF for c in found)
        changes.extend(found)
        result.declarations.extend(_declaration_changes(scope, twin))
    # What a strict tool sees first: a type that changed, then one that went away, then annotations added.
    result.declarations.sort(key=lambda d: ("changed", "dropped", "added").index(d.change))
    if not converted:  # "kept in FP32" means something only beside nodes that moved to a half type
        changes = [c for c in changes if c.kind != "kept"]
    changes.sort(key=lambda c: c.kind == "precision" and c.op.rpartition(".")[2] not in HEAVY_OPS)  # stable
    for change in changes:
        result.counts[change.kind] += 1
        if result.counts[change.kind] <= MAX_LISTED:
            result.nodes.append(change)
    result.counts["declarations"] = len(result.declarations)
    result.counts.update(f"declarations.{d.change}" for d in result.declarations)
    del result.declarations[MAX_LISTED:]
    result.weights_retyped = _retyped_weights(before.scopes[0], after.scopes[0])
    return result


_HALF = frozenset({"FP16", "BF16"})


def _op(node: onnx.NodeProto) -> str:
    return node.op_type if node.domain in ONNX_DOMAINS else f"{node.domain}.{node.op_type}"


class _Graphs:
    """One model's precision facts, computed once per node on demand."""

    def __init__(self, ctx: LintContext) -> None:
        self.ctx = ctx
        self._cache: dict[tuple[str, int], str | None] = {}
        self._nodes: dict[str, list[onnx.NodeProto]] = {}

    def side(self) -> Side:
        counts: Counter[str] = Counter()
        for scope in self.ctx.scopes:
            for i, node in enumerate(scope.graph.node):
                if node.op_type not in PLUMBING_OPS:
                    found = self.precision(scope, i)
                    if found is not None:
                        counts[found] += 1
        weights = sum(_tensor_bytes(t) for s in self.ctx.scopes for t in s.graph.initializer)
        return Side(self.ctx.display, sum(len(s.graph.node) for s in self.ctx.scopes), weights,
                    dict(counts.most_common()))

    def elem_type(self, scope: GraphScope, name: str) -> int:
        """A tensor's element type: an initializer's, else ONNX inference's entry (its element type alone: a
        100k-node model has 100k entries, and their dims are not needed here), else whatever another engine
        derived; 0 where none typed it."""
        weight = scope.initializers().get(name)
        if isinstance(weight, onnx.TensorProto):
            return weight.data_type
        value = self.ctx.oracle.values(scope.path).get(name)
        if value is not None and value.type.HasField("tensor_type") and value.type.tensor_type.elem_type:
            return value.type.tensor_type.elem_type
        info, _engine = self.ctx.oracle.derived(scope.path, name)
        return info.elem_type if info is not None else 0

    def precision(self, scope: GraphScope, index: int) -> str | None:
        """What the node computes in: INT8 etc. when its float inputs come from DequantizeLinear or it is an
        integer kernel, else its first float input's type; None when that is unknown or it has none."""
        key = (scope.path, index)
        if key not in self._cache:
            self._cache[key] = self._precision(scope, self.nodes(scope)[index])
        return self._cache[key]

    def nodes(self, scope: GraphScope) -> list[onnx.NodeProto]:
        """A graph's nodes as a list, made once (indexing a protobuf field costs more than a list's)."""
        found = self._nodes.get(scope.path)
        if found is None:
            found = self._nodes[scope.path] = list(scope.graph.node)
        return found

    def _precision(self, scope: GraphScope, node: onnx.NodeProto) -> str | None:
        if node.op_type in INTEGER_OPS:
            return "INT8"
        if node.op_type == "MatMulNBits":
            bits = next((a.i for a in node.attribute if a.name == "bits"), 4)
            return f"INT{bits} weights"  # weight-only: it computes in float on dequantized blocks
        if node.op_type in MOVES_DATA:
            return None
        producers, nodes = scope.producers(), self.nodes(scope)
        activations: list[str] = []  # what the dequantized inputs were stored in: computed values ...
        weights: list[str] = []  # ... and initializers
        weight_names = scope.initializer_names()
        for name in node.input:
            at = producers.get(name) if name else None
            if at is not None and nodes[at].op_type == "DequantizeLinear":
                source = nodes[at].input[0]
                stored = _QUANT_NAMES.get(self.elem_type(scope, source), "INT8")
                (weights if source in weight_names else activations).append(stored)
        if activations:
            return max(activations, key=activations.count)
        if weights:  # weight-only quantization: the node computes in float on dequantized weights
            return f"{max(weights, key=weights.count)} weights"
        for name in node.input:
            if name:
                elem = self.elem_type(scope, name)
                if elem in _FLOAT_NAMES:
                    return _FLOAT_NAMES[elem]
        return None


def _match(before: onnx.GraphProto, after: onnx.GraphProto) -> tuple[dict[int, int], list[int], list[int]]:
    """Pairs of (before, after) node indices for the same node, then the unmatched on each side.

    By name where both graphs name it once; then by the first output's name; then by op type and inputs."""
    pairs: dict[int, int] = {}
    _pair_unique(pairs, ((n.name, i) for i, n in enumerate(before.node) if n.name),
                 ((n.name, i) for i, n in enumerate(after.node) if n.name))
    taken = set(pairs.values())
    _pair_unique(pairs, ((n.output[0], i) for i, n in enumerate(before.node) if i not in pairs and n.output
                         and n.output[0]),
                 ((n.output[0], i) for i, n in enumerate(after.node) if i not in taken and n.output and n.output[0]))
    taken = set(pairs.values())
    _pair_unique(pairs, ((_signature(n), i) for i, n in enumerate(before.node) if i not in pairs),
                 ((_signature(n), i) for i, n in enumerate(after.node) if i not in taken))
    taken = set(pairs.values())
    return (pairs, [i for i in range(len(before.node)) if i not in pairs],
            [i for i in range(len(after.node)) if i not in taken])


def _signature(node: onnx.NodeProto) -> str:
    return "\0".join((node.domain, node.op_type, *node.input))


def _pair_unique(pairs: dict[int, int], before: Iterable[tuple[str, int]], after: Iterable[tuple[str, int]]) -> None:
    """Add the pairs whose key occurs exactly once on each side."""
    first: dict[str, int] = {}
    seen_twice: set[str] = set()
    for key, i in before:
        if key in first:
            seen_twice.add(key)
        first[key] = i
    second: dict[str, int] = {}
    for key, i in after:
        if key in second:
            seen_twice.add(key)
        second[key] = i
    for key, i in first.items():
        if key not in seen_twice and key in second:
            pairs[i] = second[key]


def _node_changes(scope: GraphScope, twin: GraphScope, before: _Graphs, after: _Graphs) -> Iterator[NodeChange]:
    pairs, removed, added = _match(scope.graph, twin.graph)
    added_set = set(added)
    old_nodes, new_nodes = before.nodes(scope), after.nodes(twin)
    for i, j in pairs.items():
        old, new = old_nodes[i], new_nodes[j]
        if new.op_type in PLUMBING_OPS and old.op_type in PLUMBING_OPS:
            continue
        name = _name(old, i)  # as the user knows it, from the original
        was, now = before.precision(scope, i), after.precision(twin, j)
        if _op(old) != _op(new):
            kernel = _integer_kernel_before(twin, j, added_set)
            if kernel is not None:
                now = after.precision(twin, kernel)
                replaced = twin.graph.node[kernel]
                detail = f"{_op(old)} → {_op(replaced)} {_name(replaced, kernel)!r}"
                detail += f" ({was} → {now})" if was else ""
                yield NodeChange("precision", scope.path, name, _op(old), detail, kernel, i, now)
                added_set -= _added_ancestors(twin, j, added_set)  # its scales' Mul, Casts: this change's plumbing
            else:
                renamed = f" {_name(new, j)!r}" if _name(new, j) != name else ""
                yield NodeChange("rewritten", scope.path, name, _op(old), f"{_op(old)} → {_op(new)}{renamed}", j, i,
                                 now)
            continue
        if was is not None and now is not None and was != now:
            how = " (Q/DQ)" if _reads_dequantized(twin, new) else ""
            yield NodeChange("precision", scope.path, name, _op(new), f"{was} → {now}{how}", j, i, now)
        elif was == "FP32" and now == "FP32":
            yield NodeChange("kept", scope.path, name, _op(new), "stays FP32", j, i, now)
        else:
            changed = _attribute_changes(old, new)
            if changed:
                yield NodeChange("rewritten", scope.path, name, _op(new), changed, j, i, now)
    for i in removed:
        node = old_nodes[i]
        yield NodeChange("removed", scope.path, _name(node, i), _op(node), f"{_op(node)} removed", None, i)
    for j in sorted(added_set):
        node = new_nodes[j]
        if node.op_type in PLUMBING_OPS:
            continue
        yield NodeChange("added", scope.path, _name(node, j), _op(node), f"{_op(node)} added", j, None,
                         after.precision(twin, j))


def _name(node: onnx.NodeProto, index: int) -> str:
    """A node as a reader finds it: its name, else its first output's, else its position."""
    return node.name or (node.output[0] if node.output and node.output[0] else f"node[{index}]")


def _added_ancestors(scope: GraphScope, index: int, added: set[int], depth: int = 4) -> set[int]:
    """The added nodes that feed ``index`` within ``depth`` steps, through added nodes only."""
    found: set[int] = set()
    frontier = [index]
    producers = scope.producers()
    for _ in range(depth):
        step = [at for i in frontier for name in scope.graph.node[i].input if name
                for at in (producers.get(name),) if at is not None and at in added and at not in found]
        found.update(step)
        frontier = step
    return found


def _integer_kernel_before(scope: GraphScope, index: int, added: set[int], depth: int = 3) -> int | None:
    """An integer kernel among the added nodes just before the twin's node (dynamic quantization replaces
    ``MatMul`` by ``MatMulInteger`` followed by a scale's ``Mul``, which keeps the output's name)."""
    node = scope.graph.node[index]
    if node.op_type in INTEGER_OPS or node.op_type == "MatMulNBits":
        return index
    if depth == 0:
        return None
    producers = scope.producers()
    for name in node.input:
        at = producers.get(name) if name else None
        if at is not None and at in added:
            found = _integer_kernel_before(scope, at, added, depth - 1)
            if found is not None:
                return found
    return None


def _reads_dequantized(scope: GraphScope, node: onnx.NodeProto) -> bool:
    producers = scope.producers()
    return any(name in producers and scope.graph.node[producers[name]].op_type == "DequantizeLinear"
               for name in node.input if name)


def _attribute_changes(old: onnx.NodeProto, new: onnx.NodeProto) -> str:
    """"attribute axis changed" for attributes that differ (values of graph attributes are not compared)."""
    if old.attribute == new.attribute:  # compared in C, the common case
        return ""

    def table(node: onnx.NodeProto) -> dict[str, bytes]:
        return {a.name: a.SerializeToString() for a in node.attribute if a.type not in _GRAPH_ATTRIBUTES}

    a, b = table(old), table(new)
    names = sorted(name for name in a.keys() | b.keys() if a.get(name) != b.get(name))
    if not names:
        return ""
    return f"attribute{'s' if len(names) > 1 else ''} {', '.join(names)} changed"


_GRAPH_ATTRIBUTES = frozenset({onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS})


def _declaration_changes(scope: GraphScope, twin: GraphScope) -> Iterator[DeclarationChange]:
    producers, producers_before = twin.producers(), scope.producers()
    defined_before, defined_after = scope.unresolved_reads()[1], twin.unresolved_reads()[1]
    weights = twin.initializer_names() | scope.initializer_names()
    for where, old_list, new_list in (("input", scope.graph.input, twin.graph.input),
                                      ("output", scope.graph.output, twin.graph.output),
                                      ("value_info", scope.graph.value_info, twin.graph.value_info)):
        old = {v.name: format_info(value_tensor_info(v)) for v in old_list}
        new = {v.name: format_info(value_tensor_info(v)) for v in new_list}
        for name in [*old, *(n for n in new if n not in old)]:
            was, now = old.get(name), new.get(name)
            if was == now:
                continue
            if now is None and where == "value_info" and name not in defined_after:
                continue  # the tensor itself went away with its node: the node's removal says it
            if was is None and where == "value_info" and (name not in defined_before or name in weights):
                continue  # a new tensor of an added node (a Q/DQ's output), or a weight's (now a DQ's output)
            yield DeclarationChange(scope.path, name, where, was, now, producers.get(name),  # type: ignore[arg-type]
                                    producers_before.get(name))


def _retyped_weights(scope: GraphScope, twin: GraphScope) -> dict[str, int]:
    """Initializers of the main graph kept under their name with another element type: "float → float16": n."""
    after = {t.name: t.data_type for t in twin.graph.initializer}
    found: Counter[str] = Counter()
    for tensor in scope.graph.initializer:
        now = after.get(tensor.name)
        if now is not None and now != tensor.data_type:
            found[f"{_type_name(tensor.data_type)} → {_type_name(now)}"] += 1
    return dict(found.most_common())


def _type_name(elem: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(elem).lower()
    except ValueError:
        return str(elem)


def _tensor_bytes(tensor: onnx.TensorProto) -> int:
    """An initializer's size from its dims and type (its data is not read: it may be external)."""
    count = 1
    for dim in tensor.dims:
        count *= dim
    try:
        size = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    except (KeyError, TypeError, ValueError):
        return 0
    if tensor.data_type in (T.INT4, T.UINT4):
        return (count + 1) // 2
    return count * size
