"""One file through lint -> plan -> prove -> write: the sequence every face runs.

``check --fix`` and ``--diff``, the language server's quick fixes, ``onnx_lint.fix`` and
quantize's repair all start a ``FixSession``, so the order of the steps, and what each
leaves in the file's result, is written once (docs/design.md, "The fix contract").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from onnx_lint.base.errors import FixError
from onnx_lint.fixes.fixer import FixPlan, plan_fix, write_fix
from onnx_lint.lint import linter  # by module: a test replaces linter.lint_file to prove a cache hit lints nothing
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.file_result import FileResult
from onnx_lint.lint.linter import Enabled
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.load import LoadedModel


@dataclass
class FixSession:
    """A linted file, and the rules that linted it: what planning and writing its fixes need.

    ``ctx`` is ``None`` when the model could not be read or an engine failed; ``result`` then
    says why, and only ``problem`` is meaningful.
    """

    result: FileResult
    ctx: LintContext | None
    rules: Sequence[Rule]
    enabled: Enabled

    @classmethod
    def lint(cls, path: Path, display: str, rules: Sequence[Rule], enabled: Enabled, *,
             runtime_probe: bool = True, inference_budget: float | None = None) -> FixSession:
        """Read and lint a file (an unreadable one gives a single OL000 diagnostic, never an exception)."""
        result, ctx = linter.lint_file(path, display, rules, enabled, runtime_probe=runtime_probe,
                                       inference_budget=inference_budget)
        return cls(result, ctx, rules, enabled)

    @classmethod
    def lint_loaded(cls, loaded: LoadedModel, display: str, rules: Sequence[Rule], enabled: Enabled) -> FixSession:
        """Lint a model already read (quantize reads it once for calibration and repair)."""
        result, ctx = linter.lint_loaded(loaded, display, rules, enabled)
        return cls(result, ctx, rules, enabled)

    @property
    def problem(self) -> str:
        """Why the model cannot be fixed: the unreadable diagnostic's words, else the internal errors."""
        if self.result.diagnostics:
            return self.result.diagnostics[0].message
        return "; ".join(self.result.internal_errors)

    def linted(self) -> LintContext:
        """The lint context; ``FixError`` naming the problem when the model could not be linted."""
        if self.ctx is None:
            raise FixError(f"{self.result.display}: cannot be fixed: {self.problem}")
        return self.ctx

    def plan(self, only: set[tuple] | None = None) -> FixPlan | None:
        """The safe fixes (or those of the ``only`` keys) applied and re-linted in memory; nothing is written.

        ``None`` when nothing changes. The result keeps its unfixed diagnostics (a preview, or
        quantize's in-memory repair, has nothing to undo).
        """
        return plan_fix(self.linted(), self.result.diagnostics, self.rules, self.enabled, only=only)

    def fix(self, *, write: bool = True, runtime_check: bool = True,
            only: set[tuple] | None = None) -> FixPlan | None:
        """Plan the fixes and, when ``write``, prove and write them; the result then says so.

        Without ``write`` this is ``plan`` (``--diff``). ``FixError``: nothing was written.
        """
        plan = self.plan(only)
        if plan is None or not write:
            return plan
        ctx = self.linted()
        self.result.notes.extend(plan.notes + write_fix(ctx.loaded, plan, runtime_check=runtime_check))
        self.result.written = True
        # What remains is what the re-lint of the fixed model found.
        self.result.diagnostics = plan.applied + plan.relint
        return plan
