"""Errors that carry a message fit to show a user (no traceback)."""

from __future__ import annotations


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
