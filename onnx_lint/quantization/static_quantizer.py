"""ONNX Runtime's static QDQ quantization from cached ranges, with what it recomputes at every build reused.

``quantize_static`` computes every weight's scale and zero point again at each build, channel by channel
in Python (opennsfw: 26,624 channels, about 1.2 s a build), quantizes every weight again channel by
channel (1.8 s), and runs ONNX shape inference on the same FP32 file. Within one quantize run the weights
and the settings that decide them are the same for every build (``auto``'s two, the fallback's builds, a
load retry), so a run keeps them (``weight_params_reused``).

This is ``quantize_static``'s own sequence for a QDQ model whose ranges are cached (load with shape
inference, raise the opset where the types need it, read the ranges, check the arguments, quantize, save),
run with ``ReusingQDQQuantizer``: a subclass of ORT's ``QDQQuantizer`` whose two methods consult the run's
cache first. Nothing of ONNX Runtime is patched, so another caller in the same process (another run, the
user's own ``quantize_static``) gets ORT's behaviour, and two runs in two threads never share a cache.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import onnx

_CACHE: ContextVar[dict | None] = ContextVar("onnx_lint_quantizer_cache", default=None)


@contextlib.contextmanager
def weight_params_reused() -> Iterator[None]:
    """Builds inside share one cache of weight quantization parameters and values (same model, same settings)."""
    token = _CACHE.set({})
    try:
        yield
    finally:
        _CACHE.reset(token)


def quantize_static_cached(fp32: Path, ranges: Path, out: Path, *, per_channel: bool, op_types: list[str],
                           nodes_to_exclude: list[str], extra_options: dict, external_data: bool) -> None:
    """INT8 (signed, activations and weights) QDQ quantization of ``fp32`` with the ranges cached in ``ranges``,
    written to ``out``: what ``quantize_static(..., calibration_cache_path=ranges)`` writes."""
    quant_utils: Any = importlib.import_module("onnxruntime.quantization.quant_utils")
    calibrate: Any = importlib.import_module("onnxruntime.quantization.calibrate")
    quantize: Any = importlib.import_module("onnxruntime.quantization.quantize")  # the package's is a function
    int8 = quant_utils.QuantType.QInt8
    model = quant_utils.update_opset_version(_inferred(fp32), int8, int8, tensor_quant_overrides=None, block_size=0)
    quantize.check_static_quant_arguments(quant_utils.QuantFormat.QDQ, int8, int8)
    quantizer = _reusing_class()(model, per_channel, False, int8, int8, calibrate.load_tensors_data(ranges), [],
                                 nodes_to_exclude, op_types, extra_options)
    quantizer.quantize_model()
    quantizer.model.save_model_to_file(str(out), external_data)


def _inferred(path: Path) -> onnx.ModelProto:
    """ORT's ``load_model_with_shape_infer`` of ``path``, once per run for the same file."""
    from onnxruntime.quantization.quant_utils import load_model_with_shape_infer

    cache = _CACHE.get()
    if cache is None:
        return load_model_with_shape_infer(path)
    stat = path.stat()
    key = ("inferred", str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in cache:
        cache[key] = load_model_with_shape_infer(path)
    copied = onnx.ModelProto()
    copied.CopyFrom(cache[key])
    return copied


_REUSING: type | None = None


def _reusing_class() -> type:
    """``ReusingQDQQuantizer``, made once (ORT is imported only when quantizing)."""
    global _REUSING
    if _REUSING is None:
        _REUSING = _make_reusing_class()
    return _REUSING


def _make_reusing_class() -> type:  # noqa: C901 - one class, defined where ORT is importable
    from onnxruntime.quantization import qdq_quantizer as ort_qdq
    from onnxruntime.quantization.quant_utils import (
        QuantizedValue,
        QuantizedValueType,
        add_dequant_output_suffix,
        add_dequant_suffix,
        quantize_onnx_initializer,
    )

    class ReusingQDQQuantizer(ort_qdq.QDQQuantizer):
        """ORT's QDQ quantizer, reading a weight's parameters and quantized values from the run's cache."""

        def _calc_initializer_quant_params(self) -> dict:
            cache = _CACHE.get()
            if cache is None:
                return super()._calc_initializer_quant_params()
            wanted = dict(self.tensors_to_quantize)  # type: ignore[has-type]  # ORT sets it in __init__
            keys = {name: _params_key(self, name, info) for name, info in wanted.items()}
            self.tensors_to_quantize = {name: info for name, info in wanted.items() if keys[name] not in cache}
            try:
                for name, params in super()._calc_initializer_quant_params().items():
                    cache[keys[name]] = params
            finally:
                self.tensors_to_quantize = wanted
            # copies: ORT raises a weight's scale in place where a bias would overflow, which depends on the
            # activation ranges of that build
            return {name: copy.deepcopy(cache[key]) for name, key in keys.items() if key in cache}

        def _add_qdq_nodes_for_initializer(self, weight_proto: onnx.TensorProto) -> None:
            """ORT's method for a weight quantized ahead (weight_quant -> DQ), with the quantized values from
            the cache; every other case is ORT's own."""
            cache = _CACHE.get()
            if cache is None or self.add_qdq_pair_to_weight or weight_proto.name in self.quantized_value_map:
                super()._add_qdq_nodes_for_initializer(weight_proto)
                return
            weight_name = weight_proto.name
            quant_params = self.initializer_quant_params[weight_name]
            axis = quant_params.get("axis")
            block_size = quant_params.get("block_size", 0)
            scale_zp = self._make_scale_zp_initializers(weight_name, quant_params)
            weight_dequant_output = add_dequant_output_suffix(weight_name)
            self.model.replace_input_of_all_nodes(weight_name, weight_dequant_output)
            zero_point, scale = quant_params["zero_point"], quant_params["scale"]
            key = ("weight", weight_name, quant_params["quant_type"], zero_point.dtype.str, zero_point.tobytes(),
                   scale.dtype.str, scale.tobytes(), axis, block_size)
            if key not in cache:
                cache[key] = quantize_onnx_initializer(weight_proto, quant_params["quant_type"], zero_point, scale,
                                                       axis, block_size=block_size)
            quant_weight = onnx.TensorProto()
            quant_weight.CopyFrom(cache[key])
            self.model.add_initializer(quant_weight)
            self._create_dq_node(quant_weight.name, weight_dequant_output, add_dequant_suffix(weight_name),
                                 scale_zp.scale.name, scale_zp.zero_point.name, axis=axis, block_size=block_size)
            quantized = QuantizedValue(weight_name, quant_weight.name, scale_zp.scale.name, scale_zp.zero_point.name,
                                       QuantizedValueType.Initializer, axis=axis)
            self.quantized_value_map[weight_name] = ort_qdq.QDQTensorQuantizedValue(quantized, None, None)

    return ReusingQDQQuantizer


def _params_key(quantizer: Any, name: str, info: Any) -> tuple:  # noqa: ANN401 - ORT's quantizer and tensor info
    """Everything ``_calc_initializer_quant_params`` reads besides the (fixed) weight values."""
    return (name, str(info.tensor_type), info.axis, info.data_type, quantizer.weight_qType,
            quantizer.activation_qType, quantizer.reduce_range, quantizer.is_activation_symmetric,
            quantizer._is_weight_symmetric, quantizer.min_real_range, getattr(quantizer, "block_size", 0),
            repr(quantizer.tensor_quant_overrides.get(name, None)))
