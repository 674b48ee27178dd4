"""Lint one model file: load, derive, run the selected rules.

The rules are passed in (``onnx_lint.rules.ALL_RULES`` from the CLI and the
server) so that the engine never depends on them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from onnx_lint.base.errors import ModelLoadError
from onnx_lint.base.timings import PARSE, VALIDATE, rule_step, step
from onnx_lint.engines.checker import checker_verdict
from onnx_lint.engines.prefetch import is_prefetched, prefetch_inference
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic
from onnx_lint.lint.file_result import UNREADABLE, FileResult, unreadable_diagnostic
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.graphs import holds_runtime_operators
from onnx_lint.model.load import LoadedModel, read_unvalidated, validate_loaded

Enabled = Callable[[str], bool]


def run_rules(ctx: LintContext, rules: Sequence[Rule], enabled: Enabled,
              carried: dict[str, list[Diagnostic]] | None = None) -> tuple[list[Diagnostic], list[str]]:
    """Diagnostics of the enabled rules, plus the internal errors of rules that crashed; the rules
    ``carried`` names are not run, their findings are the ones given."""
    run = RuleRun(ctx, rules, enabled)
    run.found.update(carried or {})
    run.run(lambda rule: True)
    return run.diagnostics(), run.internal_errors()


class RuleRun:
    """The enabled rules run on one context, possibly in two phases (those that need no derived shape
    first, while inference runs); their findings come back in the rules' order either way."""

    def __init__(self, ctx: LintContext, rules: Sequence[Rule], enabled: Enabled) -> None:
        self.ctx = ctx
        self.rules = [rule for rule in rules if enabled(rule.code)]
        self.found: dict[str, list[Diagnostic]] = {}
        self.errors: list[str] = []
        self.unreadable: Diagnostic | None = None  # a rule found the model unreadable: nothing else counts

    def run(self, which: Callable[[Rule], bool]) -> None:
        for rule in self.rules:
            if self.unreadable is not None:
                return
            if rule.code in self.found or not which(rule):
                continue
            with step(rule_step(rule.code)):
                try:
                    self.found[rule.code] = list(rule.check(self.ctx))
                except ModelLoadError as exc:
                    self.unreadable = unreadable_diagnostic(self.ctx.display, exc.problem)
                except Exception as exc:  # a rule bug must not hide the other rules' findings
                    self.found[rule.code] = []
                    self.errors.append(f"{self.ctx.display}: internal error in rule {rule.code}: "
                                       f"{type(exc).__name__}: {exc}")

    def prepare(self) -> None:
        """Each remaining rule's ``prepare``: the facts it needs that come from the file alone."""
        for rule in self.rules:
            if rule.code not in self.found:
                with step(rule_step(rule.code)):
                    try:
                        rule.prepare(self.ctx)
                    except Exception:  # the rule's check meets the same failure and reports it
                        pass

    def internal_errors(self) -> list[str]:
        return [] if self.unreadable is not None else self.errors

    def diagnostics(self) -> list[Diagnostic]:
        if self.unreadable is not None:
            return [self.unreadable]
        return [d for rule in self.rules for d in self.found.get(rule.code, ())]


def lint_loaded(loaded: LoadedModel, display: str, rules: Sequence[Rule], enabled: Enabled, *,
                runtime_probe: bool = True, inference_budget: float | None = None,
                ) -> tuple[FileResult, LintContext | None]:
    """Lint a loaded model. The rules that need no derived shape run first: on a large model, whose
    inference runs in a child process (``prefetch``), they use the core that would otherwise wait."""
    result = FileResult(loaded.path, display)
    try:
        ctx = LintContext(loaded, display, runtime_probe=runtime_probe, inference_budget=inference_budget)
        early = not is_prefetched(loaded) and holds_runtime_operators(loaded.model, loaded.scopes[0])
        if early:  # ONNX's inference cannot type them: ONNX Runtime's engine will be asked, so it starts first
            ctx.oracle.start_symbolic_early()
        try:
            run = RuleRun(ctx, rules, enabled)
            run.run(lambda rule: not rule.needs_inference)
            run.prepare()
            ctx.check_integrity()
            run.run(lambda rule: True)
        finally:
            if early:
                ctx.oracle.stop_early_engines()
        result.diagnostics, result.internal_errors = run.diagnostics(), run.internal_errors()
    except ModelLoadError as exc:
        result.diagnostics = [unreadable_diagnostic(display, exc.problem)]
        result.unreadable = True
        return result, None
    except Exception as exc:
        result.internal_errors.append(f"{display}: internal error: {type(exc).__name__}: {exc}")
        return result, None
    result.unreadable = any(d.code == UNREADABLE[0] for d in result.diagnostics)
    result.notes = [f"{n.engine}: {n.message}" for n in ctx.oracle.notes]
    return result, ctx


def lint_file(path: Path, display: str, rules: Sequence[Rule], enabled: Enabled, *,
              runtime_probe: bool = True, inference_budget: float | None = None,
              ) -> tuple[FileResult, LintContext | None]:
    """Lint a file; an unreadable one gives a single OL000 diagnostic, never an exception.

    On a large model ONNX's inference starts in a child process as soon as the bytes are parsed,
    and this process scans, validates and runs the checker meanwhile: two cores, both busy.
    """
    prefetch = None
    try:
        with step(PARSE):
            loaded = read_unvalidated(path)
            prefetch = prefetch_inference(loaded)
        with step(VALIDATE):
            validate_loaded(loaded)
    except ModelLoadError as exc:
        if prefetch is not None:
            prefetch.abandon()
        result = FileResult(path, display, [unreadable_diagnostic(display, exc.problem)], unreadable=True)
        return result, None
    if prefetch is not None:
        checker_verdict(loaded)  # OL102-OL104 ask for it later; computed now, while the child infers
    return lint_loaded(loaded, display, rules, enabled, runtime_probe=runtime_probe,
                       inference_budget=inference_budget)
