"""The proof behind every number a fix writes (docs/design.md, "The proof obligation of a fix").

A number is written only where an engine proved it:

- ONNX's own inference derived it while the dynamic input dims were symbols: it holds for
  every size (the derivation never saw a size), so it is proven for all of them;
- two inferences with every dynamic input dim pinned to a size of its own, two different sets
  of sizes, both derived that very number;
- the runtime probe returned it in two runs at different input sizes and with different data.

Anything else is a claim, not a fact: a number ONNX Runtime's symbolic engine derived (it guesses
where it lacks an input's value: it squeezes every 1-dim for an unknown ``axes``), or a number the
file declares where the engines derive an anonymous dim. Such a number is never written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from onnx_lint.engines.engine import Engine
from onnx_lint.lint.declarations import Declaration
from onnx_lint.model.edits import DimProof
from onnx_lint.model.graphs import ROOT
from onnx_lint.model.shapes import Dim, tensor_info, value_tensor_info

if TYPE_CHECKING:
    from onnx_lint.lint.context import LintContext

# Engines whose concrete dims are symbolic derivations: true for every size of the dynamic input dims.
_SYMBOLIC_DERIVATIONS = frozenset({Engine.ONNX, Engine.ONNX_LOOP_RANK, Engine.ONNX_CARRIED_STATE})
EVERY_SIZE = "every size (derived with the dynamic input dims as symbols)"


def derived_number_proof(ctx: LintContext, decl: Declaration, index: int) -> DimProof | None:
    """The proof of the concrete dim ``index`` that an engine derived for ``decl`` (``None``: unproven)."""
    assert decl.derived is not None and decl.derived.dims is not None
    value = decl.derived.dims[index]
    if not isinstance(value, int):
        return None
    if decl.state_agrees is not None:  # a body's carried state: proven by its initial and final values alike
        return decl.number_proofs.get(index)
    if decl.derived_by in _SYMBOLIC_DERIVATIONS:
        return DimProof(str(decl.derived_by), EVERY_SIZE)
    if decl.derived_by == Engine.ORT_RUN:
        return probe_proof(ctx, decl.name, index, value) or pinned_proof(ctx, decl.graph, decl.name, index, value)
    proof = pinned_proof(ctx, decl.graph, decl.name, index, value)
    if proof is None and decl.kind == "output" and decl.graph == ROOT and ctx.probe() is not None:
        proof = probe_proof(ctx, decl.name, index, value)  # a number ONNX Runtime's symbolic engine derived
    return proof


def probe_proof(ctx: LintContext, name: str, index: int, value: int) -> DimProof | None:
    """The runtime probe's proof of a number: the same in two runs at other sizes and with other data."""
    result = ctx.oracle.probe_result
    fact = result.facts.get(name) if result is not None else None
    if fact is None or len(fact.sizes) <= index:
        return None
    if fact.follows[index] is not None or (len(fact.data_dependent) > index and fact.data_dependent[index]):
        return None
    if len(fact.branch_dependent) > index and fact.branch_dependent[index]:
        return None
    if set(fact.sizes[index]) != {value}:
        return None
    return DimProof(Engine.ORT_RUN, "two runs at different input sizes and with different data")


def pinned_number(ctx: LintContext, graph: str, name: str, index: int, run: int) -> Dim:
    """The dim ``index`` of a main-graph tensor in the ``run``-th inference with each dynamic input dim pinned
    to a size of its own (run 0 and run 1 use different sizes; each runs once per model, when first asked);
    ``None`` where it is not a main-graph tensor or the model has no dynamic input dim."""
    if graph != ROOT or not has_dynamic_inputs(ctx):
        return None
    _sizes, values = ctx.oracle.named_pins(run)
    info = value_tensor_info(values.get(name))
    return info.dims[index] if info is not None and info.dims is not None and len(info.dims) > index else None


def pinned_proof(ctx: LintContext, graph: str, name: str, index: int, value: int) -> DimProof | None:
    """The proof of a number by the two pinned inferences: both derive exactly ``value`` (the second runs
    only when the first does)."""
    if pinned_number(ctx, graph, name, index, 0) != value or pinned_number(ctx, graph, name, index, 1) != value:
        return None
    return DimProof(Engine.ONNX_NAMES_PINNED, pins_text(ctx))


def pins_text(ctx: LintContext) -> str:
    """The two sets of sizes the pinned inferences gave the input dims: ``batch = 37, L = 41; batch = 131, ...``."""
    return "; ".join(sizes_clause(ctx.oracle.named_pins(run)[0]) for run in (0, 1))


def sizes_clause(sizes: Mapping[str, int]) -> str:
    """``batch = 37, L = 41``: the sizes one pinned inference gave the named input dims."""
    return ", ".join(f"{name} = {size}" for name, size in sizes.items()) or "other sizes"


def has_dynamic_inputs(ctx: LintContext) -> bool:
    """Whether a main-graph input has a dim that is not a number: only then can a dim follow the inputs."""
    for value in ctx.model.graph.input:
        info = tensor_info(value.type)
        if info and info.dims and any(not isinstance(d, int) or d < 0 for d in info.dims):
            return True
    return False
