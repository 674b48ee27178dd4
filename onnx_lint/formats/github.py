"""``--output-format github``: GitHub Actions workflow commands (annotations on the PR)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from onnx_lint.diagnostics import Diagnostic

if TYPE_CHECKING:
    from onnx_lint.formats import RuleDoc

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(diagnostics: list[Diagnostic], *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> str:
    from onnx_lint.formats import relative_path

    lines = []
    for d in diagnostics:
        props = (f"title={escape_property(f'onnx-lint ({d.code})')},"
                 f"file={escape_property(relative_path(d.file, root))},line=1")
        lines.append(f"::{_LEVEL[d.severity.value]} {props}::"
                     f"{escape_data(d.location.display() + ': ' + d.message)}\n")
    return "".join(lines)
