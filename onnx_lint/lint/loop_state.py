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

from onnx_lint.engines.engine import Engine
from onnx_lint.lint.declarations import Declaration
from onnx_lint.model.edits import DimProof
from onnx_lint.model.graphs import resolve_graph
from onnx_lint.model.shapes import TensorInfo, value_tensor_info

if TYPE_CHECKING:
    from onnx_lint.lint.context import LintContext


def state_declarations(ctx: LintContext) -> list[Declaration]:
    """A ``Declaration`` (kind ``input``) for each carried-state input of every Loop and Scan body that
    declares a shape, derived from the state's initial value (the oracle's ``carried_states``: ONNX's
    inference of the enclosing graph); ``state_agrees`` holds the dims a fix may write (those proven to
    hold at every iteration)."""
    found: list[Declaration] = []
    for state in ctx.oracle.carried_states:
        value = resolve_graph(ctx.model, state.body).input[state.input_index]
        declared = value_tensor_info(value)
        start = state.start.dims or ()
        if declared is None or declared.dims is None or len(start) != len(declared.dims):
            continue  # nothing declared to compare, or no rank to compare with
        decl = Declaration(state.body, "input", state.input_index, value.name, declared,
                           TensorInfo(state.start.elem_type or declared.elem_type, start), Engine.ONNX)
        decl.state_agrees = set(ctx.oracle.carried.get((state.body, state.input_index), ()))
        basis = f"every iteration: the initial value '{state.initial}', handed on unchanged by the body"
        decl.number_proofs = {i: DimProof(Engine.ONNX, basis) for i in decl.state_agrees if isinstance(start[i], int)}
        found.append(decl)
    return found
