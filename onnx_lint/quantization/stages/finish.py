"""Stage 8, stamp + write: the report's account of the build kept, the checks the written model must pass
(finite outputs, the accuracy target, TensorRT's form), its provenance record, then the file."""

from __future__ import annotations

from collections import Counter

import onnx

from onnx_lint.base.version import __version__
from onnx_lint.model.graphs import iter_scopes
from onnx_lint.model.provenance import QuantizeRecord, stamp
from onnx_lint.model.tensors import qdq_nodes
from onnx_lint.quantization.build import WEIGHT_SYMMETRIC, Build
from onnx_lint.quantization.coverage import int8_coverage
from onnx_lint.quantization.options import QuantizeError, QuantizeOptions
from onnx_lint.quantization.output_files import write_output
from onnx_lint.quantization.report import QuantizeReport
from onnx_lint.quantization.report_parts import NodeCounts, Validation
from onnx_lint.quantization.run_state import QuantizeRun
from onnx_lint.quantization.stages.build_validate import DEFAULT_LEVEL, worst
from onnx_lint.quantization.validation import OutputAgreement
from onnx_lint.rules.ol201_fp16_overflow import FP16_MAX

FP16_ONLY_NOTICE = ("NOTICE: no operator of this model can be quantized to INT8 (ONNX Runtime inserted no "
                    "QuantizeLinear/DequantizeLinear); the output is an FP16-only model (exit code 3)")


def describe(run: QuantizeRun) -> None:
    """The report's account of the build kept; refuses one whose outputs became inf/NaN."""
    _, best = run.built()
    report, outputs, model = run.report, run.outputs, run.model
    report.outputs = outputs
    report.coverage = int8_coverage(model, best.model, run.sample_shapes, report.kept_in_float, run.shapes)
    broken = [o for o in outputs if not o.finite]
    if broken:
        raise QuantizeError(_non_finite_message(broken, len(run.checked), model))
    quantize_count, dequantize_count = best.qdq
    report.fp16_only = not run.int8 or run.first_qdq == 0  # nothing quantizable, not the fallback's doing
    if report.fp16_only:
        report.warnings.append(FP16_ONLY_NOTICE)
    elif quantize_count + dequantize_count == 0:
        report.warnings.append("the accuracy fallback moved every INT8 node to FP16 to meet --min-cosine: "
                               "the output is an FP16-only model")
    counts = Counter(n.op_type for n in best.model.graph.node)
    int8_nodes = best.int8_nodes()
    report.nodes = NodeCounts(sum(counts.values()), quantize_count, dequantize_count, len(int8_nodes),
                              sorted(best.excluded))
    report.validation = Validation(DEFAULT_LEVEL, sum(1 for i in best.model.graph.initializer
                                                      if i.data_type == onnx.TensorProto.FLOAT16))
    report.warnings.extend(_scale_warnings(outputs))
    if best.islands:
        ops = Counter(n.op_type for n in best.model.graph.node if n.name in set(best.islands))
        report.fp32_scales = {"nodes": sorted(best.islands), "op_types": dict(ops),
                              "reason": "ONNX Runtime fuses the Q/DQ around these into QLinear kernels "
                                        "(QLinearConcat) that take only float32 scales"}
    if run.sensitivity is not None:
        run.sensitivity.written_int8 = frozenset(int8_nodes)
        run.sensitivity.runner = None  # its ONNX Runtime session is not kept with the report
        report.sensitivity = run.sensitivity


def stamp_and_write(run: QuantizeRun) -> None:
    """Write the build kept, stamped with its record, unless the accuracy target was missed."""
    _, best = run.built()
    report, options = run.report, run.options
    if options.min_cosine is not None and worst(run.outputs) < options.min_cosine:
        report.written = False
        fallback = report.fallback
        if fallback is not None and fallback.ceiling_below_target:
            report.warnings.append(f"{fallback.stopped}; nothing was written")
        else:
            report.warnings.append(f"cosine similarity {worst(run.outputs):.6f} is below --min-cosine "
                                   f"{options.min_cosine}{' even after the fallback' if report.fallback else ''}; "
                                   "nothing was written")
        return
    run.progress.check()
    if options.target == "tensorrt":
        _check_tensorrt_form(best.model)
    report.provenance = _record(run.source_name or run.source.name, report, best, options,
                                run.int8 and not report.fp16_only)
    written = onnx.ModelProto()
    written.CopyFrom(best.model)
    stamp(written, report.provenance)
    write_output(best.path, written, run.output, options.force)


def _non_finite_message(broken: list[OutputAgreement], samples: int, model: onnx.ModelProto) -> str:
    """Validation failed: name each output that became inf/NaN, its producer, and the likely cause when FP16
    cannot hold its values."""
    producer = {o: n.name for n in model.graph.node for o in n.output if o and n.name}
    parts = []
    for o in broken:
        node = f" (computed by node '{producer[o.name]}')" if o.name in producer else ""
        hint = (f"; its FP32 values reach {o.fp32_max_abs:.3g}, beyond FP16's largest finite value 65504: keep the "
                "nodes that compute it in FP32 with --exclude-nodes (onnx-lint check reports such constants as "
                "OL201)" if o.fp32_max_abs > FP16_MAX else "")
        parts.append(f"output '{o.name}'{node} has {o.non_finite} inf/NaN value(s) in the quantized model where "
                     f"the FP32 model's are finite{hint}")
    return (f"validation failed on {samples} sample(s): {'; '.join(parts)}; nothing was written")


def _scale_warnings(outputs: list[OutputAgreement]) -> list[str]:
    """A cosine of a near-zero output says nothing; say so where the FP32 values are tiny."""
    return [f"output '{o.name}' is tiny in FP32 (max |value| {o.fp32_max_abs:.3g}): below FP16's normal range, "
            "its cosine similarity and errors are not meaningful"
            for o in outputs if 0 < o.fp32_max_abs < 6.1e-5]


def _check_tensorrt_form(model: onnx.ModelProto) -> None:
    """Prove the TensorRT claim before writing it: OL205's own check of every Q/DQ zero-point finds nothing."""
    from onnx_lint.rules.ol205_qdq_zero_point_type import zero_point_problems

    kinds, _ = zero_point_problems(list(iter_scopes(model)))
    if kinds:
        found = "; ".join(f"{len(names)} node(s) with {problem} ({', '.join(names[:3])})"
                          for problem, names in kinds.items())
        raise QuantizeError(f"the build is not in TensorRT's form (OL205: {found}); nothing was written")


def _record(source: str, report: QuantizeReport, best: Build, options: QuantizeOptions,
            int8: bool) -> QuantizeRecord:
    """What the written model says about itself (model/provenance.py): the settings of the build written."""
    method = report.calibration.get("chosen") or options.calibration_method
    count = sum(1 for _ in qdq_nodes(list(iter_scopes(best.model))))
    return QuantizeRecord(__version__, source, method if int8 else None,
                          {"type": "int8", "symmetric": options.symmetric_activations},
                          {"type": "int8", "symmetric": WEIGHT_SYMMETRIC, "per_channel": options.per_channel},
                          count, options.target, _sensitivity_record(report))


def _sensitivity_record(report: QuantizeReport) -> dict[str, list[float]] | None:
    """Per INT8 node of the written model, its share of the error and its cosine alone, rounded: what the
    editor's graph colours the node by, read from the model itself."""
    found = report.sensitivity.to_json() if report.sensitivity is not None else None
    if not found or not found.get("nodes"):
        return None
    return {n["node"]: [round(n["share"], 4), round(n["cosine_alone"], 6)] for n in found["nodes"] if n["int8"]} or None
