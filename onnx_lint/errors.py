"""Errors that carry a message fit to show a user (no traceback)."""

from __future__ import annotations


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
