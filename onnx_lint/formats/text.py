"""Human-readable formats: ``full`` (ruff-style, with engine and help lines) and ``concise``.

A run of more than a few findings of one cause (``repeats``: optimum's merged decoders share hundreds of
node names between their If branches by construction) is said once, with its count; the summary line,
``--statistics`` and the machine formats still count and list every finding.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from onnx_lint.formats.escape import safe_text as terminal_safe  # the escaping all formats share
from onnx_lint.formats.repeats import Repeat, said_once
from onnx_lint.lint.diagnostics import Diagnostic

if TYPE_CHECKING:
    from onnx_lint.formats import RuleDoc

__all__ = ["render_concise", "render_full", "terminal_safe"]

EVERY_LOCATION = "run with --output-format json for every location"
_ALSO_AT = 3  # the full format names this many of a repeat's other locations


def _head(d: Diagnostic, more: str = "") -> str:
    marker = "[*] " if d.fixable else ""
    where = d.location.display()
    return terminal_safe(f"{d.file}:{where}: {d.code} {marker}{d.message}{more}")


def _repeat_head(repeat: Repeat) -> str:
    return _head(repeat.first, f" ({repeat.more()}: {EVERY_LOCATION})")


def render_concise(diagnostics: list[Diagnostic], *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> str:
    """One line per diagnostic, ``file:location: CODE [*] message``; one line per repeat, with its count."""
    return "".join((_repeat_head(d) if isinstance(d, Repeat) else _head(d)) + "\n" for d in said_once(diagnostics))


def _help(d: Diagnostic, doc: RuleDoc | None, count: int) -> list[str]:
    """The fix's title (or, for a repeat, that each has one), else where the rule is explained."""
    if d.fix is not None and d.fix.applied:
        if count > 1:
            return [f"  = fixed: each of the {count}"]
        return [terminal_safe(f"  = fixed: {d.fix.title}" if d.fix.title else "  = fixed")]
    if d.fix is not None and d.fixable:
        if count > 1:
            return [f"  = help: a safe fix for each of the {count} (run `onnx-lint check --fix`)"]
        what = f"{d.fix.title} (safe fix: run `onnx-lint check --fix`)" if d.fix.title else \
            "safe fix available: run `onnx-lint check --fix`"
        return [terminal_safe(f"  = help: {what}")]
    if doc is not None:
        return [f"  = help: see `onnx-lint rule {d.code}`"]
    return []


def _also_at(repeat: Repeat) -> str:
    """``  | also at A, B, C and 367 more``: where the first few of the others are."""
    shown = [o.location.display() for o in repeat.others[:_ALSO_AT]]
    rest = len(repeat.others) - len(shown)
    return terminal_safe(f"  | also at {', '.join(shown)}" + (f" and {rest} more" if rest else ""))


def render_full(diagnostics: list[Diagnostic], *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> str:
    """The concise line, then the severity, the engine that derived the fact and a help line (the fix's title)."""
    lines: list[str] = []
    for said in said_once(diagnostics):
        d = said.first if isinstance(said, Repeat) else said
        lines.append(_repeat_head(said) if isinstance(said, Repeat) else _head(d))
        detail = f"{d.severity.value}: {d.name}"
        if d.engine:
            detail += f", derived by {d.engine}"
        lines.append(terminal_safe(f"  | {detail}"))
        for note in d.notes:
            lines.append(f"  | {terminal_safe(note)}")
        if isinstance(said, Repeat):
            lines.append(_also_at(said))
        lines.extend(_help(d, rule_docs.get(d.code), len(said.findings) if isinstance(said, Repeat) else 1))
        lines.append("")
    return "".join(line + "\n" for line in lines)
