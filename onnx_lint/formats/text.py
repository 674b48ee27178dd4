"""Human-readable formats: ``full`` (ruff-style, with engine and help lines) and ``concise``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from onnx_lint.formats.escape import safe_text as terminal_safe  # the escaping all formats share
from onnx_lint.lint.diagnostics import Diagnostic

if TYPE_CHECKING:
    from onnx_lint.formats import RuleDoc

__all__ = ["render_concise", "render_full", "terminal_safe"]


def _head(d: Diagnostic) -> str:
    marker = "[*] " if d.fixable else ""
    where = d.location.display()
    return terminal_safe(f"{d.file}:{where}: {d.code} {marker}{d.message}")


def render_concise(diagnostics: list[Diagnostic], *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> str:
    """One line per diagnostic: ``file:location: CODE [*] message``."""
    return "".join(_head(d) + "\n" for d in diagnostics)


def render_full(diagnostics: list[Diagnostic], *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> str:
    """The concise line, then the severity, the engine that derived the fact and a help line (the fix's title)."""
    lines: list[str] = []
    for d in diagnostics:
        lines.append(_head(d))
        doc = rule_docs.get(d.code)
        detail = f"{d.severity.value}: {d.name}"
        if d.engine:
            detail += f", derived by {d.engine}"
        lines.append(terminal_safe(f"  | {detail}"))
        for note in d.notes:
            lines.append(f"  | {terminal_safe(note)}")
        if d.fix is not None and d.fix.applied:
            lines.append(terminal_safe(f"  = fixed: {d.fix.title}" if d.fix.title else "  = fixed"))
        elif d.fix is not None and d.fixable:
            what = f"{d.fix.title} (safe fix: run `onnx-lint check --fix`)" if d.fix.title else \
                "safe fix available: run `onnx-lint check --fix`"
            lines.append(terminal_safe(f"  = help: {what}"))
        elif doc is not None:
            lines.append(f"  = help: see `onnx-lint rule {d.code}`")
        lines.append("")
    return "".join(line + "\n" for line in lines)
