"""The five conflict provers: where a declared dim contradicts what the graph computes, and how we know.

Concrete values, a concrete dim that follows a dynamic input (the model run, or two pinned
inferences), input dim names as claims (one run with a prime per input dim), one dim_param
used for different dims, and one name no input carries shared by outputs the graph proves
different. Each conflict carries the evidence a message quotes.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from onnx_lint.engines.engine import Engine
from onnx_lint.engines.oracle import PIN_SIZES
from onnx_lint.lint.declarations import Declaration, DimConflict
from onnx_lint.lint.proofs import has_dynamic_inputs, pinned_number, pins_text, sizes_clause
from onnx_lint.model.dim_expressions import parse_dim_expression
from onnx_lint.model.edits import DimProof
from onnx_lint.model.graphs import ROOT
from onnx_lint.model.shapes import Dim, value_tensor_info

if TYPE_CHECKING:
    from onnx_lint.lint.context import LintContext


def find_conflicts(ctx: LintContext, decls: list[Declaration]) -> None:
    """Fill each comparable declaration's ``conflicts``, running the costly proofs only where needed."""
    pending: list[tuple[Declaration, int]] = []
    claims: list[tuple[Declaration, int]] = []
    for decl in decls:
        if not decl.comparable or decl.rank_mismatch:
            continue
        for i, (want, got) in enumerate(zip(*decl.dims_pair)):
            run = _run_evidence(ctx, decl, i)
            if isinstance(want, str):
                if run is not None and want in ctx.input_dim_claims and run[0] != want:
                    a, b = run[1]
                    decl.conflicts.append(DimConflict(
                        i, want, got, "name",
                        f"declared '{want}' but {_run_clause(run[0], a, b, run[2])}"))
                elif (run is None and decl.kind == "output" and decl.graph == ROOT
                        and ctx.claims_size(want) and got != want):
                    claims.append((decl, i))  # not confirmed by plain inference: prove or refute
                continue
            if (isinstance(want, int) and want >= 0 and run is not None
                    and (run[0] is not None or run[1][0] != run[1][1] or run[2])):
                a, b = run[1]
                decl.conflicts.append(DimConflict(i, want, got, "dynamic", _run_clause(run[0], a, b, run[2])))
                continue
            if not isinstance(want, int) or want < 0:
                continue  # negative dims are OL101's business, not a conflict
            if isinstance(got, int):
                if got != want:
                    decl.conflicts.append(DimConflict(i, want, got, "concrete"))
            elif isinstance(got, str) and got in ctx.named_dims:
                if _baked_one(ctx, decl, want):
                    continue
                decl.conflicts.append(
                    DimConflict(i, want, got, "dynamic", f"it follows the dynamic input dim '{got}'"))
            else:
                # A declared number where the graph's dim is anonymous is a claim to verify, for outputs
                # and value_info alike: the pinned inferences confirm it, refute it, or leave it unproven
                # (and then no fix keeps it).
                pending.append((decl, i))
    _check_pinned(ctx, pending)
    _check_claims(ctx, claims)
    _check_param_reuse(ctx, decls)


def _run_evidence(ctx: LintContext, decl: Declaration, index: int) -> tuple[str | None, tuple[int, int], bool] | None:
    """For a dim the model run derived: the input dim it follows (or None), its sizes in runs A and B,
    and whether it changed with the data alone."""
    if decl.engine != Engine.ORT_RUN or ctx.oracle.probe_result is None:
        return None
    fact = ctx.oracle.probe_result.facts.get(decl.name)
    if fact is None or len(fact.sizes) <= index:
        return None
    if len(fact.branch_dependent) > index and fact.branch_dependent[index]:
        return None  # no single size is true of both branches: OL007 says so instead
    varies = fact.data_dependent[index] if len(fact.data_dependent) > index else False
    return fact.follows[index], fact.sizes[index], varies


