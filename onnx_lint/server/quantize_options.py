"""The quantize command's options, checked before any work: types, ranges and sizes.

They come from the command's arguments and from the client's settings (which a workspace's
settings file can carry), so each is a request from outside the user's hands. A wrong type or an
out-of-range number is a clear ``ConfigError`` naming the option, never a Python exception deep in
the pipeline; a number of samples or seconds is bounded so that one setting cannot make the worker
eat memory or run for ever.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from onnx_lint.base.errors import ConfigError
from onnx_lint.quantization.options import TARGETS
from onnx_lint.server.output_path import MAX_PATH_CHARS

# Bounds of the numeric options.
MAX_SAMPLES = 1024
MAX_SECONDS = 24 * 3600.0
# The most names in a list (a path or a name holds at most MAX_PATH_CHARS, PATH_MAX on Linux).
MAX_NAMES = 100_000
METHODS = ("auto", "minmax", "entropy", "percentile")
_FLAGS = ("perChannel", "keepIoTypes", "outputQdq", "int8OutputLayers", "int8SmallLayers", "force")


def checked_quantize_options(raw: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` with every known option checked (``ConfigError`` names the first bad one); unknown keys dropped."""
    checked: dict[str, Any] = {}
    for key in _FLAGS:
        if key in raw:
            if not isinstance(raw[key], bool):
                raise ConfigError(f"quantize option '{key}' must be true or false")
            checked[key] = raw[key]
    for key in ("calibrationData", "output"):
        if raw.get(key) is not None:
            checked[key] = _path(raw[key], key)
    if "calibrationMethod" in raw:
        if raw["calibrationMethod"] not in METHODS:
            raise ConfigError(f"quantize option 'calibrationMethod' must be one of {', '.join(METHODS)}")
        checked["calibrationMethod"] = raw["calibrationMethod"]
    if raw.get("target") not in (None, ""):  # "" is the setting's default: ask once per workspace
        if raw["target"] not in TARGETS:
            raise ConfigError(f"quantize option 'target' must be one of {', '.join(TARGETS)}")
        if raw["target"] == "tensorrt" and raw.get("outputQdq") is True:
            raise ConfigError("quantize option 'outputQdq' does not go with target 'tensorrt': TensorRT fuses Q/DQ "
                              "on the inputs of its INT8 layers only")
        checked["target"] = raw["target"]
    if "samples" in raw:
        checked["samples"] = _count(raw["samples"], "samples", 1)
    if "validationSamples" in raw:
        checked["validationSamples"] = _count(raw["validationSamples"], "validationSamples", 0)
    if raw.get("minCosine") is not None:
        checked["minCosine"] = _number(raw["minCosine"], "minCosine", -1.0, 1.0)
    if "sensitivitySeconds" in raw:
        checked["sensitivitySeconds"] = _number(raw["sensitivitySeconds"], "sensitivitySeconds", 0.0, MAX_SECONDS)
    if "fallbackSeconds" in raw:
        checked["fallbackSeconds"] = _number(raw["fallbackSeconds"], "fallbackSeconds", 0.0, MAX_SECONDS)
    for key in ("opTypes", "excludeNodes", "inputShapes"):
        if raw.get(key) is not None:
            checked[key] = _names(raw[key], key)
    return checked


def _path(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"quantize option '{key}' must be a path (a string)")
    if "\0" in value:
        raise ConfigError(f"quantize option '{key}' contains a NUL byte")
    if len(value) > MAX_PATH_CHARS:
        raise ConfigError(f"quantize option '{key}' is {len(value)} characters long; a path has at most "
                          f"{MAX_PATH_CHARS}")
    return value


def _count(value: Any, key: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_SAMPLES:
        raise ConfigError(f"quantize option '{key}' must be a whole number from {low} to {MAX_SAMPLES}")
    return value


def _number(value: Any, key: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high:
        raise ConfigError(f"quantize option '{key}' must be a number from {low:g} to {high:g}")
    return float(value)


def _names(value: Any, key: str) -> list[str]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"quantize option '{key}' must be a list of strings")
    if len(value) > MAX_NAMES or any(len(v) > MAX_PATH_CHARS or "\0" in v for v in value):
        raise ConfigError(f"quantize option '{key}' holds more than {MAX_NAMES} names, or a name longer than "
                          f"{MAX_PATH_CHARS} characters or with a NUL byte")
    return value
