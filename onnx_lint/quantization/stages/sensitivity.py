"""Stage 6, sensitivity: each INT8 node's error at the outputs when it alone is INT8 (``sensitivity.py``).

Measured once, on the first build: a node's error alone depends on its own ranges only, which every later
build shares, so the figures hold for the model written whatever the fallback moves. The ranking feeds
``--min-cosine``; the figures go in the report and in the written model's record, for the editor's graph.
"""

from __future__ import annotations

import time

from onnx_lint.quantization.coverage import node_macs_by_name
from onnx_lint.quantization.run_state import QuantizeRun
from onnx_lint.quantization.sensitivity import measure_sensitivity
from onnx_lint.quantization.validation import RuntimeFailure

# Validation samples the figures are measured on, at most: the report's table is informative with a few;
# an accuracy target's choices rest on the ranking, which then gets as many as the time budget allows.
REPORT_SAMPLES = 2
TARGET_SAMPLES = 8
# The figures may cost at most this share of the time the run took so far (at least half a second; measured nodes
# largest first, the rest listed as not measured): without a target they only inform; with one they order the
# search, whose mixes the masked model predicts and builds confirm.
REPORT_TIME_SHARE = 0.1
TARGET_TIME_SHARE = 1.0


def measure_nodes(run: QuantizeRun) -> None:
    _, best = run.built()
    int8 = best.int8_nodes()
    if not int8 or run.options.sensitivity_seconds <= 0 or not run.checked:
        return
    macs = node_macs_by_name(run.model, run.shapes, set(int8))
    run.progress.stage(f"Measuring the error each of {len(int8)} INT8 nodes causes alone", 1)
    try:
        targeted = run.options.min_cosine is not None
        share = TARGET_TIME_SHARE if targeted else REPORT_TIME_SHARE
        budget = min(run.options.sensitivity_seconds, max(0.5, share * (time.monotonic() - run.started)))
        samples = run.checked[:TARGET_SAMPLES if targeted else REPORT_SAMPLES]
        # with a target every node is measured on one sample at least (up to --sensitivity-time): a node not
        # measured can only be ranked last, however much error it causes
        cap = run.options.sensitivity_seconds if targeted else budget
        run.sensitivity = measure_sensitivity(run.model, best.model, int8, samples, run.work, macs, budget, cap)
    except RuntimeFailure as exc:
        run.report.warnings.append(f"the error each INT8 node causes was not measured: {exc}")
    run.progress.advance()
