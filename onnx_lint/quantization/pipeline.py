"""The INT8 + FP16 pipeline: a list of stages, each a function of one run state (``run_state.py``).

repair -> raise opset -> calibrate -> place -> build + validate -> sensitivity -> fall back -> describe ->
stamp + write (docs/quantize.md). Each stage names itself in errors, and nothing is written to the output
path unless every stage and every check passed: the last stage writes, and only it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from onnx_lint.base.progress import Progress
from onnx_lint.lint.rule_api import Rule
from onnx_lint.quantization.calibration import Sample

# QuantizeOptions, QuantizeError and QuantizeReport are imported from here by the CLI, the server and the API
from onnx_lint.quantization.options import QuantizeError, QuantizeOptions
from onnx_lint.quantization.output_files import refuse_existing_output, sweep_work_folders, work_folder
from onnx_lint.quantization.report import QuantizeReport
from onnx_lint.quantization.run_state import QuantizeRun
from onnx_lint.quantization.stages.build_validate import build_and_validate
from onnx_lint.quantization.stages.calibrate import calibrate_ranges
from onnx_lint.quantization.stages.fall_back import fall_back
from onnx_lint.quantization.stages.finish import describe, stamp_and_write
from onnx_lint.quantization.stages.opset import raise_opset
from onnx_lint.quantization.stages.place import place
from onnx_lint.quantization.stages.repair import repair_model
from onnx_lint.quantization.stages.sensitivity import measure_nodes
from onnx_lint.quantization.static_quantizer import weight_params_reused

__all__ = ["QuantizeError", "QuantizeOptions", "QuantizeReport", "quantize_model", "refuse_existing_output",
           "sweep_work_folders"]

# The stages that run in the work folder, in order (repair runs before it is made).
STAGES: tuple[Callable[[QuantizeRun], None], ...] = (
    raise_opset, calibrate_ranges, place, build_and_validate, measure_nodes, fall_back, describe, stamp_and_write)


def quantize_model(source: Path, output: Path, samples: list[Sample], options: QuantizeOptions,
                   rules: Sequence[Rule], progress: Progress, *, calibration: dict,
                   on_written: Callable[[Path], None] | None = None, source_name: str | None = None) -> QuantizeReport:
    """Run the whole pipeline; raises ``QuantizeError`` or ``Cancelled`` and then writes nothing.

    A returned report with ``written`` False means the accuracy target was missed
    even after the fallback (nothing written); ``fp16_only`` means no node could
    be quantized to INT8 and an FP16-only model was written. ``source_name`` is the source the written model
    records (model/provenance.py) when ``source`` is a temporary copy; else its file name.
    """
    report = QuantizeReport(str(source), str(output), calibration, target=options.target,
                            min_cosine=options.min_cosine)
    run = QuantizeRun(source, output, samples, options, rules, progress, report, source_name, on_written)
    refuse_existing_output(output, options.force)
    repair_model(run)
    with work_folder() as tmp, weight_params_reused():
        run.work = Path(tmp)
        for stage in STAGES:
            stage(run)
    if report.written and on_written:
        on_written(output)
    progress.close()
    return report
