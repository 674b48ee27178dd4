"""Quantize a model file: calibration samples, then the pipeline; what every face runs.

The command line, the Python API and the language server all quantize through
``quantize_file``, so each says the same ``RANDOM_WARNING`` when it calibrates on random inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from onnx_lint.base.progress import Progress
    from onnx_lint.quantization.pipeline import QuantizeOptions, QuantizeReport

RANDOM_WARNING = (
    "WARNING: no --calibration-data given: calibrating on RANDOM inputs. The accuracy figures below only "
    "show that the pipeline works; they say nothing about the accuracy of the quantized model on real data."
)



def quantize_file(source: Path, output: Path, data: Path | Sequence[Mapping[str, Any]] | None,
                  input_shapes: dict[str, tuple[int, ...]], count: int, options: QuantizeOptions,
                  progress: Progress, *, on_random: Callable[[], None] = lambda: None,
                  source_name: str | None = None) -> tuple[QuantizeReport, bool]:
    """Calibration samples, then the pipeline: what ``onnx-lint quantize`` and ``onnx_lint.quantize`` both run.

    ``data`` is a ``.npz``/``.npy`` file, samples already in memory (one mapping of input name to
    array per sample), or ``None`` for random samples; ``on_random`` is called before calibrating
    on random inputs; ``source_name`` is what the written model records as its source when ``source`` is
    a temporary copy. Returns the report and whether the samples were random.
    """
    import numpy as np

    from onnx_lint.model.load import read_model
    from onnx_lint.quantization.calibration import calibration_inputs
    from onnx_lint.quantization.pipeline import quantize_model
    from onnx_lint.rules import ALL_RULES

    if data is None or isinstance(data, Path):
        samples, calibration = calibration_inputs(read_model(source).model, data, input_shapes, count)
    else:
        samples = [{name: np.asarray(array) for name, array in sample.items()} for sample in data]
        calibration = {"source": "samples given in memory", "samples": len(samples), "random": False}
    if calibration["random"]:
        on_random()
    calibration["method"] = options.calibration_method
    report = quantize_model(source, output, samples, options, ALL_RULES, progress, calibration=calibration,
                            source_name=source_name)
    return report, bool(calibration["random"])
