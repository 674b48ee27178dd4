"""Errors that carry a message fit to show a user (no traceback)."""

from __future__ import annotations

import re


def first_line(exc: BaseException, limit: int = 500) -> str:
    """The first line of an exception's text (libraries put the gist there), or its class name when empty."""
    text = str(exc).strip()
    return text.splitlines()[0].strip()[:limit] if text else type(exc).__name__


def one_line(exc: BaseException, limit: int = 1500) -> str:
    """An exception's whole text on one line, up to ``limit`` (ONNX Runtime puts the useful part last)."""
    text = " ".join(str(exc).split())
    if not text:
        return type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


_TAGS = re.compile(r"^(\s*\[\w+\]\s*)+")
_NESTED = re.compile(r"^Inference error\(s\): \(op_type:([^,)]+)(?:, node name: ([^)]*))?\):\s*(.*)$")


def untagged(text: str) -> str:
    """ONNX's inference message as a phrase: without its category tags (``[ShapeInferenceError]``) or
    final full stop, and a nested report (a function body's, a subgraph's) as "inside it, at TopK: ..."."""
    text = _TAGS.sub("", text).strip()
    nested = _NESTED.match(text)
    if nested:
        op_type, name, rest = nested.groups()
        where = f"{op_type} '{name}'" if name else op_type
        return f"inside it, at {where}: {untagged(rest)}"
    return text.rstrip(".").strip()


def inner_message(text: str) -> str:
    """What strict inference says about the one node it reports first, without the wrapper naming it."""
    nested = _NESTED.match(_TAGS.sub("", text).strip())
    return untagged(nested.group(3)) if nested else untagged(text)


class OnnxLintError(Exception):
    """Base class: ``str(error)`` is a complete, user-facing sentence."""


class ModelLoadError(OnnxLintError):
    """The file cannot be read or analysed as an ONNX model."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class FixError(OnnxLintError):
    """A fix could not be completed; nothing was written."""


class ConfigError(OnnxLintError):
    """A configuration file or option is invalid."""



class OutputError(OnnxLintError):
    """A file the user asked for (a report, an output) could not be written; the message names it."""
