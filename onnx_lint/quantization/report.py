"""What quantize did and how close the result is: the report, as data for ``--report`` and as text.

The pipeline fills a ``QuantizeReport``; the CLI, the language server and the API
show it with the formatting here or as its JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from onnx_lint.formats.escape import safe_text  # output and node names come from the model
from onnx_lint.model.provenance import KEY, QuantizeRecord
from onnx_lint.quantization.options import EXIT_FP16_ONLY
from onnx_lint.quantization.report_parts import (
    FallbackSearch,
    Fp32Placement,
    NodeCounts,
    OpsetChange,
    Validation,
)
from onnx_lint.quantization.sensitivity import Sensitivity
from onnx_lint.quantization.validation import OutputAgreement


@dataclass
class QuantizeReport:
    """What was done and how close the result is to the FP32 model."""

    model: str
    output: str
    calibration: dict
    fixes: list[dict] = field(default_factory=list)
    opset: OpsetChange | None = None
    nodes: NodeCounts | None = None
    validation: Validation | None = None
    outputs: list[OutputAgreement] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    fp16_only: bool = False
    kept_in_float: list[dict] = field(default_factory=list)  # why nodes stayed out of INT8
    fallback: FallbackSearch | None = None
    fp32_scales: dict | None = None  # INT8 islands whose Q/DQ keep float32 scales for ORT's fused kernels
    written: bool = True
    coverage: dict | None = None  # the INT8 share of the compute nodes' multiply-accumulates (coverage.py)
    provenance: QuantizeRecord | None = None  # what the written model records about itself (model/provenance.py)
    target: str = "onnxruntime"  # the runtime quantized for (options.TARGETS)
    kept_in_fp32: Fp32Placement | None = None  # nodes whose measured outputs exceed what FP16 holds (activations.py)
    sensitivity: Sensitivity | None = None  # each INT8 node's error at the outputs when alone INT8
    # the accuracy target (--min-cosine), also when the first pass met it and no fallback search ran
    min_cosine: float | None = None

    @property
    def exit_code(self) -> int:
        if not self.written:
            return 1
        return EXIT_FP16_ONLY if self.fp16_only else 0

    def to_json(self) -> dict:
        return {
            "model": self.model, "output": self.output, "written": self.written, "fp16_only": self.fp16_only,
            "target": self.target, "min_cosine": self.min_cosine,
            "calibration": self.calibration, "fixes": self.fixes, "opset": _json(self.opset, {}),
            "nodes": _json(self.nodes, {}), "validation": _json(self.validation, {}),
            "kept_in_float": self.kept_in_float, "fp32_scales": self.fp32_scales,
            "fallback": _json(self.fallback), "coverage": self.coverage, "kept_in_fp32": _json(self.kept_in_fp32),
            "sensitivity": _json(self.sensitivity),
            "provenance": self.provenance.to_json() if self.provenance else None,
            "target_runtime": runtime_note(self.provenance),
            "outputs": [o.to_json() for o in self.outputs],
            "warnings": list(self.warnings),
        }

def _json(part: Any, missing: Any = None) -> Any:  # noqa: ANN401 - a report part, or what stands for none
    return part.to_json() if part is not None else missing


COLUMNS = ("output", "shape", "FP32 max |x|", "cosine similarity", "relative error", "max abs error")


def format_table(report: QuantizeReport) -> str:
    """A fixed-width table: one row per output, its FP32 scale, cosine, relative and max abs error, and for
    outputs shaped like class scores the top-1 (top-5) agreement with FP32."""
    classes = any(o.top1 is not None for o in report.outputs)
    columns: tuple[str, ...] = COLUMNS + (("top-1 (top-5) agreement",) if classes else ())
    rows: list[tuple[str, ...]] = [columns]
    for o in report.outputs:
        row: tuple[str, ...] = (safe_text(o.name), "x".join(map(str, o.shape)) or "scalar", f"{o.fp32_max_abs:.4g}",
                                f"{o.cosine:.6f}", f"{o.relative_error:.3g}", f"{o.max_abs_error:.6g}")
        if classes:
            agreement = "—" if o.top1 is None else f"{o.top1:.1%}" + ("" if o.top5 is None else f" ({o.top5:.1%})")
            row += (agreement,)
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(columns))]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w)
                               for i, (cell, w) in enumerate(zip(row, widths))).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_fallback(report: QuantizeReport) -> list[str]:
    """The accuracy target's search: each build tried (how many nodes in FP16, its cosine and INT8 share), then
    the frontier it drew, from the most INT8 to the least."""
    fb = report.fallback
    if fb is None or fb.target is None:
        return []
    if fb.ceiling_below_target:
        return [f"  accuracy target: cosine >= {fb.target} NOT met: {fb.stopped}"]
    verdict = "met" if fb.met else "NOT met" + (f" ({fb.stopped})" if fb.stopped else "")
    lines = [f"  accuracy target: cosine >= {fb.target} {verdict}; first pass {fb.start_cosine or 0:.6f}, "
             f"{len(fb.order or [])} INT8 nodes ranked by the error they cause per multiply-accumulate"]
    for k, step in enumerate(fb.steps, 1):
        moved = step.moved_to_fp16
        names = safe_text(", ".join(moved[:4])) + (f", ... ({len(moved)} nodes)" if len(moved) > 4 else "")
        ranges = f", {step.calibration} ranges" if step.calibration else ""
        lines.append(f"    build {k}: in FP16 {names}: cosine {step.cosine_before:.6f} -> {step.cosine_after:.6f} "
                     f"({step.int8_nodes_left} INT8 nodes left, INT8 coverage {step.int8_mac_share:.1%}{ranges})")
    if fb.int8_mac_share_kept is not None:
        lines.append(f"    kept {fb.int8_mac_share_kept:.1%} of the multiply-accumulates in INT8 "
                     f"(first pass {fb.start_int8_mac_share or 0:.1%})")
    if len(fb.frontier) > 1:
        lines.append("  accuracy/coverage frontier (INT8 share of MACs: worst-output cosine):")
        lines += [f"    {p.int8_mac_share:6.1%}: {p.cosine:.6f}  {p.build}" + ("  (meets the target)" if p.met else "")
                  for p in fb.frontier]
    return lines


SENSITIVITY_ROWS = 8  # the table's length in the text report; the JSON has every node


def format_sensitivity(report: QuantizeReport) -> list[str]:
    """The INT8 nodes that cost the most accuracy: each one's worst-output cosine when it alone is INT8, its
    share of the summed error, and its share of the INT8 multiply-accumulates."""
    found = report.sensitivity.to_json() if report.sensitivity is not None else None
    if not found or not found.get("nodes"):
        return []
    nodes = found["nodes"]
    macs = sum(n["macs"] for n in nodes) or 1
    rows = [("node", "op", "cosine alone", "share of error", "share of MACs", "written as")]
    rows += [(safe_text(n["node"]), n["op_type"], f"{n['cosine_alone']:.6f}", f"{n['share']:.1%}",
              f"{n['macs'] / macs:.1%}", "INT8" if n.get("int8", True) else "FP16 (target)")
             for n in nodes[:SENSITIVITY_ROWS]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    more = f", the first {SENSITIVITY_ROWS} of {len(nodes)}" if len(nodes) > SENSITIVITY_ROWS else ""
    lines = [f"  sensitivity: the INT8 nodes that cost the most accuracy (each alone in INT8, on {found['samples']} "
             f"sample(s){more}):"]
    for row in rows:
        lines.append("    " + "  ".join(c.ljust(w) if i < 2 or i == 5 else c.rjust(w)
                                        for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    if found.get("not_measured"):
        why = f" ({found['stopped']})" if found.get("stopped") else ""
        lines.append(f"    not measured: {len(found['not_measured'])} INT8 node(s){why}")
    return lines


def format_fp32(report: QuantizeReport) -> list[str]:
    kept = report.kept_in_fp32
    if kept is None:
        return []
    lines = []
    if kept.nodes:
        shown = ", ".join(f"{safe_text(n.node)} ({n.op_type}, {n.max_abs:.3g})" for n in kept.nodes[:3])
        more = f" and {len(kept.nodes) - 3} more" if len(kept.nodes) > 3 else ""
        lines.append(f"  kept in FP32: {len(kept.nodes)} node(s) whose outputs exceed {kept.threshold:g} on the "
                     f"validation samples (largest: {shown}{more}); FP16 overflows on sums and products of values "
                     "this large")
    if kept.constants:
        shown = ", ".join(f"{safe_text(n.node)} ({n.op_type}, reads '{safe_text(n.constant or '')}' up to "
                          f"{n.max_abs:.3g})" for n in kept.constants[:3])
        more = f" and {len(kept.constants) - 3} more" if len(kept.constants) > 3 else ""
        lines.append(f"  kept in FP32: {len(kept.constants)} node(s) reading a constant beyond FP16's 65504 "
                     f"(OL201: FP16 would clamp it): {shown}{more}")
    return lines


def _method(calibration: dict) -> str:
    """``minmax``, or for ``auto`` which ranges won and by how much: ``auto: kept entropy, worst cosine ...``."""
    if not calibration.get("chosen"):
        return str(calibration.get("method"))
    scores = " vs ".join(f"{m} {c:.6f}" for m, c in calibration.get("candidates", {}).items())
    return f"auto: kept {calibration['chosen']}; first pass worst cosine {scores}"


def format_coverage(report: QuantizeReport) -> list[str]:
    """The INT8 share of the multiply-accumulates, per op type, and the largest compute nodes left in FP16."""
    cov = report.coverage
    if not cov or not cov.get("macs"):
        return []
    per_type = ", ".join(f"{op} {c['share']:.1%} of {_count(c['macs'])}" for op, c in sorted(cov["by_op_type"].items()))
    lines = [f"  INT8 coverage: {cov['int8_mac_share']:.1%} of {_count(cov['macs'])} multiply-accumulates at the "
             f"calibration shapes ({per_type})"]
    left = cov["fp16_compute_nodes"]
    if left:
        shown = "; ".join(f"{n['node']} ({n['op_type']}, {n['macs'] / cov['macs']:.1%}): {_short(n['reason'])}"
                          for n in left[:3])
        more = f"; and {len(left) - 3} more" if len(left) > 3 else ""
        lines.append(f"  left in FP16: {len(left)} compute node(s), largest first: {shown}{more}")
    if cov.get("unknown_shape_nodes"):
        lines.append(f"  not counted (shape unknown at the calibration shapes): {len(cov['unknown_shape_nodes'])} "
                     "compute node(s)")
    return lines


def _count(macs: int) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if macs >= size:
            return f"{macs / size:.3g}{unit}"
    return str(macs)


def _short(reason: str) -> str:
    return reason.split(":")[0]


def format_target_runtime(report: QuantizeReport) -> list[str]:
    """Where the written model runs, said once here, where the user decides: `onnx-lint check` of the model
    stays silent about the Q/DQ it carries (OL202, OL205) as long as they are as written."""
    record = report.provenance
    if record is None or record.calibration is None or record.qdq_nodes == 0:
        return []
    note = runtime_note(record)
    return [f"  recorded in the model's metadata ({KEY}): {record.describe()}"] + ([f"  target runtime: {note}"]
                                                                                   if note else [])


def runtime_note(record: QuantizeRecord | None) -> str | None:
    """Where the Q/DQ as written run: the TensorRT caveat of asymmetric activations (what OL205 says of other Q/DQ
    models), the TensorRT form checked, or None."""
    if record is None or record.calibration is None or record.qdq_nodes == 0:
        return None
    if record.target == "tensorrt":
        return ("TensorRT (explicit quantization: every int8 zero-point is 0, checked by OL205 before writing; "
                "biases in float) and ONNX Runtime")
    if record.activations.get("symmetric"):
        return None
    return ("ONNX Runtime; not TensorRT, whose explicit quantization takes only int8 zero-points equal to 0: "
            "the activations here are asymmetric (nonzero zero-points)")


def format_summary(report: QuantizeReport) -> str:
    cal = report.calibration
    opset = report.opset
    batch = f", batch {cal['batch']} per sample" if cal.get("batch") else ""
    parts = [
        f"Wrote {report.output}" + (" (FP16 only: nothing could be quantized to INT8)" if report.fp16_only else "")
        if report.written else f"Not written: {report.output}",
        f"  fixes applied in memory: {len(report.fixes)}"
        + (f" ({', '.join(sorted({f['code'] for f in report.fixes}))})" if report.fixes else ""),
    ]
    if opset is not None and opset.before != opset.after:
        parts.append(f"  opset: {opset.before} -> {opset.after}")
    nodes, validation = report.nodes, report.validation
    if nodes is not None and validation is not None:
        parts.append(f"  nodes: {nodes.total} ({nodes.quantize_linear} QuantizeLinear, {nodes.dequantize_linear} "
                     f"DequantizeLinear, {nodes.int8} computing in INT8), {validation.fp16_initializers} FP16 "
                     "initializers")
    parts.append(f"  calibration: {cal.get('samples')} samples{batch} from {cal.get('source')} ({_method(cal)}); "
                 f"compared with FP32 on {cal.get('validation_samples')} of them")
    if validation is not None:
        parts.append(f"  validation: onnx.checker {validation.checker}; ONNX Runtime {validation.runtime} at "
                     f"{validation.optimization_level}")
    if report.fp32_scales:
        ops = ", ".join(f"{count} {op}" for op, count in sorted(report.fp32_scales["op_types"].items()))
        parts.append(f"  FP32 scales around {ops} node(s): ONNX Runtime fuses them into QLinear kernels that "
                     "take only float32 scales")
    for kept in report.kept_in_float:
        if kept["nodes"] and not kept["reason"].startswith("accuracy"):
            parts.append(f"  kept in FP16: {len(kept['nodes'])} {kept.get('op_type', '')} node(s): {kept['reason']}")
    parts += format_fp32(report)
    parts += format_coverage(report)
    parts += format_sensitivity(report)
    parts += format_fallback(report)
    parts += format_target_runtime(report)
    parts += ["", format_table(report)]
    return "\n".join(parts)
