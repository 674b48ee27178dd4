"""Output formats for diagnostics: one module per format, one ``render`` entry point.

Every renderer has the same signature, ``(diagnostics, *, root, rule_docs) -> str``,
so the command line and the server need to know only a format's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from onnx_lint.lint.diagnostics import Diagnostic, Severity

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


# format -> (module, function); imported lazily: a run pays only for the format it prints.
_RENDERERS = {
    "full": ("text", "render_full"),
    "concise": ("text", "render_concise"),
    "json": ("json_format", "render_json"),
    "sarif": ("sarif", "render_sarif"),
    "github": ("github", "render_github"),
    "junit": ("junit", "render_junit"),
}


def _renderer(fmt: str) -> Renderer:
    import importlib

    if fmt not in _RENDERERS:
        raise ValueError(f"unknown output format {fmt!r} (choose from {', '.join(FORMATS)})")
    module, function = _RENDERERS[fmt]
    return getattr(importlib.import_module(f"onnx_lint.formats.{module}"), function)


def render(diagnostics: list[Diagnostic], fmt: str, *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> str:
    """The diagnostics in format ``fmt`` (one of ``FORMATS``); ``ValueError`` for another name."""
    return _renderer(fmt)(diagnostics, root=root, rule_docs=rule_docs)
