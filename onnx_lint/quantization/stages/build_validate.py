"""Stage 5, build + validate: an INT8 + FP16 build per calibration, each validated on the samples; the build
closest to FP32 is kept.

Every build must load and run at ONNX Runtime's default optimization level: when ORT refuses a fusion there
(a fused kernel that cannot take FP16 scales), that op type first gets FP32 scales, then its nodes stay in
float, and the model is built again.
"""

from __future__ import annotations

import math
import re
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import onnx

from onnx_lint.base.progress import Progress
from onnx_lint.quantization.build import Build, BuildError, BuildSettings, build
from onnx_lint.quantization.calibration import Sample
from onnx_lint.quantization.options import QuantizeError
from onnx_lint.quantization.report import QuantizeReport
from onnx_lint.quantization.run_state import QuantizeRun
from onnx_lint.quantization.validation import (
    OutputAgreement,
    RuntimeFailure,
    class_score_outputs,
    compare,
    run_models,
)

DEFAULT_LEVEL = "ORT_ENABLE_ALL"
LOAD_RETRIES = 3  # rounds of "leave the refused fusion's op type in float"
# ORT's fused kernel -> the op type whose Q/DQ it fuses (others: "QLinear" + op type)
FUSED_KERNELS = {"QGemm": "Gemm", "QAttention": "Attention", "QEmbedLayerNormalization": "EmbedLayerNormalization"}


def build_and_validate(run: QuantizeRun) -> None:
    method, cache = next(iter(run.caches.items()))
    options = run.options
    settings = BuildSettings(method, run.op_types, options.per_channel, options.keep_io_types, run.external, run.int8,
                             output_qdq=options.output_qdq, keep_fp32=run.keep_fp32,
                             symmetric_activations=options.symmetric_activations)
    run.builder = Builder(run.model, run.fp32, cache, run.work, settings, run.checked, run.reference, run.report,
                          run.progress)
    run.progress.stage("Quantizing, converting to FP16, validating", 1)
    chosen, run.best, run.outputs, scores = best_calibration(run.builder, run.caches, run.first_excluded, run.report)
    run.progress.advance()
    if len(run.caches) > 1:
        run.report.calibration.update(chosen=chosen, candidates=scores)
    run.first_qdq = sum(run.best.qdq)


def _fused_op_type(message: str) -> str | None:
    """The op type behind a fused kernel ORT refused: ``operator (QLinearConcat)`` -> ``Concat``."""
    match = re.search(r"operator \((\w+)\)", message)
    if not match:
        return None
    kernel = match.group(1)
    if kernel in FUSED_KERNELS:
        return FUSED_KERNELS[kernel]
    return kernel[len("QLinear"):] if kernel.startswith("QLinear") and len(kernel) > 7 else None


