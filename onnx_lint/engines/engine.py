"""The engines that answer for a shape or a verdict, by the name a diagnostic shows.

A diagnostic's ``engine`` says which engine found what it reports (docs/design.md,
"Engines and the order they answer"); these names are part of the JSON output, so each is
written here once.
"""

from __future__ import annotations

from enum import Enum


class Engine(str, Enum):
    """An engine's name; a ``str`` that prints, formats, hashes and serialises as its value."""

    ONNX = "onnx"
    ONNX_PINNED = "onnx, dynamic dims pinned"
    ONNX_NAMES_PINNED = "onnx, each dynamic input dim pinned to its own size"
    ONNX_INPUT_DIMS_PINNED = "onnx, input dims pinned"
    ONNX_LOOP_RANK = "onnx, with Loop-carried ranks from the body"
    ONNX_CARRIED_STATE = "onnx, Loop/Scan state from its initial values"
    ORT_SYMBOLIC = "onnxruntime-symbolic"
    ORT_RUN = "onnxruntime run"
    ORT_REGISTRY = "onnxruntime registry"
    ORT_SESSION = "onnxruntime session"
    CHECKER = "onnx.checker"
    CHECKER_FULL = "onnx.checker, full"

    # The value, never "Engine.ONNX": messages and output formats insert it as text, and a
    # diagnostic read back from the cache (a plain str) must equal and hash like a fresh one.
    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)

    __hash__ = str.__hash__
