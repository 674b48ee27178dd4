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
from onnx_lint.engines.prefetch import prefetch_inference
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic
from onnx_lint.lint.file_result import UNREADABLE, FileResult, unreadable_diagnostic
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.load import LoadedModel, read_unvalidated, validate_loaded

Enabled = Callable[[str], bool]


def run_rules(ctx: LintContext, rules: Sequence[Rule], enabled: Enabled) -> tuple[list[Diagnostic], list[str]]:
    """Diagnostics of the enabled rules, plus the internal errors of rules that crashed."""
    diagnostics: list[Diagnostic] = []
    errors: list[str] = []
    for rule in rules:
        if not enabled(rule.code):
            continue
        try:
            with step(rule_step(rule.code)):
                diagnostics.extend(rule.check(ctx))
        except ModelLoadError as exc:
            return [unreadable_diagnostic(ctx.display, exc.problem)], []
        except Exception as exc:  # a rule bug must not hide the other rules' findings
            errors.append(f"{ctx.display}: internal error in rule {rule.code}: {type(exc).__name__}: {exc}")
    return diagnostics, errors


def lint_loaded(loaded: LoadedModel, display: str, rules: Sequence[Rule], enabled: Enabled, *,
                runtime_probe: bool = True, inference_budget: float | None = None,
                ) -> tuple[FileResult, LintContext | None]:
    result = FileResult(loaded.path, display)
    try:
        ctx = LintContext(loaded, display, runtime_probe=runtime_probe, inference_budget=inference_budget)
        ctx.check_integrity()
        result.diagnostics, result.internal_errors = run_rules(ctx, rules, enabled)
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
