"""Output formats for diagnostics: one module per format, one ``render`` entry point."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from onnx_lint.diagnostics import Diagnostic, Severity

FORMATS = ("full", "concise", "json", "sarif", "github", "junit")


@dataclass(frozen=True)
class RuleDoc:
    """What an output format may say about a rule."""

    code: str
    name: str
    summary: str
    severity: Severity
    fixable: bool
    url: str


def relative_path(file: str, root: Path) -> str:
    """``file`` relative to ``root`` with forward slashes where possible, else as given."""
    path = Path(file)
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return path.as_posix()


def render(diagnostics: list[Diagnostic], fmt: str, *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> str:
    """The diagnostics in format ``fmt`` (one of ``FORMATS``)."""
    if fmt == "full":
        from onnx_lint.formats.text import render_full as renderer
    elif fmt == "concise":
        from onnx_lint.formats.text import render_concise as renderer
    elif fmt == "json":
        from onnx_lint.formats.json_format import render_json as renderer
    elif fmt == "sarif":
        from onnx_lint.formats.sarif import render_sarif as renderer
    elif fmt == "github":
        from onnx_lint.formats.github import render_github as renderer
    elif fmt == "junit":
        from onnx_lint.formats.junit import render_junit as renderer
    else:
        raise ValueError(f"unknown output format {fmt!r}")
    return renderer(diagnostics, root=root, rule_docs=rule_docs)