def _check_claims(ctx: LintContext, claims: list[tuple[Declaration, int]]) -> None:
    """docs/design.md, "Symbolic names are claims too": a declared input dim name must have its size.

    One inference with each dynamic input dim pinned to its own prime serves every claim;
    a claim is refuted only where that run derives a concrete value other than the pin.
    """
    if not claims:
        return
    sizes, values = ctx.oracle.named_pins()
    by_size = {size: name for name, size in sizes.items()}
    for decl, i in claims:
        want = str(decl.dims_pair[0][i])  # a claim is always a declared name
        value = values.get(decl.name)
        info = value_tensor_info(value)
        if info is None or info.dims is None or len(info.dims) != decl.declared_info.rank:
            continue
        got, expected = info.dims[i], claimed_size(want, sizes)
        if not isinstance(got, int) or expected is None or got == expected:
            continue
        other = by_size.get(got)
        which = f" (the size of input dim '{other}')" if other else ""
        decl.conflicts.append(DimConflict(
            i, want, decl.dims_pair[1][i], "name",
            f"declared '{want}' (= {expected} when {_pins_clause(want, sizes)}) but the graph computes "
            f"{got}{which}"))
        decl.engine = Engine.ONNX_NAMES_PINNED


def _check_pinned(ctx: LintContext, pending: list[tuple[Declaration, int]]) -> None:
    """Declared concrete vs anonymous derived: a claim the pinned inferences confirm, refute or leave unproven.

    Graph outputs first get the cheap check (every dynamic input dim pinned to 7, then 13); where that
    does not refute the number, and for value_info, two inferences with each dynamic input dim pinned
    to a size of its own (primes from 37 up, then other primes) decide: the same number as declared in
    both is a proof (``Declaration.confirmed``), two different numbers or another number refute it.
    """
    if not pending or not has_dynamic_inputs(ctx):
        return
    for decl, i in pending:
        if _baked_one(ctx, decl, decl.dims_pair[0][i]):
            continue
        if decl.kind == "output" and decl.graph == ROOT and _uniform_pins_refute(ctx, decl, i):
            continue
        _named_pins_verdict(ctx, decl, i)


def _uniform_pins_refute(ctx: LintContext, decl: Declaration, i: int) -> bool:
    """Whether the output's dim changes when every dynamic input dim is pinned to 7, then 13 (a conflict)."""
    runs = ctx.oracle.pinned_dims(decl.graph, decl.name)
    got = [r.dims[i] if r is not None and r.dims is not None and len(r.dims) > i else None for r in runs]
    if all(isinstance(g, int) for g in got) and len(set(got)) > 1:
        pins = ", ".join(f"{g} when they are {p}" for g, p in zip(got, PIN_SIZES))
        decl.conflicts.append(DimConflict(
            i, decl.dims_pair[0][i], decl.dims_pair[1][i], "pinned",
            f"it changes with the dynamic input dims ({pins})"))
        decl.engine = Engine.ONNX_PINNED
        return True
    return False


def _named_pins_verdict(ctx: LintContext, decl: Declaration, i: int) -> None:
    """Confirm or refute a declared number with the inferences that pin each input dim on its own.

    One run that derives another number refutes it; confirming it takes a second run at other sizes
    (each is a whole-graph inference, so the second runs only where the first agrees).
    """
    first = pinned_number(ctx, decl.graph, decl.name, i, 0)
    if not isinstance(first, int):
        return  # unproven: no finding, and no fix may keep the number (lint/reconcile.py)
    want = decl.dims_pair[0][i]
    pins = ctx.oracle.named_pins(0)[0]
    if want == 1 and ctx.runs_only_at_batch_one and any(pins.get(b) == first for b in ctx.batch_names):
        return  # the batch, where a Reshape bakes batch 1 in: 1 is the only size that runs (OL108's finding)
    if first != want:
        evidence = f"the graph computes {first} with the dynamic input dims at {sizes_clause(pins)}"
    else:
        second = pinned_number(ctx, decl.graph, decl.name, i, 1)
        if second == want:
            decl.confirmed[i] = DimProof(Engine.ONNX_NAMES_PINNED, pins_text(ctx))
            return
        if not isinstance(second, int):
            return  # one run agrees, the other derives nothing: unproven
        evidence = (f"it changes with the dynamic input dims: the graph computes {first} with "
                    f"{sizes_clause(pins)} and {second} with {sizes_clause(ctx.oracle.named_pins(1)[0])}")
    decl.conflicts.append(DimConflict(i, want, decl.dims_pair[1][i], "pinned", evidence))
    decl.engine = Engine.ONNX_NAMES_PINNED


def _baked_one(ctx: LintContext, decl: Declaration, want: Dim) -> bool:
    """A declared 1 downstream of a Reshape that bakes batch 1 in: the only size that runs.

    Such a Reshape fails at every other batch, so a dim that seems to follow the inputs
    (by name, or when every input dim is pinned to one size) is 1 in every run that succeeds.
    """
    return want == 1 and decl.graph == ROOT and decl.name in ctx.batch_bound


