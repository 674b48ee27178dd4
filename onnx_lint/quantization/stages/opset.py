"""Stage 2, raise the opset: FP16 scales on QuantizeLinear/DequantizeLinear need opset 19; then the FP32 model
is written to the run's work folder with its weights, for ONNX Runtime's calibrator and quantizer to read."""

from __future__ import annotations

import onnx

from onnx_lint.base.errors import one_line
from onnx_lint.model.external import read_external_weights
from onnx_lint.model.graphs import iter_scopes
from onnx_lint.model.validate import iter_tensors
from onnx_lint.quantization.build import save
from onnx_lint.quantization.options import QuantizeError
from onnx_lint.quantization.report_parts import OpsetChange
from onnx_lint.quantization.run_state import QuantizeRun

MIN_QDQ_OPSET = 19  # FP16 scales on QuantizeLinear/DequantizeLinear need opset 19
TARGET_OPSET = 21


def raise_opset(run: QuantizeRun) -> None:
    current = next((o.version for o in run.model.opset_import if o.domain in ("", "ai.onnx")), 0)
    run.report.opset = OpsetChange(current, current)
    if current < MIN_QDQ_OPSET:
        from onnx import version_converter

        try:
            converted = version_converter.convert_version(run.model, TARGET_OPSET)
        except Exception as exc:
            raise QuantizeError(f"cannot raise the opset from {current} to {TARGET_OPSET} (needed for FP16 "
                                f"Q/DQ scales): {type(exc).__name__}: {one_line(exc)}") from None
        converted.ir_version = max(converted.ir_version, 10)
        run.report.opset.after = TARGET_OPSET
        run.model = converted
    _load_weights(run)
    run.fp32 = run.work / "fp32.onnx"
    save(run.model, run.fp32)
    run.external = run.model.ByteSize() > 2**30


def _load_weights(run: QuantizeRun) -> None:
    """Quantization needs the weights: bring external data in, each file read through one checked descriptor
    (``read_external_weights``: a file swapped for a link after the first check is not followed)."""
    external = [t for _, t in iter_tensors(list(iter_scopes(run.model)))
                if t.data_location == onnx.TensorProto.EXTERNAL]
    if external:
        read_external_weights(external, run.source)
