"""The accuracy table, as text for a terminal and as data for ``--report``."""

from __future__ import annotations

from onnx_lint.quantization.pipeline import QuantizeReport


def format_table(report: QuantizeReport) -> str:
    """A fixed-width table: one row per output, cosine similarity and max abs error."""
    rows = [("output", "shape", "cosine similarity", "max abs error")]
    for o in report.outputs:
        rows.append((o.name, "x".join(map(str, o.shape)) or "scalar", f"{o.cosine:.6f}", f"{o.max_abs_error:.6g}"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_summary(report: QuantizeReport) -> str:
    cal = report.calibration
    parts = [
        f"Wrote {report.output}",
        f"  fixes applied in memory: {len(report.fixes)}"
        + (f" ({', '.join(sorted({f['code'] for f in report.fixes}))})" if report.fixes else ""),
        f"  opset: {report.opset.get('from')} -> {report.opset.get('to')}",
        f"  nodes: {report.nodes.get('total')} ({report.nodes.get('QuantizeLinear')} QuantizeLinear, "
        f"{report.nodes.get('DequantizeLinear')} DequantizeLinear), "
        f"{report.validation.get('fp16_initializers')} FP16 initializers",
        f"  calibration: {cal.get('samples')} samples from {cal.get('source')} ({cal.get('method')}); "
        f"compared with FP32 on {cal.get('validation_samples')} of them",
        f"  validation: onnx.checker {report.validation.get('checker')}; ONNX Runtime "
        f"{report.validation.get('runtime')} at {report.validation.get('optimization_level')}",
        "",
        format_table(report),
    ]
    return "\n".join(parts)