class Builder:
    """Builds and validates candidates: every build must load and run at ORT's default level."""

    def __init__(self, fp32_model: onnx.ModelProto, fp32: Path, cache: Path, work: Path, settings: BuildSettings,
                 checked: list[Sample], reference: dict, report: QuantizeReport, progress: Progress) -> None:
        self.fp32_model, self.fp32, self.cache, self.work = fp32_model, fp32, cache, work
        self.settings, self.checked, self.reference = settings, checked, reference
        self.report, self.progress = report, progress
        self.class_outputs = class_score_outputs(fp32_model)
        self.count = 0

    def use(self, method: str, cache: Path) -> None:
        """Build from these calibrated ranges from now on."""
        self.cache = cache
        self.settings = replace(self.settings, method=method)

    def make_each(self, caches: dict[str, Path],
                  excluded: frozenset[str]) -> dict[str, tuple[Build, list[OutputAgreement], list[dict]]]:
        """``make`` once per calibration; each build is validated in its own child process while the next one is
        built (a child runs one thread: with ``auto`` the two validations and the second build overlap on a
        multi-core machine). A build that does not load at the default level goes through ``make``'s remedies.
        Returns per method the build, its accuracy and the ``kept_in_float`` account to report with it."""
        kept_before = list(self.report.kept_in_float)
        first: dict[str, Build] = {}
        pending: dict[str, Future] = {}
        with ThreadPoolExecutor(max_workers=len(caches)) as pool:
            for method, cache in caches.items():
                self.use(method, cache)
                self.count += 1
                self.progress.check()
                try:
                    first[method] = build(self.fp32, cache, self.work / f"build-{self.count}.onnx", self.settings,
                                          excluded)
                except BuildError as exc:
                    raise QuantizeError(f"{exc}; nothing was written") from None
                pending[method] = pool.submit(run_models, [(first[method].path, "quantized model")], self.checked)
            try:
                runs = [pending[method].result()[0] for method in first]
            except RuntimeFailure as exc:
                raise QuantizeError(f"{exc}; nothing was written") from None
        made = {}
        for (method, candidate), run in zip(first.items(), runs):
            self.report.kept_in_float = list(kept_before)
            if run.level == DEFAULT_LEVEL:
                made[method] = (candidate, compare(self.reference, run.outputs, self.class_outputs),
                                self.report.kept_in_float)
                continue
            self.use(method, caches[method])
            candidate, outputs = self.make(excluded)
            made[method] = (candidate, outputs, self.report.kept_in_float)
        return made

    def make(self, excluded: frozenset[str]) -> tuple[Build, list[OutputAgreement]]:
        """Build with ``excluded`` in float; when ORT refuses a fusion at its default level, leave that
        op type's nodes in float too and build again. Returns the build and its accuracy."""
        for _ in range(LOAD_RETRIES + 1):
            self.count += 1
            self.progress.check()
            try:
                path = self.work / f"build-{self.count}.onnx"
                candidate = build(self.fp32, self.cache, path, self.settings, excluded)
                [run] = run_models([(candidate.path, "quantized model")], self.checked)
            except (BuildError, RuntimeFailure) as exc:
                raise QuantizeError(f"{exc}; nothing was written") from None
            if run.level == DEFAULT_LEVEL:
                return candidate, compare(self.reference, run.outputs, self.class_outputs)
            refused = " ".join(run.notes)
            op_type = _fused_op_type(refused)
            if op_type and op_type not in self.settings.fp32_island_ops:
                # first remedy: FP32 scales around that op type (see fusions.py), INT8 kept
                self.settings = replace(self.settings, fp32_island_ops=self.settings.fp32_island_ops | {op_type})
                continue
            nodes = sorted(n.name for n in self.fp32_model.graph.node
                           if op_type and n.op_type == op_type and n.name and n.name not in excluded)
            if not nodes:
                raise QuantizeError(f"the quantized model does not load with ONNX Runtime's default settings "
                                    f"({'; '.join(run.notes)}); nothing was written")
            self.report.kept_in_float.append({
                "reason": f"ONNX Runtime fuses the Q/DQ around {op_type} into {_kernel(refused)}, "
                          "which refuses this model's scales at its default optimization level",
                "op_type": op_type, "nodes": nodes})
            excluded = excluded | frozenset(nodes)
        raise QuantizeError("the quantized model still does not load with ONNX Runtime's default settings after "
                            f"{LOAD_RETRIES} rounds of leaving refused fusions in float; nothing was written")


def _kernel(message: str) -> str:
    match = re.search(r"operator \((\w+)\)", message)
    return match.group(1) if match else "a fused kernel"


def best_calibration(builder: Builder, caches: dict[str, Path], excluded: frozenset[str],
                      report: QuantizeReport) -> tuple[str, Build, list[OutputAgreement], dict[str, float]]:
    """Build once per calibration (``auto``: MinMax and entropy ranges) and keep the build closest to FP32
    on the validation samples; returns its method, the build, its accuracy and every method's worst cosine.
    The builder keeps the winner's ranges for what follows."""
    scores: dict[str, float] = {}
    best: tuple[str, Build, list[OutputAgreement], list[dict]] | None = None
    for method, (candidate, outputs, kept) in builder.make_each(caches, excluded).items():
        scores[method] = worst(outputs)
        if best is None or scores[method] > worst(best[2]):
            best = (method, candidate, outputs, kept)
    assert best is not None  # caches always holds at least one method
    method, candidate, outputs, report.kept_in_float = best
    builder.use(method, caches[method])
    return method, candidate, outputs, scores


def worst(outputs: list[OutputAgreement]) -> float:
    """The lowest cosine; an output with inf/NaN values counts as the worst possible, -1."""
    return min((o.cosine if o.finite and math.isfinite(o.cosine) else -1.0 for o in outputs), default=1.0)
