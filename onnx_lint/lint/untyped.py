"""Tensors ONNX's inference left without an element type, grouped by the node where it stopped.

Each group carries the engine's own words for its root-cause node (that node inferred alone,
with what the whole-model run knew around it), so OL003 says why, not only what.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import onnx

from onnx_lint.engines.node_inference import NO_TYPE, NodeFailure, explain_untyped, has_elem_type
from onnx_lint.engines.strip import INLINE_ELEMENTS
from onnx_lint.model.graphs import ONNX_DOMAINS, GraphScope, onnx_domain, resolve_graph, topological_order
from onnx_lint.model.tensors import constant_node_tensor

if TYPE_CHECKING:
    from onnx_lint.lint.context import LintContext


def untyped_groups(ctx: LintContext) -> list[UntypedGroup]:
    """Consumed or output tensors without element type, grouped by root-cause node."""
    groups: list[UntypedGroup] = []
    unexplained: dict[tuple[str, int], tuple[UntypedGroup, str]] = {}
    for scope in ctx.scopes:
        for group, otherwise in _untyped_in(ctx, scope):
            groups.append(group)
            if group.node_index is not None and not group.message:
                unexplained[(group.graph, group.node_index)] = (group, otherwise)
    if unexplained:  # the node failed on values data propagation computed upstream: ask strict inference
        strict = ctx.oracle.strict_messages(list(unexplained))
        for key, (group, otherwise) in unexplained.items():
            group.message = strict.get(key, otherwise)
    return groups


def covered_failures(ctx: LintContext) -> list[tuple[GraphScope, int, str]]:
    """Nodes where ONNX's inference fails with an error of its own (``Axis has less than the requested
    k elements``) while declared value_info types cover the tensors it left untyped: OL003 then has
    nothing to report (the types are declared, or a fix filled them), yet the full checker and ONNX
    Runtime still refuse the node. Custom operators without a schema are not failures."""
    reported = {(g.graph, g.node_index) for g in ctx.untyped_groups}
    found: list[tuple[GraphScope, int, str]] = []
    for scope in ctx.scopes:
        if scope.path not in ctx.uninferred_outputs:
            continue
        values = ctx.oracle.values(scope.path)
        untyped = {out for node in scope.graph.node for out in node.output
                   if out and (values.get(out) is None or not has_elem_type(values[out].type))}
        for index, node in enumerate(scope.graph.node):
            if (scope.path, index) in reported or not any(o in untyped for o in node.output):
                continue
            if any(name in untyped for name in node.input):
                continue  # downstream of another failure: that node is the root
            message = node_failure(ctx, scope, index).message
            if message and "schema" not in message and "custom operator" not in message:
                found.append((scope, index, message))
    return found


def _typed(ctx: LintContext, scope: GraphScope, name: str, annotated: bool = False) -> bool:
    for current in scope.outward():
        table = (ctx.oracle.annotated_values(current.path) if annotated
                 else ctx.oracle.values(current.path))
        value = table.get(name)
        if value is not None:
            return has_elem_type(value.type)
        if isinstance(current.initializers().get(name), onnx.TensorProto):  # a dense initializer
            return True
    return False


# Operators whose ONNX inference walks their graph attributes: any other operator's body (FlexAttention's
# ``score_mod``, a custom operator's) is never inferred, so nothing "stops" there.
_INFERRED_BODIES = frozenset({"If", "Loop", "Scan", "SequenceMap"})


def _never_inferred(scope: GraphScope) -> bool:
    owner = scope.owner_node
    return owner is not None and (onnx_domain(owner.domain) != "" or owner.op_type not in _INFERRED_BODIES)


def _untyped_in(ctx: LintContext, scope: GraphScope) -> list[tuple[UntypedGroup, str]]:
    """The untyped tensors of one graph by root-cause node, each with what to say should strict inference
    have nothing for a node that inferred alone without error."""
    graph = scope.graph
    if _never_inferred(scope):
        return []
    values = ctx.oracle.values(scope.path)
    outputs_typed = all(v.name in values and has_elem_type(values[v.name].type) for v in graph.output)
    if scope.path not in ctx.uninferred_outputs and outputs_typed:
        return []
    produced = scope.producers()
    needed: list[str] = []
    seen: set[str] = set()
    candidates = [i for node in graph.node for i in node.input if i and i in produced]
    candidates += [v.name for v in graph.output]
    for name in candidates:
        if name in seen:
            continue
        seen.add(name)
        value = values.get(name)
        if value is None or not has_elem_type(value.type):
            needed.append(name)
    if not needed:
        return []
    untyped = [n for n in needed if not _typed(ctx, scope, n, annotated=True)]
    if not untyped:
        return []
    # Walk producers in node order: a node whose untyped inputs have roots inherits them.
    roots_of: dict[str, set[int]] = {}
    untyped_all = {
        out for node in graph.node for out in node.output
        if out and (values.get(out) is None or not has_elem_type(values[out].type))
    }
    for index in topological_order(graph):
        node = graph.node[index]
        outs = [o for o in node.output if o in untyped_all]
        if not outs:
            continue
        inherited: set[int] = set()
        for name in node.input:
            inherited |= roots_of.get(name, set())
        for out in outs:
            roots_of[out] = inherited or {index}
    grouped: dict[int | None, list[str]] = defaultdict(list)
    for name in untyped:
        roots: list[int | None] = list(sorted(roots_of.get(name, set()))) or [None]
        for root in roots:
            grouped[root].append(name)
    result = []
    for at, tensors in grouped.items():
        node, message, otherwise = None, "no node produces it", NO_TYPE
        if at is not None:  # the engine's own words for the root-cause node, from inferring it alone
            node, failure = graph.node[at], node_failure(ctx, scope, at)
            message = failure.message or ""
            if failure.message is None:
                otherwise = failure.otherwise
        result.append((UntypedGroup(scope.path, at, node, list(dict.fromkeys(tensors)), message), otherwise))
    return result


def node_failure(ctx: LintContext, scope: GraphScope, index: int) -> NodeFailure:
    """What ONNX's inference says about node ``index`` of ``scope`` inferred on its own, with what the
    whole-model run knew around it, and the node as that run saw it (subgraphs stripped too)."""
    seen = ctx.oracle.inferred
    node = resolve_graph(seen, scope.path).node[index] if seen is not None else scope.graph.node[index]
    return explain_untyped(node, ctx._model_facts, lambda name: _type_in(ctx, scope, name),
                           lambda name: _data_in(ctx, scope, name))


def _type_in(ctx: LintContext, scope: GraphScope, name: str) -> onnx.TypeProto | None:
    """What ONNX's inference knew of ``name``'s type where ``scope`` reads it (enclosing graphs too)."""
    for current in scope.outward():
        value = ctx.oracle.values(current.path).get(name)
        if value is not None:
            return value.type if has_elem_type(value.type) else None
        tensor = current.initializers().get(name)
        if isinstance(tensor, onnx.SparseTensorProto):
            return onnx.helper.make_sparse_tensor_type_proto(tensor.values.data_type, list(tensor.dims))
        if tensor is not None:
            return onnx.helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims))
    return None


def _data_in(ctx: LintContext, scope: GraphScope, name: str) -> onnx.TensorProto | None:
    """The constant value whole-model inference had for ``name``: a small in-memory initializer or the
    output of a ``Constant`` node of the same graph (the stripped copy it ran on holds no other weight
    bytes, and onnx does not pass an enclosing graph's values into a subgraph)."""
    tensor = scope.initializers().get(name)
    if tensor is not None:  # the stripped copy turned larger ones into graph inputs; sparse ones are not read
        small = isinstance(tensor, onnx.TensorProto) and math.prod(tensor.dims) <= INLINE_ELEMENTS
        tensor = tensor if small else None
    else:
        producer = scope.producers().get(name)
        node = scope.graph.node[producer] if producer is not None else None
        is_constant = node is not None and node.op_type == "Constant" and node.domain in ONNX_DOMAINS
        tensor = constant_node_tensor(node) if node is not None and is_constant else None
    if tensor is None or tensor.data_location == onnx.TensorProto.EXTERNAL:
        return None  # external bytes are not loaded
    return tensor


@dataclass
class UntypedGroup:
    """Tensors left without element type, traced back to the node where inference stopped."""

    graph: str
    node_index: int | None
    node: onnx.NodeProto | None
    tensors: list[str]
    message: str
