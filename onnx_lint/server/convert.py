"""onnx-lint diagnostics as LSP diagnostics, for the model file and for its textual view.

On the binary model file every finding sits at line 0 (there are no lines);
its message ends with the location. In the textual view it sits on the
anchor of its location: the output's name in the graph header, the node's
line. ``data`` carries what a quick fix needs, so a client can hand it back.
A run of findings of one cause (``formats.repeats``) can be one entry that
lists the others as related information.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from lsprotocol import types as lsp
from pygls.uris import from_fs_path

from onnx_lint.formats.repeats import Repeat
from onnx_lint.lint.diagnostics import Diagnostic, Severity
from onnx_lint.rules import rule_url
from onnx_lint.server.view_model import Anchor, ModelView

SOURCE = "onnx-lint"
VIEW_SCHEME = "onnx-lint"
VIEW_SUFFIX = ".txt"
RELATED_CAP = 50  # a repeat's entry names this many of its other locations

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFO: lsp.DiagnosticSeverity.Information,
}


def model_file_uri(path: Path) -> str:
    """The ``file:`` URI of a model file, as the editor spells it."""
    return from_fs_path(str(path)) or path.as_uri()


def view_uri(model_path: str) -> str:
    """``onnx-lint:///abs/model.onnx.txt``: the textual view of a model."""
    return f"{VIEW_SCHEME}://{quote(model_path + VIEW_SUFFIX)}"


def view_model_path(uri: str) -> str | None:
    """The model path of a view URI, or None for any other URI."""
    parts = urlsplit(uri)
    if parts.scheme != VIEW_SCHEME or not parts.path.endswith(VIEW_SUFFIX):
        return None
    return unquote(parts.path[: -len(VIEW_SUFFIX)])


def _utf16(text: str, offset: int) -> int:
    prefix = text[:offset]
    return offset if prefix.isascii() else len(prefix.encode("utf-16-le")) // 2


def anchor_range(view: ModelView | None, anchor: Anchor | None, utf16: bool = True) -> lsp.Range:
    if view is None or anchor is None:
        return lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))
    start, end = anchor.start, anchor.end
    if utf16:
        line = view.lines[anchor.line] if anchor.line < len(view.lines) else ""
        start, end = _utf16(line, start), _utf16(line, end)
    return lsp.Range(lsp.Position(anchor.line, start), lsp.Position(anchor.line, end))


def fix_key(diagnostic: Diagnostic) -> list[Any]:
    return list(diagnostic.key())


def quick_fix_title(diagnostic: Diagnostic) -> str:
    """What the quick fix does, as ruff's server names it: ``onnx-lint (OL001): Declare ...``."""
    title = diagnostic.fix.title if diagnostic.fix is not None and diagnostic.fix.title else \
        f"Fix {diagnostic.name} at {diagnostic.location.display()}"
    return f"onnx-lint ({diagnostic.code}): {title}"


def _range(diagnostic: Diagnostic, view: ModelView | None, utf16: bool) -> lsp.Range:
    anchor = view.find(diagnostic.location.path, diagnostic.location.tensor) if view is not None else None
    return anchor_range(view, anchor, utf16)


def to_lsp(diagnostic: Diagnostic, model_uri: str, view: ModelView | None = None,
           utf16: bool = True, more: str = "") -> lsp.Diagnostic:
    """One LSP diagnostic; ``view`` given: ranged on the textual view, else at line 0 of the file.

    ``more`` says what else the entry stands for (a repeat's count), after the location.
    """
    url = rule_url(diagnostic.code)
    where = diagnostic.location.display()
    # The problem leads (the Problems panel cuts long rows); on the binary file, where every entry
    # sits at line 1, the location follows it.
    after = [part for part in (f"at {where}" if view is None else "", more) if part]
    message = f"{diagnostic.message} ({'; '.join(after)})" if after else diagnostic.message
    if diagnostic.notes:
        message += "\n" + "\n".join(f"note: {n}" for n in diagnostic.notes)
    return lsp.Diagnostic(
        range=_range(diagnostic, view, utf16),
        message=message,
        severity=_SEVERITY[diagnostic.severity],
        code=diagnostic.code,
        code_description=lsp.CodeDescription(href=url) if url else None,
        source=SOURCE,
        data={
            "uri": model_uri,
            "key": fix_key(diagnostic),
            "name": diagnostic.name,
            "location": diagnostic.location.to_json(),
            "engine": diagnostic.engine,
            "fixable": diagnostic.fixable,
            "edits": diagnostic.to_record()["edits"],
        },
    )


def repeat_to_lsp(repeat: Repeat, model_uri: str, shown_uri: str, view: ModelView | None = None,
                  utf16: bool = True, related: bool = True) -> lsp.Diagnostic:
    """One LSP diagnostic for a run of findings of one cause, at the first: the count in its message and
    the other locations (``RELATED_CAP`` at most) as related information, or in the message for a client
    that shows none. ``shown_uri`` is the document the entry is published on (the file or its view)."""
    diagnostic = to_lsp(repeat.first, model_uri, view, utf16, more=repeat.more())
    others = repeat.others[:RELATED_CAP]
    rest = len(repeat.others) - len(others)
    if related:
        diagnostic.related_information = [
            lsp.DiagnosticRelatedInformation(lsp.Location(shown_uri, _range(o, view, utf16)), o.location.display())
            for o in others]
        if rest:
            diagnostic.related_information.append(lsp.DiagnosticRelatedInformation(
                lsp.Location(shown_uri, diagnostic.range),
                f"and {rest} more: `onnx-lint check --output-format json` lists every location"))
    else:
        lines = [f"also at {o.location.display()}" for o in others] + ([f"and {rest} more"] if rest else [])
        diagnostic.message += "\n" + "\n".join(lines)
    return diagnostic
