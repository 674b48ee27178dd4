"""One INT8 + FP16 build from calibrated ranges: quantize, convert, check.

A build is cheap once the ranges are cached (see ``ranges``), so the pipeline
builds again whenever nodes move out of INT8: for ORT's default-level fusions
and for an accuracy target.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import onnx

from onnx_lint.base.errors import OnnxLintError, one_line
from onnx_lint.quantization.fp16 import ConversionError, convert_to_fp16
from onnx_lint.quantization.fusions import FUSED_BY_DEFAULT, fp32_islands
from onnx_lint.quantization.placement import float_readers_read_float
from onnx_lint.quantization.ranges import quiet_onnxruntime
from onnx_lint.quantization.static_quantizer import quantize_static_cached

# What every INT8 build asks of ONNX Runtime, stated to it rather than left to its defaults, so that the
# written model's record (model/provenance.py) says what is true: signed INT8 throughout, weights symmetric
# (zero-point 0); activations asymmetric for ONNX Runtime (a zero-point of their own: ReLU outputs keep all 256
# levels) and symmetric for TensorRT, whose explicit quantization accepts only zero-points equal to 0
# (``BuildSettings.symmetric_activations``).
WEIGHT_SYMMETRIC = True


class BuildError(OnnxLintError):
    """A build step failed; the message says which."""


@dataclass(frozen=True)
class BuildSettings:
    method: str
    op_types: list[str]
    per_channel: bool
    keep_io_types: bool
    external_data: bool
    int8: bool = True  # False: no node can be quantized; the build is FP16 only
    fp32_island_ops: frozenset[str] = FUSED_BY_DEFAULT  # op types whose DQ->op->Q islands keep FP32 scales
    output_qdq: bool = False  # True: ORT's default, Q/DQ on op outputs too; False: inputs only (TensorRT's way)
    # The user's --exclude-nodes: kept out of FP16 as well (constants FP16 cannot hold, OL201); nodes the
    # accuracy fallback moves out of INT8 are not listed here and compute in FP16.
    keep_fp32: frozenset[str] = frozenset()
    # TensorRT's form: zero-points 0 on activations too, biases left in float (no int32 DequantizeLinear)
    symmetric_activations: bool = False


@dataclass
class Build:
    path: Path
    model: onnx.ModelProto
    excluded: frozenset[str]
    islands: list[str] = field(default_factory=list)  # nodes computing between FP32-scale Q/DQ

    @property
    def qdq(self) -> tuple[int, int]:
        counts = Counter(n.op_type for n in self.model.graph.node)
        return counts.get("QuantizeLinear", 0), counts.get("DequantizeLinear", 0)

    def int8_nodes(self) -> list[str]:
        """Names of the nodes that compute in INT8: those reading a DequantizeLinear output."""
        dq = {o for n in self.model.graph.node if n.op_type == "DequantizeLinear" for o in n.output}
        return [n.name for n in self.model.graph.node
                if n.op_type not in ("QuantizeLinear", "DequantizeLinear") and n.name
                and any(i in dq for i in n.input)]


def build(fp32: Path, cache: Path, out: Path, settings: BuildSettings, excluded: frozenset[str]) -> Build:
    """Quantize ``fp32`` with the cached ranges, leaving ``excluded`` nodes in float, then FP16."""
    try:
        return _build(fp32, cache, out, settings, excluded)
    except ConversionError as exc:
        raise BuildError(str(exc)) from None


def _build(fp32: Path, cache: Path, out: Path, settings: BuildSettings, excluded: frozenset[str]) -> Build:
    if not settings.int8:
        return _checked(convert_to_fp16(onnx.load(fp32), keep_io_types=settings.keep_io_types,
                                            keep_nodes=tuple(sorted(settings.keep_fp32))), out, excluded)
    int8 = out.with_suffix(".int8.onnx")
    try:
        with quiet_onnxruntime():
            quantize_static_cached(fp32, cache, int8, per_channel=settings.per_channel, op_types=settings.op_types,
                                   nodes_to_exclude=sorted(excluded), extra_options=_extra_options(settings),
                                   external_data=settings.external_data)
    except Exception as exc:
        raise BuildError(f"INT8 quantization (ONNX Runtime's QDQ quantizer) failed: "
                         f"{type(exc).__name__}: {one_line(exc)}") from None
    quantized = onnx.load(int8)
    if not settings.output_qdq:  # inputs-only Q/DQ: nodes left in float read the float tensor (placement.py)
        float_readers_read_float(quantized, settings.op_types, excluded)
    converted = convert_to_fp16(quantized, keep_io_types=settings.keep_io_types,
                                keep_nodes=tuple(sorted(settings.keep_fp32)))
    islands = fp32_islands(converted, settings.fp32_island_ops)
    return _checked(converted, out, excluded, islands)


def _extra_options(settings: BuildSettings) -> dict:
    """Q/DQ on op inputs only, unless asked: an output's own Q/DQ adds a rounding that the next op's
    input Q/DQ repeats (mtcnn onet: cosine 0.99900 -> 0.99914 with per-channel weights)."""
    options: dict = {"ActivationSymmetric": settings.symmetric_activations, "WeightSymmetric": WEIGHT_SYMMETRIC}
    if settings.symmetric_activations:
        options["QuantizeBias"] = False  # TensorRT runs no int32 DequantizeLinear; it fuses a float bias itself
    if not settings.output_qdq:
        options["OpTypesToExcludeOutputQuantization"] = list(settings.op_types)
    return options


def _checked(converted: onnx.ModelProto, out: Path, excluded: frozenset[str],
             islands: list[str] | None = None) -> Build:
    save(converted, out)
    try:
        onnx.checker.check_model(str(out), full_check=True)
    except Exception as exc:
        raise BuildError(f"the quantized model fails onnx.checker: {one_line(exc)}") from None
    return Build(out, converted, excluded, islands or [])


def save(model: onnx.ModelProto, path: Path) -> None:
    if model.ByteSize() > 2**31 - 1 - 2**20:
        onnx.save_model(model, path, save_as_external_data=True, location=path.name + ".data")
    else:
        onnx.save_model(model, path)
