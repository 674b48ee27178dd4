"""What ``quantize_static`` recomputes at every build, computed once per quantize run.

``quantize_static`` computes every weight's scale and zero point again at each
build, channel by channel in Python (opennsfw: 26,624 channels, about 1.2 s a
build), quantizes every weight again channel by channel, and runs ONNX shape
inference on the same FP32 file. Within one run the weights and the settings
that decide them are the same for every build (``auto``'s two, the fallback's
steps, a load retry), so the parameters are kept per tensor and handed out as
copies (ORT later raises a weight's scale in place where a bias would
overflow, which depends on the activation ranges of that build), a quantized
weight is kept per tensor and quantization parameters, and the inferred model
per file (size and modification time).

The cache is a context variable, so concurrent runs (the language server's
jobs) never share one; without a cache ORT's own method runs unchanged.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

_CACHE: ContextVar[dict | None] = ContextVar("onnx_lint_weight_params", default=None)
_installed = False


def _key(quantizer: Any, name: str, info: Any) -> tuple:  # noqa: ANN401 - ORT's quantizer and tensor info
    """Everything ``_calc_initializer_quant_params`` reads besides the (fixed) weight values."""
    return (name, str(info.tensor_type), info.axis, info.data_type, quantizer.weight_qType,
            quantizer.activation_qType, quantizer.reduce_range, quantizer.is_activation_symmetric,
            quantizer._is_weight_symmetric, quantizer.min_real_range, getattr(quantizer, "block_size", 0),
            repr(quantizer.tensor_quant_overrides.get(name, None)))


def _install() -> None:
    """Wrap ORT's ``QDQQuantizer._calc_initializer_quant_params`` once; it defers to ORT without a cache."""
    global _installed
    if _installed:
        return
    from onnxruntime.quantization.qdq_quantizer import QDQQuantizer

    original = QDQQuantizer._calc_initializer_quant_params

    def calc(self: Any) -> dict:  # noqa: ANN401 - ORT's quantizer
        cache = _CACHE.get()
        if cache is None:
            return original(self)
        wanted = dict(self.tensors_to_quantize)
        keys = {name: _key(self, name, info) for name, info in wanted.items()}
        self.tensors_to_quantize = {name: info for name, info in wanted.items() if keys[name] not in cache}
        try:
            for name, params in original(self).items():
                cache[keys[name]] = params
        finally:
            self.tensors_to_quantize = wanted
        return {name: copy.deepcopy(cache[key]) for name, key in keys.items() if key in cache}

    import importlib

    from onnxruntime.quantization import qdq_quantizer

    quantize: Any = importlib.import_module("onnxruntime.quantization.quantize")  # the package's is a function

    quantize_initializer = qdq_quantizer.quantize_onnx_initializer

    def quantized(weight: Any, quant_type: Any, zero_point: Any, scale: Any, axis: Any = None,  # noqa: ANN401
                  **kwargs: Any) -> Any:  # noqa: ANN401 - ORT's arguments
        cache = _CACHE.get()
        if cache is None:
            return quantize_initializer(weight, quant_type, zero_point, scale, axis, **kwargs)
        key = ("weight", weight.name, quant_type, zero_point.dtype.str, zero_point.tobytes(), scale.dtype.str,
               scale.tobytes(), axis, repr(sorted(kwargs.items())))
        if key not in cache:
            cache[key] = quantize_initializer(weight, quant_type, zero_point, scale, axis, **kwargs)
        result = type(cache[key])()
        result.CopyFrom(cache[key])
        return result

    load_inferred = quantize.load_model_with_shape_infer

    def inferred(model_path: Any) -> Any:  # noqa: ANN401 - a Path; ORT's ModelProto
        cache = _CACHE.get()
        if cache is None:
            return load_inferred(model_path)
        stat = Path(model_path).stat()
        key = ("inferred", str(Path(model_path).resolve()), stat.st_size, stat.st_mtime_ns)
        if key not in cache:
            cache[key] = load_inferred(model_path)
        result = type(cache[key])()
        result.CopyFrom(cache[key])
        return result

    QDQQuantizer._calc_initializer_quant_params = calc
    qdq_quantizer.quantize_onnx_initializer = quantized
    quantize.load_model_with_shape_infer = inferred
    _installed = True


@contextlib.contextmanager
def weight_params_reused() -> Iterator[None]:
    """Builds inside share one cache of weight quantization parameters (same model, same settings)."""
    _install()
    token = _CACHE.set({})
    try:
        yield
    finally:
        _CACHE.reset(token)
