"""The INT8 + FP16 pipeline: repair, raise the opset, quantize, convert, validate, write.

Each step names itself in errors, and nothing is written to the output path
unless every step and every check passed.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import onnx

from onnx_lint.context import LintContext
from onnx_lint.diagnostics import Diagnostic
from onnx_lint.errors import OnnxLintError
from onnx_lint.fixer import plan_fix
from onnx_lint.linter import lint_loaded
from onnx_lint.model_io import StagedWrite, read_model
from onnx_lint.progress import Cancelled, Progress
from onnx_lint.quantization.calibration import Sample, input_specs
from onnx_lint.quantization.fp16 import convert_to_fp16
from onnx_lint.quantization.validation import (
    OutputAgreement,
    RuntimeFailure,
    compare,
    run_in_process,
    run_models,
)
from onnx_lint.rule_api import Rule

MIN_QDQ_OPSET = 19  # FP16 scales on QuantizeLinear/DequantizeLinear need opset 19
TARGET_OPSET = 21
QUANTIZED_OPS = frozenset({
    "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul",
    "ConvInteger", "MatMulInteger", "QLinearAdd", "QLinearMul", "QGemm", "MatMulNBits",
})


class QuantizeError(OnnxLintError):
    """The pipeline cannot produce a valid model; ``exit_code`` 1 means "nothing to do"."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class QuantizeOptions:
    calibration_method: str = "minmax"
    op_types: tuple[str, ...] | None = None
    exclude_nodes: tuple[str, ...] = ()
    per_channel: bool = False
    keep_io_types: bool = True
    validation_samples: int = 16  # 0: every calibration sample


@dataclass
class QuantizeReport:
    """What was done and how close the result is to the FP32 model."""

    model: str
    output: str
    calibration: dict
    fixes: list[dict] = field(default_factory=list)
    opset: dict = field(default_factory=dict)
    nodes: dict = field(default_factory=dict)
    validation: dict = field(default_factory=dict)
    outputs: list[OutputAgreement] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "model": self.model, "output": self.output, "calibration": self.calibration,
            "fixes": self.fixes, "opset": self.opset, "nodes": self.nodes, "validation": self.validation,
            "outputs": [{"name": o.name, "cosine_similarity": o.cosine, "max_abs_error": o.max_abs_error,
                         "shape": list(o.shape)} for o in self.outputs],
            "warnings": self.warnings,
        }


@contextlib.contextmanager
def _quiet_onnxruntime() -> Iterator[None]:
    """ORT's quantizer logs through the root logger; keep its chatter off the user's terminal."""
    root = logging.getLogger()
    previous = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(previous)


def _calibration_reader(samples: list[Sample], progress: Progress):
    from onnxruntime.quantization import CalibrationDataReader

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self._items = iter(samples)

        def get_next(self):
            progress.check()
            item = next(self._items, None)
            if item is not None:
                progress.advance()
            return item

    return Reader()


def repair(path: Path, rules: Sequence[Rule]) -> tuple[onnx.ModelProto, list[Diagnostic], LintContext]:
    """Lint and apply every safe fix in memory; the input file is not changed."""
    loaded = read_model(path)
    result, ctx = lint_loaded(loaded, str(path), rules, lambda code: True)
    if ctx is None or result.unreadable:
        problem = result.diagnostics[0].message if result.diagnostics else "; ".join(result.internal_errors)
        raise QuantizeError(f"{path}: {problem}")
    plan = plan_fix(ctx, result.diagnostics, rules, lambda code: True)
    model = onnx.ModelProto.FromString(plan.data) if plan else loaded.fresh_copy()
    remaining = plan.relint if plan else result.diagnostics
    return model, (plan.applied if plan else []) + remaining, ctx


def _raise_opset(model: onnx.ModelProto, report: QuantizeReport) -> onnx.ModelProto:
    current = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    report.opset = {"from": current, "to": current}
    if current >= MIN_QDQ_OPSET:
        return model
    from onnx import version_converter

    try:
        converted = version_converter.convert_version(model, TARGET_OPSET)
    except Exception as exc:
        raise QuantizeError(f"cannot raise the opset from {current} to {TARGET_OPSET} (needed for FP16 "
                            f"Q/DQ scales): {type(exc).__name__}: {str(exc).strip().splitlines()[0]}") from None
    converted.ir_version = max(converted.ir_version, 10)
    report.opset["to"] = TARGET_OPSET
    return converted


def _quantizable(model: onnx.ModelProto, options: QuantizeOptions) -> list[str]:
    from onnxruntime.quantization.registry import QDQRegistry

    wanted = set(options.op_types) if options.op_types else set(QDQRegistry)
    return [n.op_type for n in model.graph.node if n.op_type in wanted and n.name not in options.exclude_nodes]


