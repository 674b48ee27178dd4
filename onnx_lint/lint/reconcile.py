"""Reconciliation (docs/design.md): the dims a fix writes for a stale declaration.

Derived rank and concrete dims win; a declared name stays where the graph's dim is symbolic
and no conflict refuted it; a refuted name becomes a proven one or a fresh name that claims nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnx_lint.lint.declarations import Declaration
from onnx_lint.model.edits import SetType
from onnx_lint.model.graphs import ROOT
from onnx_lint.model.shapes import Dim

if TYPE_CHECKING:
    from onnx_lint.lint.context import LintContext


def reconciled_dims(ctx: LintContext, decl: Declaration) -> tuple[Dim, ...]:
    """Reconcile (docs/design.md): derived rank and concrete dims; declared names kept where derived is symbolic."""
    assert decl.derived is not None and decl.derived.dims is not None
    derived = decl.derived.dims
    declared = decl.declared.dims if decl.declared is not None else None
    conflicted = {c.index for c in decl.conflicts}
    out: list[Dim] = []
    for i, got in enumerate(derived):
        if isinstance(got, int):
            out.append(got)
            continue
        want = declared[i] if declared is not None and len(declared) == len(derived) else None
        keep = isinstance(want, str) or isinstance(want, int) and want >= 0
        if keep and i not in conflicted:
            out.append(want)
        else:
            named = _proven_name(ctx, decl, i, got)
            if isinstance(want, str) and (named is None or named == want):
                named = _fresh_name(ctx, decl, i)  # a refuted name where the graph's dim is anonymous
            out.append(named)
    return tuple(out)


def _proven_name(ctx: LintContext, decl: Declaration, index: int, got: Dim) -> str | None:
    """The producer's dim name for a derived symbolic dim: its own, or one two pinned runs prove."""
    if isinstance(got, str) and got in ctx.named_dims:
        return got
    if decl.graph == ROOT and ctx.input_dim_claims:
        return ctx.oracle.pinned_input_dim(decl.name, index) or ctx.oracle.pinned_affine(decl.name, index)
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
    """The annotation edit that makes ``decl``'s dims agree with the graph."""
    return SetType(decl.graph, decl.kind, decl.name, dims=reconciled_dims(ctx, decl))
