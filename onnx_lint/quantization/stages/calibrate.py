"""Stage 3, calibrate: the activation ranges once per method, and the FP32 outputs the builds are judged by."""

from __future__ import annotations

import json
import re
from pathlib import Path

from onnx_lint.base.errors import one_line
from onnx_lint.base.progress import Cancelled
from onnx_lint.lint.diagnostics import Diagnostic
from onnx_lint.quantization.options import QuantizeError, quantized_op_types
from onnx_lint.quantization.ranges import AUTO_METHODS, AUTO_METHODS_SYMMETRIC, calibrate
from onnx_lint.quantization.run_state import QuantizeRun
from onnx_lint.quantization.validation import RuntimeFailure, run_in_process
from onnx_lint.rules.registry import UntypedAfterShapeInference


def calibrate_ranges(run: QuantizeRun) -> None:
    options, model = run.options, run.model
    run.op_types = quantized_op_types(options)
    excluded = set(options.exclude_nodes)
    run.int8 = any(n.op_type in run.op_types and n.name not in excluded for n in model.graph.node)
    run.caches = {options.calibration_method: run.work / "unused.json"}
    run.checked = (run.samples[: options.validation_samples] if options.validation_samples > 0 else run.samples)
    reference = None
    if run.int8:
        run.progress.stage(f"Calibrating on {len(run.samples)} samples ({options.calibration_method})",
                           len(run.samples))
        try:
            # the calibration run keeps the FP32 outputs of the validation samples: no second FP32 pass
            run.caches, reference = calibrate(run.fp32, run.samples, options.calibration_method, run.op_types,
                                              run.work, run.progress, run.external,
                                              [o.name for o in model.graph.output], len(run.checked),
                                              inputs_only=not options.output_qdq,
                                              auto_methods=AUTO_METHODS_SYMMETRIC if options.symmetric_activations
                                              else AUTO_METHODS)
        except Cancelled:
            raise
        except Exception as exc:
            raise not_runnable(run.source, exc, run.diagnostics) from None
        run.report.calibration["tensors"] = _tensor_count(next(iter(run.caches.values())))
    run.progress.check()
    run.report.calibration["validation_samples"] = len(run.checked)
    if reference is None:
        try:
            reference = run_in_process(run.fp32, run.checked)  # as safe as calibration, which just ran it here
        except RuntimeFailure as exc:
            raise not_runnable(run.source, exc, run.diagnostics) from None
    run.reference = reference


def _tensor_count(cache: Path) -> int:
    try:
        return len(json.loads(cache.read_text()).get("data", {}))
    except (OSError, ValueError, AttributeError):
        return 0


def not_runnable(source: Path, exc: Exception, diagnostics: list[Diagnostic]) -> QuantizeError:
    """Calibration runs the FP32 model: its failure means the model cannot run, say why and where."""
    unresolved = [d for d in diagnostics if d.code == UntypedAfterShapeInference.code and not d.fix_applied]
    hint = f" (onnx-lint: {unresolved[0].location.display()}: {unresolved[0].message})" if unresolved else ""
    text = one_line(exc)
    if "ONNXRuntimeError" in text or unresolved:
        shape_hint = ""
        if re.search(r"shape|dimension|Reshape|broadcast", text, re.IGNORECASE):
            shape_hint = (" - if the random inputs have the wrong shape for this model, give one that runs with "
                          "--input-shape NAME=1x3x32x100 (or real samples with --calibration-data)")
        return QuantizeError(f"{source}: the model is not runnable, so it cannot be calibrated: {text}{hint}"
                             f"{shape_hint}; nothing was written")
    return QuantizeError(f"calibration (ONNX Runtime) failed: {type(exc).__name__}: {text}; nothing was written")
