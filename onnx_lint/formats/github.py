"""``--output-format github``: GitHub Actions workflow commands (annotations on the PR).

Tensor and node names come from the model, so they may hold any character:
controls and bidi characters are escaped first (``escape.safe_text``, so the
Actions log, which renders ANSI, shows no ESC sequence), then the escaping the
Actions runner documents keeps a name from ending a property or starting a new
command (no CR or LF survives, so no ``::`` of a name can start a line).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from onnx_lint.formats.escape import safe_text
from onnx_lint.lint.diagnostics import Diagnostic

if TYPE_CHECKING:
    from onnx_lint.formats import RuleDoc

_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """The message part of a workflow command: controls as ``safe_text`` shows them, then ``%``, CR and LF."""
    return safe_text(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    """A property value: as data, plus ``:`` and ``,`` which would end it."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(d: Diagnostic, root: Path) -> str:
    """One ``::error title=...,file=...,line=1::location: message`` line (no newline)."""
    from onnx_lint.formats import relative_path

    props = ",".join((
        f"title={escape_property(f'onnx-lint ({d.code})')}",
        f"file={escape_property(relative_path(d.file, root))}",
        "line=1",  # a model has no lines; line 1 still puts the annotation on the file
    ))
    return f"::{_COMMAND[d.severity.value]} {props}::{escape_data(f'{d.location.display()}: {d.message}')}"


def render_github(diagnostics: list[Diagnostic], *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> str:
    """One workflow command per diagnostic."""
    return "".join(annotation(d, root) + "\n" for d in diagnostics)
