"""Reconciliation (docs/design.md): the dims a fix writes for a stale declaration, and their proofs.

Derived rank and proven concrete dims win; a declared name stays where the graph's dim is symbolic
and no conflict refuted it; a refuted name or number becomes a proven one or a fresh name that
claims nothing; a number no engine proved is never written (lint/proofs.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnx_lint.lint.declarations import Declaration
from onnx_lint.lint.proofs import derived_number_proof, pinned_proof
from onnx_lint.model.edits import DimProof, SetType
from onnx_lint.model.graphs import ROOT
from onnx_lint.model.shapes import Dim

if TYPE_CHECKING:
    from onnx_lint.lint.context import LintContext


def reconciled_dims(ctx: LintContext, decl: Declaration) -> tuple[Dim, ...]:
    """Reconcile (docs/design.md): derived rank and concrete dims; declared names kept where derived is symbolic."""
    return reconciled(ctx, decl)[0]


def reconciled(ctx: LintContext, decl: Declaration) -> tuple[tuple[Dim, ...], tuple[DimProof | None, ...]]:
    """The dims a fix writes for ``decl``, each number with its proof (lint/proofs.py).

    A derived number is written where an engine proved it, else left unknown. A declared number
    where the graph's dim is anonymous is kept only where the pinned inferences confirmed it; a
    refuted one becomes the input dim or expression two pinned runs prove, else an unknown dim, and
    so does an unproven one. A declared name stays where no conflict refuted it; a refuted name
    becomes a proven one, else a fresh name.
    """
    assert decl.derived is not None and decl.derived.dims is not None
    derived = decl.derived.dims
    declared = decl.declared.dims if decl.declared is not None else None
    conflicted = {c.index for c in decl.conflicts}
    dims: list[Dim] = []
    proofs: list[DimProof | None] = []
    for i, got in enumerate(derived):
        if isinstance(got, int):
            proof = derived_number_proof(ctx, decl, i)
            dims.append(got if proof is not None else None)
            proofs.append(proof)
            continue
        want = declared[i] if declared is not None and len(declared) == len(derived) else None
        if decl.state_agrees is not None and i not in decl.state_agrees and (i in conflicted or want is None):
            dims.append(None)  # a carried state's dim the body does not hand on unchanged: it may change
        elif i not in conflicted and isinstance(want, str):
            dims.append(want)
        elif i not in conflicted and isinstance(want, int) and want >= 0 and i in decl.confirmed:
            dims.append(want)
            proofs.append(decl.confirmed[i])
            continue
        elif i not in conflicted and isinstance(want, int) and want >= 0:
            dims.append(_proven_name(ctx, decl, i, got))  # an unproven number: never kept
        else:
            named = _proven_name(ctx, decl, i, got)
            if isinstance(want, str) and (named is None or named == want):
                named = _fresh_name(ctx, decl, i)  # a refuted name where the graph's dim is anonymous
            dims.append(named)  # a refuted number: the proven input dim or expression, else an unknown dim
        proofs.append(None)
    return tuple(dims), tuple(proofs)


def proven_declared(ctx: LintContext, decl: Declaration, dims: tuple[Dim, ...]
                    ) -> tuple[tuple[Dim, ...], tuple[DimProof | None, ...]]:
    """``dims`` (the declared ones, with some dims already made dynamic) with each number kept only where
    an engine proved it: the graph derives that very number, or the pinned inferences confirmed it."""
    derived = decl.derived.dims if decl.derived is not None else None
    same_rank = derived is not None and len(derived) == len(dims)
    kept: list[Dim] = []
    proofs: list[DimProof | None] = []
    for i, dim in enumerate(dims):
        proof = None
        if isinstance(dim, int) and same_rank:
            assert derived is not None
            if derived[i] == dim:
                proof = derived_number_proof(ctx, decl, i)
            elif not isinstance(derived[i], int):
                proof = decl.confirmed.get(i)
        kept.append(None if isinstance(dim, int) and proof is None else dim)
        proofs.append(proof)
    return tuple(kept), tuple(proofs)


def unproven_declared(ctx: LintContext, decl: Declaration) -> list[int]:
    """The declared numbers a fix of ``decl`` does not keep although nothing refuted them: no engine proved
    them (the fix's note names them)."""
    if not decl.comparable or decl.rank_mismatch:
        return []
    conflicted = {c.index for c in decl.conflicts}
    declared, derived = decl.dims_pair
    return [i for i, (want, got) in enumerate(zip(declared, derived))
            if isinstance(want, int) and want >= 0 and not isinstance(got, int)
            and i not in conflicted and i not in decl.confirmed]


def _proven_name(ctx: LintContext, decl: Declaration, index: int, got: Dim) -> str | None:
    """The producer's dim name for a derived symbolic dim: its own, or one two pinned runs prove.

    A graph output's dim may also get the affine expression of input dims that three pinned runs prove
    (``2*batch``); a value_info entry's gets only an input dim's name: an export can hold thousands of
    them, and the third whole-graph inference would cost a 100k-node model a second for an entry that
    only hints inference (an unknown dim there is enough).
    """
    if isinstance(got, str) and got in ctx.named_dims:
        return got
    if decl.graph == ROOT and ctx.input_dim_claims:
        named = ctx.oracle.pinned_input_dim(decl.name, index)
        if named is None and decl.kind == "output":
            named = ctx.oracle.pinned_affine(decl.name, index)
        return named
    return None


def _fresh_name(ctx: LintContext, decl: Declaration, index: int) -> str:
    """A dim name that claims nothing: for a refuted name where the graph's dim is anonymous."""
    base = f"{decl.name}_dim{index}"
    name, n = base, 1
    while name in ctx.named_dims:
        n += 1
        name = f"{base}_{n}"
    return name


def public_dims(ctx: LintContext, dims: tuple[Dim, ...] | None) -> tuple[Dim, ...] | None:
    """Dims fit to write into a file: anonymous engine symbols become unknown dims."""
    if dims is None:
        return None
    return tuple(d if (isinstance(d, int) and d >= 0) or d in ctx.named_dims else None for d in dims)


def reconcile_edit(ctx: LintContext, decl: Declaration) -> SetType:
    """The annotation edit that makes ``decl``'s dims agree with the graph, each number with its proof."""
    dims, proofs = reconciled(ctx, decl)
    return SetType(decl.graph, decl.kind, decl.name, dims=dims, proofs=proofs)


def proven_public_dims(ctx: LintContext, graph: str, name: str, dims: tuple[Dim, ...] | None
                       ) -> tuple[tuple[Dim, ...] | None, tuple[DimProof | None, ...] | None]:
    """``public_dims`` of dims ONNX Runtime's symbolic engine derived for a main-graph tensor, each number
    kept only where the pinned inferences prove it (the symbolic engine guesses where it lacks a value)."""
    shown = public_dims(ctx, dims)
    if shown is None:
        return None, None
    proofs = [pinned_proof(ctx, graph, name, i, d) if isinstance(d, int) else None for i, d in enumerate(shown)]
    return (tuple(d if not isinstance(d, int) or proof is not None else None for d, proof in zip(shown, proofs)),
            tuple(proofs))
