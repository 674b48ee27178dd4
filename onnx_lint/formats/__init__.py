"""Output formats for diagnostics: one module per format, one ``render`` entry point.

Every renderer has the same signature, ``(diagnostics, *, root, rule_docs) -> str``,
so the command line and the server need to know only a format's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from onnx_lint.diagnostics import Diagnostic, Severity

FORMATS = ("full", "concise", "json", "sarif", "github", "junit")


@dataclass(frozen=True)
class RuleDoc:
    """What an output format may say about a rule, without importing the rules."""

    code: str
    name: str
    summary: str
    severity: Severity
    fixable: bool
    url: str


Renderer = Callable[..., str]


def relative_path(file: str, root: Path) -> str:
    """``file`` relative to ``root`` with forward slashes where possible, else as given.

    CI annotations and code scanning resolve paths against the repository, so
    a path the user typed relative to a sub-folder must still come out repo-relative.
    """
    path = Path(file)
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):
        return path.as_posix()


def _renderer(fmt: str) -> Renderer:
    # Imported lazily: a run pays only for the format it prints.
    if fmt == "full":
        from onnx_lint.formats.text import render_full
        return render_full
    if fmt == "concise":
        from onnx_lint.formats.text import render_concise
        return render_concise
    if fmt == "json":
        from onnx_lint.formats.json_format import render_json
        return render_json
    if fmt == "sarif":
        from onnx_lint.formats.sarif import render_sarif
        return render_sarif
    if fmt == "github":
        from onnx_lint.formats.github import render_github
        return render_github
    if fmt == "junit":
        from onnx_lint.formats.junit import render_junit
        return render_junit
    raise ValueError(f"unknown output format {fmt!r} (choose from {', '.join(FORMATS)})")


def render(diagnostics: list[Diagnostic], fmt: str, *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> str:
    """The diagnostics in format ``fmt`` (one of ``FORMATS``); ``ValueError`` for another name."""
    return _renderer(fmt)(diagnostics, root=root, rule_docs=rule_docs)
