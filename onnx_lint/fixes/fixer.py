"""``--fix``: apply safe annotation edits, prove them, and only then write (docs/design.md, "The fix contract").

Order of proof: the fixed model is re-linted in memory (the fixed rules must
not fire again); it is written to a temporary file beside the original; the
full onnx checker and, for small self-contained models, ONNX Runtime must
accept it wherever they accepted the original; then it is renamed over the
original. Any failure leaves the original byte-identical and no file behind.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

from onnx_lint.base.errors import FixError
from onnx_lint.base.timings import FIX_PLAN, FIX_WRITE, timed
from onnx_lint.engines.checker import ForkedFullCheck, inherit_passing_verdict
from onnx_lint.engines.checker import full_checker_error as _checker_error  # a module name tests replace
from onnx_lint.engines.engine import Engine
from onnx_lint.engines.ort_load_check import runtime_checkable, runtime_load_error, runtime_refusal_to_ask
from onnx_lint.engines.prefetch import worth_forking
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity
from onnx_lint.lint.linter import Enabled, run_rules
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.edits import MissingTarget, SortNodes, apply_edits, combine_fixes, target_of, unproven_numbers
from onnx_lint.model.graphs import ROOT
from onnx_lint.model.load import LoadedModel
from onnx_lint.model.write import StagedWrite


@dataclass(frozen=True)
class FixPlan:
    """A verified-in-memory fix: the new bytes, what they repaired and what the re-lint still finds.

    ``applied`` holds new diagnostics (``fix.applied`` set); the ones the caller passed in are
    left as they were, so a preview (``--diff``) or a failed write has nothing to undo.
    """

    applied: list[Diagnostic]
    data: bytes
    relint: list[Diagnostic]
    notes: list[str] = field(default_factory=list)
    # The full check of ``data``, running in a forked child since the bytes existed (large models).
    full_check: ForkedFullCheck | None = field(default=None, compare=False, repr=False)
    # The original's, started with the plan where it is likely needed (``_likely_fails_full_check``).
    original_check: ForkedFullCheck | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        for check in (self.full_check, self.original_check):
            if check is not None:
                weakref.finalize(self, check.abandon)  # a preview (--diff) never collects it


@dataclass(frozen=True)
class _Round:
    """One round's outcome: the fixed model's context, its re-lint, and what was applied or deferred."""

    ctx: LintContext
    relint: list[Diagnostic]
    applied: list[Diagnostic]
    deferred: list[Diagnostic]
    full_check: ForkedFullCheck | None = None


# A fix can make another one possible (a corrected output lets inference type what it could not):
# like ruff, fix again until nothing new is fixable, a few rounds at most.
MAX_FIX_ROUNDS = 4


@timed(FIX_PLAN)
def plan_fix(ctx: LintContext, diagnostics: Sequence[Diagnostic], rules: Sequence[Rule],
             enabled: Enabled, only: set[tuple] | None = None) -> FixPlan | None:
    """Apply the safe fixes (or those of the ``only`` keys) in memory and re-lint; ``None`` if nothing changes.

    When ``only`` is not given, fixes that the first ones make possible are applied too, and so
    are fixes deferred for a conflict with another fix of the same round, so that fixing the
    result again finds nothing to do.
    """
    chosen = [d for d in diagnostics if d.fixable and (only is None or d.key() in only)]
    original_check = _start_original_check(ctx) if chosen else None
    try:
        return _planned(ctx, diagnostics, chosen, rules, enabled, only, original_check)
    except BaseException:
        if original_check is not None:
            original_check.abandon()
        raise


def _planned(ctx: LintContext, diagnostics: Sequence[Diagnostic], chosen: list[Diagnostic],
             rules: Sequence[Rule], enabled: Enabled, only: set[tuple] | None,
             original_check: ForkedFullCheck | None) -> FixPlan | None:
    """``plan_fix``'s rounds (``original_check``: the original's full check, if the plan started it)."""
    applied: list[Diagnostic] = []
    attempted: set[tuple] = set()
    notes: list[str] = []
    current, relint = ctx, list(diagnostics)
    full_check: ForkedFullCheck | None = None
    for round_number in range(MAX_FIX_ROUNDS):
        if not chosen:
            break
        try:
            step = _fix_round(current, relint, chosen, rules, enabled, settled=attempted, origin=ctx.loaded)
        except FixError as exc:
            if round_number == 0:
                raise
            # A follow-on fix failed: the rounds before it stand on their own.
            notes.append(f"a follow-on fix was not applied: {exc}")
            break
        if step is None:
            break
        if full_check is not None:
            full_check.abandon()  # superseded by this round's bytes
        current, relint, full_check = step.ctx, step.relint, step.full_check
        applied.extend(d.with_fix_applied() for d in step.applied)
        attempted.update(d.key() for d in step.applied)
        # A fix deferred for a conflict waits for the next round, unless the re-lint no longer
        # reports its finding: then the fix it yielded to repaired it.
        still = {d.key() for d in relint}
        repaired = [d for d in step.deferred if d.key() not in still]
        applied.extend(d.with_fix_applied(_repaired_note(d, step.applied)) for d in repaired)
        attempted.update(d.key() for d in repaired)
        if only is not None:
            break
        chosen = [d for d in relint if d.fixable and d.key() not in attempted]
    if not applied:
        for check in (full_check, original_check):
            if check is not None:
                check.abandon()
        return None
    return FixPlan(applied, current.loaded.data, relint, notes, full_check, original_check)


def _refuse_unproven(ctx: LintContext, chosen: list[Diagnostic]) -> None:
    """``FixError`` where a chosen fix writes a number without its proof (docs/design.md, "The proof
    obligation of a fix"): a rule offered a number no engine proved, and nothing may be written.

    The rules build their edits from proven numbers only (``lint/proofs.py``); this is the planner's
    own check, so that no future rule or engine can write an unproven number past it.
    """
    for diagnostic in chosen:
        for edit in diagnostic.fix.edits if diagnostic.fix is not None else ():
            unproven = unproven_numbers(edit)
            if unproven:
                dims = getattr(edit, "dims", None) or ()
                shown = ", ".join(f"dim {i} = {dims[i]}" for i in unproven)
                raise FixError(f"{ctx.display}: the {diagnostic.code} fix of {diagnostic.location.display()} "
                               f"would write {shown}, which no engine proved; nothing was written")


def _repaired_note(deferred: Diagnostic, taken: list[Diagnostic]) -> str:
    """The note on a finding whose own fix waited for a conflicting one, which then repaired it."""
    targets = {target_of(e) for e in (deferred.fix.edits if deferred.fix else ())}
    by = sorted({d.code for d in taken for e in (d.fix.edits if d.fix else ()) if target_of(e) in targets})
    return (f"its own fix conflicted with the {'/'.join(by) or 'other'} fix of the same declaration and "
            "was not needed: that fix repaired it")


def _fix_round(ctx: LintContext, before: Sequence[Diagnostic], chosen: list[Diagnostic], rules: Sequence[Rule],
               enabled: Enabled, settled: set[tuple], origin: LoadedModel) -> _Round | None:
    """One round: apply ``chosen`` to a copy and lint it (None: the model did not change); ``before``
    are the findings on ``ctx``.

    A fix that conflicts with an earlier one of the round is deferred (``edits.combine_fixes``).
    Neither the applied fixes nor what earlier rounds ``settled`` may be fixable afterwards.
    """
    _refuse_unproven(ctx, chosen)
    fixed = ctx.loaded.fresh_copy()
    try:
        combined = combine_fixes([d.fix.edits if d.fix is not None else () for d in chosen], fixed)
    except KeyError as exc:
        raise FixError(f"{ctx.display}: cannot apply the fixes: {exc}") from None
    waiting = set(combined.deferred)
    deferred = [chosen[i] for i in combined.deferred]
    taken = [d for i, d in enumerate(chosen) if i not in waiting]
    try:
        apply_edits(combined.edits, fixed)
    except MissingTarget as exc:
        owner = {target_of(e): d.code for d in reversed(taken) for e in (d.fix.edits if d.fix else ())}
        raise FixError(f"{ctx.display}: cannot apply the {owner.get(target_of(exc.edit), 'a')} fix: "
                       f"{exc.problem}") from None
    data = fixed.SerializeToString()
    if data == ctx.loaded.data:
        return None
    reordered = any(isinstance(e, SortNodes) for e in combined.edits)
    fixed_loaded = ctx.loaded.with_annotations(data, fixed, nodes_reordered=reordered)
    inherit_passing_verdict(ctx.loaded, fixed_loaded)  # write_fix proves the fixed model with the checker
    full_check = _start_full_check(origin, data)  # origin: the file as read, which the write compares with
    try:
        relint_ctx = ctx.for_fixed_copy(fixed_loaded, nodes_reordered=reordered)
        # A fix that moved nodes or raised the IR version (OL102's, for IR 3) changes what every rule reads.
        kept = None if reordered or fixed.ir_version != ctx.model.ir_version else _kept(before, rules, enabled)
        relint, errors = run_rules(relint_ctx, rules, enabled, kept)
        if errors:
            raise FixError(errors[0])
    except BaseException:
        if full_check is not None:
            full_check.abandon()
        raise
    fixed_keys = settled | {d.key() for d in taken}
    # A finding may stay (an OL003 root with some tensors no schema types), but it must have
    # nothing left to fix: otherwise the edits did not take and fixing again would loop.
    again = [d for d in relint if d.key() in fixed_keys and d.fixable]
    if again:
        if full_check is not None:
            full_check.abandon()
        raise FixError(f"{ctx.display}: the {again[0].code} fix did not converge "
                       f"({again[0].location.display()}: {again[0].message}); nothing was written")
    return _Round(relint_ctx, relint, taken, deferred, full_check)


def _kept(before: Sequence[Diagnostic], rules: Sequence[Rule], enabled: Enabled) -> dict[str, list[Diagnostic]]:
    """The findings of the rules that read no declaration (``Rule.reads_annotations``), which a fix that
    moved no node cannot change: the re-lint keeps them (OL201's range check of 50k weights, again)."""
    kept: dict[str, list[Diagnostic]] = {rule.code: [] for rule in rules
                                         if enabled(rule.code) and not rule.reads_annotations and not rule.fixable}
    for diagnostic in before:
        if diagnostic.code in kept:
            kept[diagnostic.code].append(diagnostic)
    return kept


def _start_full_check(original: LoadedModel, data: bytes) -> ForkedFullCheck | None:
    """On a large model, the write's full check of these bytes, started now to overlap the re-lint.

    Small models are checked in-process at the write: a fork costs more there than it overlaps.
    """
    if not worth_forking(original.model.graph):
        return None
    return ForkedFullCheck.start(data, _external_paths(original))


def _start_original_check(ctx: LintContext) -> ForkedFullCheck | None:
    """On a large model likely to fail the full check, the original's full check, started with the plan."""
    if not worth_forking(ctx.model.graph) or not _likely_fails_full_check(ctx):
        return None
    return ForkedFullCheck.start(ctx.loaded.data, _external_paths(ctx.loaded))


def _likely_fails_full_check(ctx: LintContext) -> bool:
    """Whether a declaration keeps a concrete dim where inference derives none: no fix may change
    such a dim, and strict inference (the full checker's) takes it at its word, so the fixed model
    and the original may both fail, and the proof needs the original's verdict. A guess that only
    decides when that check starts: the write asks for it whenever the fixed bytes fail."""
    for decl in ctx.declarations:
        if not decl.comparable:
            continue
        declared, derived = decl.dims_pair
        if len(declared) == len(derived) and any(isinstance(a, int) and not isinstance(b, int)
                                                 for a, b in zip(declared, derived)):
            return True
    return False


def _external_paths(loaded: LoadedModel) -> list[str] | None:
    return loaded.scope_paths if loaded.has_external_data else None


def _collected_full_checks(loaded: LoadedModel, plan: FixPlan) -> tuple[str | None, str | None] | None:
    """The full checks of the fixed bytes (started while the plan was made) and, where they fail, of
    the original; ``None`` where the forked check did not run to the end (the write checks in-process).

    The original's check matters only when the fixed bytes fail: the plan starts it beside theirs
    where that is likely (``_likely_fails_full_check``), and it is dropped unread when they pass;
    otherwise it starts once they have failed. Either way each check runs as two children side by
    side (``ForkedFullCheck``).
    """
    if plan.full_check is None:
        return None
    done, fixed_error = plan.full_check.result()
    original = plan.original_check
    if not done or fixed_error is None:
        if original is not None:
            original.abandon()
        return (None, None) if done else None
    if original is None:  # not expected to fail, and it did: the original's verdict, now, on both cores
        original = ForkedFullCheck.start(loaded.data, _external_paths(loaded))
    if original is None:
        return fixed_error, _checker_error(loaded.path, *_external(loaded))
    done, original_error = original.result()
    return fixed_error, (original_error if done else _checker_error(loaded.path, *_external(loaded)))


def _external(loaded: LoadedModel) -> tuple[list[str], ...]:
    """``_checker_error``'s extra argument for a model with external data (see ``full_checker_error``)."""
    return (loaded.scope_paths,) if loaded.has_external_data else ()


@timed(FIX_WRITE)
def write_fix(loaded: LoadedModel, plan: FixPlan, *, runtime_check: bool = True) -> list[str]:
    """Prove the fixed bytes on disk beside the original, then rename; returns notes."""
    notes: list[str] = []
    rejected: list[str] = []
    if loaded.path.is_symlink():  # a rename would replace the link with a file and leave its target unfixed
        raise FixError(f"{loaded.path} is a symbolic link (to {os.path.realpath(loaded.path)}); --fix does not "
                       "replace links: run it on the file the link points to; nothing was written")
    staged = StagedWrite(loaded.path, plan.data, expected=loaded.identity)
    external = _external(loaded)
    with staged as temp:
        collected = _collected_full_checks(loaded, plan)
        fixed_error = collected[0] if collected is not None else _checker_error(temp, *external)
        if fixed_error is not None:
            original_error = collected[1] if collected is not None else _checker_error(loaded.path, *external)
            if original_error is None:
                raise FixError(f"{loaded.path}: the fix would make onnx.checker fail ({fixed_error}); "
                               "nothing was written")
            notes.append(f"onnx.checker still fails after the fix, as it did before: {fixed_error}")
            rejected.append(f"onnx.checker (full): {fixed_error}")
        if runtime_check and _runtime_checkable(loaded):
            # ONNX Runtime has the last word: the checker's strict inference also fails on what it cannot
            # model (sparse initializers), and a model ONNX Runtime runs is not refused.
            rejected.clear()
            fixed_load = runtime_load_error(temp)
            if fixed_load is not None:
                if runtime_load_error(loaded.path) is None:
                    raise FixError(f"{loaded.path}: ONNX Runtime loads the original but not the fixed model "
                                   f"({fixed_load}); nothing was written")
                notes.append(f"ONNX Runtime does not load the model, before or after the fix: {fixed_load}")
                rejected.append("ONNX Runtime does not load the model: "
                                + fixed_load.replace(str(temp), loaded.path.name))
        staged.commit()
    _keep_rejection(plan, rejected)
    return notes


def _keep_rejection(plan: FixPlan, rejected: list[str]) -> None:
    """A fixed model ONNX Runtime still refuses (or, where it cannot be asked, the full checker) is never
    reported clean: where the re-lint leaves nothing that fails the run, the rejection becomes an OL102
    error among the remaining findings (``plan.relint``, which the callers report after the write)."""
    if not rejected or any(d.severity.fails for d in plan.relint):
        return
    plan.relint.append(Diagnostic(
        file=plan.applied[0].file, code="OL102", name="checker-error", severity=Severity.ERROR,
        message=f"{rejected[0]} (after the fix, as before it)", location=Location(ROOT),
        engine=Engine.CHECKER_FULL))


def _runtime_checkable(loaded: LoadedModel) -> bool:
    return runtime_refusal_to_ask(loaded) is None and runtime_checkable(loaded.path)


def text_diff(loaded: LoadedModel, data: bytes, display: str) -> str:
    """A unified diff of the model in ONNX text syntax (weights by size), before and after the fix."""
    from onnx_lint.model import text_form

    return text_form.text_diff(loaded.model, data, display)
