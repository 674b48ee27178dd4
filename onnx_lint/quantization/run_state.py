"""One quantize run's state: what it was asked, and what each stage has found so far.

The pipeline (``pipeline.py``) is a list of stages, each a function of this one object in its own module
(``stages/``): a stage reads what earlier stages set and sets what it owns. What the user sees is the
``report``, which stages fill as they go.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import onnx

from onnx_lint.base.progress import Progress
from onnx_lint.lint.diagnostics import Diagnostic
from onnx_lint.lint.rule_api import Rule
from onnx_lint.quantization.activations import ActivationStats
from onnx_lint.quantization.calibration import Sample
from onnx_lint.quantization.options import QuantizeOptions
from onnx_lint.quantization.report import QuantizeReport
from onnx_lint.quantization.sensitivity import Sensitivity
from onnx_lint.quantization.validation import OutputAgreement

if TYPE_CHECKING:
    from onnx_lint.quantization.build import Build
    from onnx_lint.quantization.stages.build_validate import Builder


@dataclass
class QuantizeRun:
    # what was asked
    source: Path
    output: Path
    samples: list[Sample]
    options: QuantizeOptions
    rules: Sequence[Rule]
    progress: Progress
    report: QuantizeReport
    source_name: str | None = None  # the source the written model records, when ``source`` is a temporary copy
    on_written: Callable[[Path], None] | None = None
    started: float = field(default_factory=time.monotonic)  # when the run began (stages budget their time by it)
    # repair
    model: onnx.ModelProto = field(default_factory=onnx.ModelProto)  # the repaired FP32 model, opset raised
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # opset: the FP32 model on disk, with its weights, in the run's work folder
    work: Path = Path()
    fp32: Path = Path()
    external: bool = False  # above 2 GiB: saved with external data
    # calibrate
    op_types: list[str] = field(default_factory=list)
    int8: bool = False  # some node can be INT8 at all
    caches: dict[str, Path] = field(default_factory=dict)  # per calibration method, its ranges
    checked: list[Sample] = field(default_factory=list)  # the validation samples
    reference: dict[str, list[np.ndarray]] = field(default_factory=dict)  # FP32 outputs on them
    # place
    activations: ActivationStats = field(default_factory=ActivationStats)
    shapes: dict[str, list[int]] = field(default_factory=dict)  # static shapes at the calibration size, then seen
    first_excluded: frozenset[str] = frozenset()  # out of INT8 before any accuracy measurement
    keep_fp32: frozenset[str] = frozenset()  # out of FP16 too: --exclude-nodes, and ranges FP16 cannot hold
    # build + validate, sensitivity, fall back
    builder: Builder | None = None
    best: Build | None = None
    outputs: list[OutputAgreement] = field(default_factory=list)
    first_qdq: int = 0
    sensitivity: Sensitivity | None = None

    @property
    def sample_shapes(self) -> dict[str, tuple[int, ...]]:
        """The calibration shapes: those of the first sample."""
        return {name: tuple(value.shape) for name, value in self.samples[0].items()} if self.samples else {}

    def built(self) -> tuple[Builder, Build]:
        """The builder and the build kept so far (set by the build stage)."""
        assert self.builder is not None and self.best is not None, "the build stage has not run"
        return self.builder, self.best