def quantize_model(source: Path, output: Path, samples: list[Sample], options: QuantizeOptions,
                   rules: Sequence[Rule], progress: Progress, *, calibration: dict,
                   on_written: Callable[[Path], None] | None = None) -> QuantizeReport:
    """Run the whole pipeline; raises ``QuantizeError`` or ``Cancelled`` and then writes nothing."""
    from onnxruntime.quantization import (
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    report = QuantizeReport(str(source), str(output), calibration)
    progress.stage("Repairing annotations", 1)
    model, diagnostics, _ctx = repair(source, rules)
    report.fixes = [d.to_json() for d in diagnostics if d.fix and d.fix.applied]
    progress.advance()
    present = Counter(n.op_type for n in model.graph.node)
    already = sorted(set(present) & QUANTIZED_OPS)
    if already:
        raise QuantizeError(f"{source}: the model is already quantized (it has {', '.join(already)} nodes); "
                            "nothing was written", exit_code=1)
    if not _quantizable(model, options):
        raise QuantizeError(f"{source}: no operator ONNX Runtime can quantize "
                            f"({', '.join(sorted(present)) or 'no nodes'}); nothing was written", exit_code=1)
    specs = input_specs(model)
    for spec in specs:
        for sample in samples[:1]:
            if spec.name not in sample:
                raise QuantizeError(f"the calibration data has no array for input '{spec.name}'")
    progress.check()

    with tempfile.TemporaryDirectory(prefix="onnx-lint-quantize-") as tmp:
        work = Path(tmp)
        fp32 = work / "fp32.onnx"
        model = _raise_opset(model, report)
        _load_weights(model, source)
        _save(model, fp32)
        progress.stage(f"Calibrating on {len(samples)} samples ({options.calibration_method})", len(samples))
        int8 = work / "int8.onnx"
        method = {"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
                  "percentile": CalibrationMethod.Percentile}[options.calibration_method]
        try:
            with _quiet_onnxruntime():
                quantize_static(
                    str(fp32), str(int8), _calibration_reader(samples, progress),
                    quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    per_channel=options.per_channel, op_types_to_quantize=list(options.op_types) if options.op_types else None,
                    nodes_to_exclude=list(options.exclude_nodes), calibrate_method=method,
                    use_external_data_format=model.ByteSize() > 2**30,
                )
        except Cancelled:
            raise
        except Exception as exc:
            unresolved = [d for d in diagnostics if d.code == "OL003" and not (d.fix and d.fix.applied)]
            if unresolved or "ONNXRuntimeError" in str(exc):
                hint = (f" (onnx-lint: {unresolved[0].location.display()}: {unresolved[0].message})"
                        if unresolved else "")
                raise QuantizeError(f"{source}: the model is not runnable, so it cannot be calibrated: "
                                    f"{str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}"
                                    f"{hint}; nothing was written") from None
            raise QuantizeError(f"INT8 quantization (ONNX Runtime quantize_static) failed: "
                                f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}") from None
        progress.check()

        progress.stage("Converting float computation to FP16", 1)
        quantized = onnx.load(int8)
        converted = convert_to_fp16(quantized, keep_io_types=options.keep_io_types, keep_nodes=options.exclude_nodes)
        progress.advance()
        progress.check()

        progress.stage("Validating (checker, ONNX Runtime, accuracy)", 3)
        result = work / "result.onnx"
        _save(converted, result)
        try:
            onnx.checker.check_model(str(result), full_check=True)
        except Exception as exc:
            raise QuantizeError(f"the quantized model fails onnx.checker: {str(exc).strip().splitlines()[0]}") from None
        progress.advance()
        checked = samples[: options.validation_samples] if options.validation_samples > 0 else samples
        report.calibration["validation_samples"] = len(checked)
        try:
            reference = run_in_process(fp32, checked)  # as safe as calibration, which just ran it here
            [produced] = run_models([(result, "quantized model")], checked)
        except RuntimeFailure as exc:
            raise QuantizeError(f"{exc}; nothing was written") from None
        progress.advance()
        report.outputs = compare(reference, produced.outputs)
        report.warnings.extend(produced.notes)
        counts = Counter(n.op_type for n in converted.graph.node)
        report.nodes = {"total": sum(counts.values()), "QuantizeLinear": counts.get("QuantizeLinear", 0),
                        "DequantizeLinear": counts.get("DequantizeLinear", 0)}
        report.validation = {"checker": "passed", "runtime": "loads and runs",
                             "optimization_level": produced.level,
                             "fp16_initializers": sum(1 for i in converted.graph.initializer
                                                      if i.data_type == onnx.TensorProto.FLOAT16)}
        progress.advance()
        progress.check()
        _write_output(result, output)
    if on_written:
        on_written(output)
    progress.close()
    return report


def _load_weights(model: onnx.ModelProto, source: Path) -> None:
    """Quantization needs the weights: bring external data in (already validated to stay in the folder)."""
    from onnx.external_data_helper import (
        load_external_data_for_model,
        uses_external_data,
    )

    if any(uses_external_data(t) for t in model.graph.initializer):
        load_external_data_for_model(model, str(source.resolve().parent))


def _save(model: onnx.ModelProto, path: Path) -> None:
    if model.ByteSize() > 2**31 - 1 - 2**20:
        onnx.save_model(model, path, save_as_external_data=True, location=path.name + ".data")
    else:
        onnx.save_model(model, path)


def _write_output(result: Path, output: Path) -> None:
    extra = result.with_name(result.name + ".data")
    if extra.exists():
        raise QuantizeError("the quantized model is larger than 2 GiB; writing external data is not supported yet")
    output.parent.mkdir(parents=True, exist_ok=True)
    staged = StagedWrite(output, result.read_bytes())
    with staged:
        staged.commit()

