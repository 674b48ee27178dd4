"""The carried-state inputs of Loop and Scan bodies, checked against the values that start them.

A body input that holds a carried state is not a contract with a caller: at the first iteration
it holds the state's initial value, which the enclosing graph derives. A declared dim that the
initial value contradicts (a body input pinned to the export's batch, ``[2, 16]``, where the Loop
starts from ``[batch, 16]``) is stale. A fix writes a dim only where the body is proven to hand it
on unchanged at every iteration (engines/carried_state.py); a state that grows keeps no size of its
first iteration. The body's own tensors are derived from that proven state, so they are checked
like any other declaration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnx_lint.engines.carried_state import state_slots
from onnx_lint.lint.declarations import Declaration
from onnx_lint.model.edits import DimProof
from onnx_lint.model.graphs import GraphScope
from onnx_lint.model.shapes import TensorInfo, value_tensor_info

if TYPE_CHECKING:
    from onnx_lint.lint.context import LintContext


def state_declarations(ctx: LintContext) -> list[Declaration]:
    """A ``Declaration`` (kind ``input``) for each carried-state input of every Loop and Scan body that
    declares a shape, derived from the state's initial value; ``state_agrees`` holds the dims a fix may
    write (those proven to hold at every iteration)."""
    found: list[Declaration] = []
    for scope in ctx.scopes:
        node, enclosing = scope.owner_node, scope.parent
        if node is None or enclosing is None or not scope.path.endswith("/body"):
            continue
        for body_index, _output_index, initial, _final in state_slots(node, scope.graph):
            value = scope.graph.input[body_index]
            declared = value_tensor_info(value)
            if declared is None or declared.dims is None:
                continue
            start, engine = _derived_in(ctx, enclosing, initial)
            if start is None or start.dims is None or len(start.dims) != len(declared.dims):
                continue  # no rank to compare
            decl = Declaration(scope.path, "input", body_index, value.name, declared,
                               TensorInfo(start.elem_type or declared.elem_type, start.dims), engine)
            decl.state_agrees = set(ctx.oracle.carried.get((scope.path, body_index), ()))
            basis = f"every iteration: the initial value '{initial}', handed on unchanged by the body"
            decl.number_proofs = {i: DimProof(str(engine), basis) for i in decl.state_agrees
                                  if isinstance(start.dims[i], int)}
            found.append(decl)
    return found


def _derived_in(ctx: LintContext, scope: GraphScope, name: str) -> tuple[TensorInfo | None, str | None]:
    """What the engines derive for ``name`` where it resolves, from ``scope`` outward."""
    defining = scope.lookup(name)
    if defining is None:
        return None, None
    return ctx.oracle.derived(defining.path, name)