def _check_param_reuse(ctx: LintContext, decls: list[Declaration]) -> None:
    """One dim_param name declared for dims the graph proves different."""
    uses: dict[tuple[str, str], list[tuple[Declaration, int, int]]] = defaultdict(list)
    for decl in decls:
        if not decl.comparable or decl.rank_mismatch:
            continue
        for i, (want, got) in enumerate(zip(*decl.dims_pair)):
            if isinstance(want, str) and isinstance(got, int):
                uses[(decl.graph, want)].append((decl, i, got))
    for (_graph, name), entries in uses.items():
        values = sorted({got for _, _, got in entries})
        if len(values) < 2:
            continue
        for decl, i, got in entries:
            decl.conflicts.append(DimConflict(
                i, name, got, "param-reuse",
                f"dim_param '{name}' is used for dims the graph computes as {', '.join(map(str, values))}"))
    _check_shared_names(ctx, decls)


def _check_shared_names(ctx: LintContext, decls: list[Declaration]) -> None:
    """A name no input carries, declared on several main-graph outputs, claims they are equal.

    Plain inference often leaves such dims anonymous (``unk__3`` and ``unk__7``); the pinned
    run (the one the input-name claims use) shows whether they really are equal.
    """
    shared: dict[str, list[tuple[Declaration, int]]] = defaultdict(list)
    for decl in decls:
        if decl.kind != "output" or decl.graph != ROOT or not decl.comparable or decl.rank_mismatch:
            continue
        if decl.conflicts or decl.engine == Engine.ORT_RUN:
            continue
        for i, (want, got) in enumerate(zip(*decl.dims_pair)):
            if isinstance(want, str) and not ctx.claims_size(want) and not isinstance(got, int):
                shared[want].append((decl, i))
    for name, entries in shared.items():
        derived = {decl.dims_pair[1][i] for decl, i in entries}
        if len({decl.name for decl, _ in entries}) < 2 or (len(derived) == 1 and None not in derived):
            continue  # one output, or one symbol plain inference already derived for all of them
        _sizes, values = ctx.oracle.named_pins()
        pinned: list[int | None] = []
        for decl, i in entries:
            value = values.get(decl.name)
            info = value_tensor_info(value)
            dim = info.dims[i] if info is not None and info.dims is not None and len(info.dims) > i else None
            pinned.append(dim if isinstance(dim, int) else None)
        if None in pinned or len(set(pinned)) < 2:
            continue
        shown = ", ".join(f"{size} for '{decl.name}'" for (decl, _), size in zip(entries, pinned))
        for decl, i in entries:
            decl.conflicts.append(DimConflict(
                i, name, decl.dims_pair[1][i], "param-reuse",
                f"dim_param '{name}' is used for dims the graph computes as {shown}, with the dynamic "
                f"input dims pinned"))
            decl.engine = Engine.ONNX_NAMES_PINNED


def claimed_size(name: str, sizes: dict[str, int]) -> int | None:
    """The size a declared dim name claims under pinned input dims: an input dim's own pin, or what the
    expression evaluates to."""
    if name in sizes:
        return sizes[name]
    expression = parse_dim_expression(name)
    return expression.evaluate(sizes) if expression is not None else None


def _pins_clause(name: str, sizes: dict[str, int]) -> str:
    """The pins a claimed size was computed from: ``'seq' is 41``, ``'past' is 41 and 'seq' is 43``."""
    expression = parse_dim_expression(name)
    names = sorted(expression.names) if expression is not None and expression.names <= sizes.keys() else [name]
    return " and ".join(f"'{n}' is {sizes[n]}" for n in names if n in sizes)


def _run_clause(follows: str | None, a: int, b: int, data_dependent: bool = False) -> str:
    """What the ONNX Runtime runs showed about one dim."""
    if data_dependent:
        return (f"it depends on the input data, not only on the input dims: ONNX Runtime returns {a} and "
                f"{b} in two runs and another value with other data at the same sizes")
    if follows is None:
        return f"ONNX Runtime returns {a} and {b} in two runs" if a != b else f"ONNX Runtime returns {a}"
    shown = follows if follows.startswith("input '") else f"input dim '{follows}'"
    return f"it follows {shown}: ONNX Runtime returns {a} and {b} in two runs with it at {a} and {b}"
