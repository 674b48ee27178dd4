"""The INT8 + FP16 pipeline: repair, raise the opset, calibrate, build, validate, write.

Each step names itself in errors, and nothing is written to the output path
unless every step and every check passed. Calibration runs once; a build is
repeated with more nodes left in float when ONNX Runtime refuses the model at
its default optimization level (a fusion that cannot take FP16 scales) and,
with ``min_cosine``, while the accuracy target is missed (docs/quantize.md, steps 6-7).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import stat
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import onnx

from onnx_lint.base.errors import FixError, one_line
from onnx_lint.base.progress import Cancelled, Progress
from onnx_lint.base.version import __version__
from onnx_lint.fixes.session import FixSession
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.external import read_external_weights
from onnx_lint.model.graphs import iter_scopes
from onnx_lint.model.load import read_model
from onnx_lint.model.provenance import QuantizeRecord, stamp
from onnx_lint.model.tensors import qdq_nodes
from onnx_lint.model.validate import iter_tensors
from onnx_lint.model.write import StagedWrite, orphans
from onnx_lint.quantization.build import (
    WEIGHT_SYMMETRIC,
    Build,
    BuildError,
    BuildSettings,
    build,
    save,
)
from onnx_lint.quantization.calibration import Sample, input_specs
from onnx_lint.quantization.coverage import int8_coverage, node_macs

# QuantizeOptions, QuantizeError and QuantizeReport are imported from here by the CLI, the server and the API
from onnx_lint.quantization.options import QuantizeError, QuantizeOptions, quantized_op_types
from onnx_lint.quantization.placement import HEAD_OPS, inferred_shapes, no_int8_gain, output_layers
from onnx_lint.quantization.ranges import calibrate
from onnx_lint.quantization.report import QuantizeReport
from onnx_lint.quantization.sensitivity import order_by_error_per_mac, rank_nodes, unit_of
from onnx_lint.quantization.validation import (
    OutputAgreement,
    RuntimeFailure,
    class_score_outputs,
    compare,
    run_in_process,
    run_models,
)
from onnx_lint.quantization.weight_cache import weight_params_reused
from onnx_lint.rules.registry import UntypedAfterShapeInference

MIN_QDQ_OPSET = 19  # FP16 scales on QuantizeLinear/DequantizeLinear need opset 19
TARGET_OPSET = 21
DEFAULT_LEVEL = "ORT_ENABLE_ALL"
LOAD_RETRIES = 3  # rounds of "leave the refused fusion's op type in float"
QUANTIZED_OPS = frozenset({
    "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul",
    "ConvInteger", "MatMulInteger", "QLinearAdd", "QLinearMul", "QGemm", "MatMulNBits",
})
# ORT's fused kernel -> the op type whose Q/DQ it fuses (others: "QLinear" + op type)
FUSED_KERNELS = {"QGemm": "Gemm", "QAttention": "Attention", "QEmbedLayerNormalization": "EmbedLayerNormalization"}
FP16_MAX = 65504.0

FP16_ONLY_NOTICE = ("NOTICE: no operator of this model can be quantized to INT8 (ONNX Runtime inserted no "
                    "QuantizeLinear/DequantizeLinear); the output is an FP16-only model (exit code 3)")


def repair(path: Path, rules: Sequence[Rule],
           notes: list[str] | None = None) -> tuple[onnx.ModelProto, list[Diagnostic], LintContext]:
    """Lint and apply every safe fix in memory; the input file is not changed.

    Repair serves quantization, it is not its precondition: when the fixes cannot
    be completed the model is quantized as it is (a note in ``notes`` says so);
    a model that then cannot run fails at calibration with the runtime's words.
    """
    loaded = read_model(path)
    session = FixSession.lint_loaded(loaded, str(path), rules, lambda code: True)
    result, ctx = session.result, session.ctx
    if ctx is None or result.unreadable:
        problem = result.diagnostics[0].message if result.diagnostics else "; ".join(result.internal_errors)
        raise QuantizeError(f"{path}: {problem}")
    try:
        plan = session.plan()
    except FixError as exc:
        if notes is not None:
            reason = str(exc).removesuffix("; nothing was written")
            notes.append(f"the safe fixes could not be applied ({reason}); quantized the model as it is")
        plan = None
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
                            f"Q/DQ scales): {type(exc).__name__}: {one_line(exc)}") from None
    converted.ir_version = max(converted.ir_version, 10)
    report.opset["to"] = TARGET_OPSET
    return converted


def _check_exclusions(model: onnx.ModelProto, options: QuantizeOptions) -> None:
    names = {n.name for n in model.graph.node}
    unknown = [n for n in options.exclude_nodes if n not in names]
    if unknown:
        raise QuantizeError(f"--exclude-nodes names no node of the model: {', '.join(unknown)} "
                            f"(node names are listed by `onnx-lint check --output-format json` or Netron)")


def _fused_op_type(message: str) -> str | None:
    """The op type behind a fused kernel ORT refused: ``operator (QLinearConcat)`` -> ``Concat``."""
    match = re.search(r"operator \((\w+)\)", message)
    if not match:
        return None
    kernel = match.group(1)
    if kernel in FUSED_KERNELS:
        return FUSED_KERNELS[kernel]
    return kernel[len("QLinear"):] if kernel.startswith("QLinear") and len(kernel) > 7 else None


class _Builder:
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


def quantize_model(source: Path, output: Path, samples: list[Sample], options: QuantizeOptions,
                   rules: Sequence[Rule], progress: Progress, *, calibration: dict,
                   on_written: Callable[[Path], None] | None = None, source_name: str | None = None) -> QuantizeReport:
    """Run the whole pipeline; raises ``QuantizeError`` or ``Cancelled`` and then writes nothing.

    A returned report with ``written`` False means the accuracy target was missed
    even after the fallback (nothing written); ``fp16_only`` means no node could
    be quantized to INT8 and an FP16-only model was written. ``source_name`` is the source the written model
    records (model/provenance.py) when ``source`` is a temporary copy; else its file name.
    """
    report = QuantizeReport(str(source), str(output), calibration, target=options.target)
    refuse_existing_output(output, options.force)
    progress.stage("Repairing annotations", 1)
    model, diagnostics, _ctx = repair(source, rules, report.warnings)
    report.fixes = [d.to_json() for d in diagnostics if d.fix_applied]
    progress.advance()
    present = Counter(n.op_type for n in model.graph.node)
    already = sorted(set(present) & QUANTIZED_OPS)
    if already:
        raise QuantizeError(f"{source}: the model is already quantized (it has {', '.join(already)} nodes); "
                            "nothing was written", exit_code=1)
    _check_exclusions(model, options)
    _check_sparse(model, source)
    for spec in input_specs(model):
        if samples and spec.name not in samples[0]:
            raise QuantizeError(f"the calibration data has no array for input '{spec.name}'")
    progress.check()

    with work_folder() as tmp, weight_params_reused():
        work = Path(tmp)
        fp32 = work / "fp32.onnx"
        model = _raise_opset(model, report)
        _load_weights(model, source)
        save(model, fp32)
        external = model.ByteSize() > 2**30
        op_types = quantized_op_types(options)
        excluded = set(options.exclude_nodes)
        int8 = any(n.op_type in op_types and n.name not in excluded for n in model.graph.node)
        caches: dict[str, Path] = {options.calibration_method: work / "unused.json"}
        checked = samples[: options.validation_samples] if options.validation_samples > 0 else samples
        reference = None
        if int8:
            progress.stage(f"Calibrating on {len(samples)} samples ({options.calibration_method})", len(samples))
            try:
                # the calibration run keeps the FP32 outputs of the validation samples: no second FP32 pass
                caches, reference = calibrate(fp32, samples, options.calibration_method, op_types, work, progress,
                                              external, [o.name for o in model.graph.output], len(checked),
                                              inputs_only=not options.output_qdq)
            except Cancelled:
                raise
            except Exception as exc:
                raise _not_runnable(source, exc, diagnostics) from None
            report.calibration["tensors"] = _tensor_count(next(iter(caches.values())))
        progress.check()
        report.calibration["validation_samples"] = len(checked)
        if reference is None:
            try:
                reference = run_in_process(fp32, checked)  # as safe as calibration, which just ran it here
            except RuntimeFailure as exc:
                raise _not_runnable(source, exc, diagnostics) from None
        shapes = inferred_shapes(model, _sample_shapes(samples))  # placement and the coverage report share them
        first_excluded = frozenset(excluded) | _kept_fp16(model, op_types, excluded, samples, shapes, options,
                                                          report)
        method, cache = next(iter(caches.items()))
        settings = BuildSettings(method, op_types, options.per_channel, options.keep_io_types,
                                 external, int8, output_qdq=options.output_qdq,
                                 keep_fp32=frozenset(options.exclude_nodes),
                                 symmetric_activations=options.symmetric_activations)
        builder = _Builder(model, fp32, cache, work, settings, checked, reference, report, progress)
        progress.stage("Quantizing, converting to FP16, validating", 1)
        chosen, best, outputs, scores = _best_calibration(builder, caches, first_excluded, report)
        progress.advance()
        if len(caches) > 1:
            report.calibration.update(chosen=chosen, candidates=scores)
        first_qdq = sum(best.qdq)
        if options.min_cosine is not None and _worst(outputs) < options.min_cosine:
            if not _ceiling_below_target(builder, model, op_types, first_excluded, outputs, options, report,
                                         progress):
                best, outputs = _fallback(builder, caches, best, outputs, options, report, progress, shapes,
                                          _sample_shapes(samples))
        report.outputs = outputs
        report.coverage = int8_coverage(model, best.model, _sample_shapes(samples), report.kept_in_float, shapes)
        broken = [o for o in outputs if not o.finite]
        if broken:
            raise QuantizeError(_non_finite_message(broken, len(checked), model))
        quantize_count, dequantize_count = best.qdq
        report.fp16_only = not int8 or first_qdq == 0  # nothing quantizable, not the fallback's doing
        if report.fp16_only:
            report.warnings.append(FP16_ONLY_NOTICE)
        elif quantize_count + dequantize_count == 0:
            report.warnings.append("the accuracy fallback moved every INT8 node to FP16 to meet --min-cosine: "
                                   "the output is an FP16-only model")
        counts = Counter(n.op_type for n in best.model.graph.node)
        report.nodes = {"total": sum(counts.values()), "QuantizeLinear": quantize_count,
                        "DequantizeLinear": dequantize_count, "int8": len(best.int8_nodes()),
                        "kept_in_float": sorted(best.excluded)}
        report.validation = {"checker": "passed", "runtime": "loads and runs", "optimization_level": DEFAULT_LEVEL,
                             "fp16_initializers": sum(1 for i in best.model.graph.initializer
                                                      if i.data_type == onnx.TensorProto.FLOAT16)}
        report.warnings.extend(_scale_warnings(outputs))
        if best.islands:
            ops = Counter(n.op_type for n in best.model.graph.node if n.name in set(best.islands))
            report.fp32_scales = {"nodes": sorted(best.islands), "op_types": dict(ops),
                                  "reason": "ONNX Runtime fuses the Q/DQ around these into QLinear kernels "
                                            "(QLinearConcat) that take only float32 scales"}
        if options.min_cosine is not None and _worst(outputs) < options.min_cosine:
            report.written = False
            fallback = report.fallback or {}
            if fallback.get("ceiling", 1.0) < options.min_cosine:
                report.warnings.append(f"{fallback['stopped']}; nothing was written")
            else:
                report.warnings.append(f"cosine similarity {_worst(outputs):.6f} is below --min-cosine "
                                       f"{options.min_cosine}{' even after the fallback' if report.fallback else ''}; "
                                       "nothing was written")
            progress.close()
            return report
        progress.check()
        if options.target == "tensorrt":
            _check_tensorrt_form(best.model)
        report.provenance = _record(source_name or source.name, report, best, options, int8 and not report.fp16_only)
        written = onnx.ModelProto()
        written.CopyFrom(best.model)
        stamp(written, report.provenance)
        _write_output(best.path, written, output, options.force)
    if on_written:
        on_written(output)
    progress.close()
    return report


def _kept_fp16(model: onnx.ModelProto, op_types: list[str], excluded: set[str], samples: list[Sample],
               shapes: dict[str, list[int]], options: QuantizeOptions, report: QuantizeReport) -> frozenset[str]:
    """Nodes placement.py keeps FP16: layers INT8 cannot speed up and output layers, each group unless it
    would leave no Conv/MatMul/Gemm in INT8 (a one-layer model keeps its INT8)."""
    kept: set[str] = set()
    groups = []
    if not options.int8_small_layers:
        groups.append(("no INT8 gain: a matrix-vector product, or too few channels for INT8 kernels (ModelOpt's "
                       "and TensorRT's rules; --int8-small-layers quantizes them)",
                       no_int8_gain(model, _sample_shapes(samples), op_types, inferred=shapes)))
    if not options.int8_output_layers:
        groups.append(("output layer: its INT8 rounding would reach the model's output undiluted "
                       "(--int8-output-layers quantizes it)",
                       output_layers(model, op_types)))
    for reason, names in groups:
        names = [n for n in names if n not in excluded and n not in kept]
        left = any(n.op_type in HEAD_OPS and n.name not in excluded | kept | set(names) for n in model.graph.node)
        if not names or not left:
            continue
        kept.update(names)
        report.kept_in_float.append({"reason": reason, "op_type": "/".join(sorted(
            {n.op_type for n in model.graph.node if n.name in names})), "nodes": sorted(names)})
    return frozenset(kept)


def _sample_shapes(samples: list[Sample]) -> dict[str, tuple[int, ...]]:
    return {name: tuple(value.shape) for name, value in samples[0].items()} if samples else {}


def _ceiling_below_target(builder: _Builder, model: onnx.ModelProto, op_types: list[str], excluded: frozenset[str],
                          outputs: list[OutputAgreement], options: QuantizeOptions, report: QuantizeReport,
                          progress: Progress) -> bool:
    """Build the FP16-only model first: when even it misses ``--min-cosine``, no placement of INT8 nodes can
    meet the target, so say so at once (with the ceiling and the outputs responsible) instead of searching."""
    target = options.min_cosine or 0.0
    everything = frozenset(n.name for n in model.graph.node if n.op_type in op_types and n.name) | excluded
    progress.stage("Measuring the FP16-only ceiling (every node out of INT8)", 1)
    kept_before = list(report.kept_in_float)
    _, ceiling_outputs = builder.make(everything)
    report.kept_in_float = kept_before  # an account of the probe build, not of the model written
    progress.advance()
    ceiling = _worst(ceiling_outputs)
    if ceiling >= target:
        report.fallback = {"ceiling": ceiling}
        return False
    short = ", ".join(f"'{o.name}' {o.cosine:.6f}" for o in ceiling_outputs
                      if not (o.finite and o.cosine >= target))
    report.fallback = {"target": target, "start_cosine": _worst(outputs), "ceiling": ceiling, "met": False,
                       "steps": [], "stopped": f"the FP16-only model already scores {ceiling:.6f} (outputs below "
                                               f"the target: {short}), so no INT8 placement can reach --min-cosine "
                                               f"{target}"}
    return True


def _best_calibration(builder: _Builder, caches: dict[str, Path], excluded: frozenset[str],
                      report: QuantizeReport) -> tuple[str, Build, list[OutputAgreement], dict[str, float]]:
    """Build once per calibration (``auto``: MinMax and entropy ranges) and keep the build closest to FP32
    on the validation samples; returns its method, the build, its accuracy and every method's worst cosine.
    The builder keeps the winner's ranges for what follows."""
    scores: dict[str, float] = {}
    best: tuple[str, Build, list[OutputAgreement], list[dict]] | None = None
    for method, (candidate, outputs, kept) in builder.make_each(caches, excluded).items():
        scores[method] = _worst(outputs)
        if best is None or scores[method] > _worst(best[2]):
            best = (method, candidate, outputs, kept)
    assert best is not None  # caches always holds at least one method
    method, candidate, outputs, report.kept_in_float = best
    builder.use(method, caches[method])
    return method, candidate, outputs, scores


def _tensor_count(cache: Path) -> int:
    import json

    try:
        return len(json.loads(cache.read_text()).get("data", {}))
    except (OSError, ValueError, AttributeError):
        return 0


def _worst(outputs: list[OutputAgreement]) -> float:
    """The lowest cosine; an output with inf/NaN values counts as the worst possible, -1."""
    return min((o.cosine if o.finite and math.isfinite(o.cosine) else -1.0 for o in outputs), default=1.0)


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


def _fallback(builder: _Builder, caches: dict[str, Path], first: Build, outputs: list[OutputAgreement],
              options: QuantizeOptions, report: QuantizeReport, progress: Progress,
              shapes: dict[str, list[int]], sample_shapes: dict[str, tuple[int, ...]]
              ) -> tuple[Build, list[OutputAgreement]]:
    """Move INT8 nodes to FP16, a growing group at a time, until the target is met.

    Nodes are ranked once (one pair of runs with every activation exposed) by the
    error each adds over the multiply-accumulates it takes out of INT8, so each step
    buys the most accuracy for the least INT8 lost; groups double (1, 2, 4, ...
    nodes) so that the number of builds grows with the log of the node count; the
    time budget is checked before each build, and each step states the INT8 share
    of the MACs it keeps. With ``auto`` each step builds with both ranges: once an
    outlier's nodes are out of INT8, MinMax may beat the entropy ranges that won
    the first pass.
    """
    target = options.min_cosine or 0.0
    deadline = time.monotonic() + options.fallback_seconds
    progress.stage(f"Cosine {_worst(outputs):.6f} < target {target}: ranking INT8 nodes by the error they add per MAC",
                   1)
    try:
        ranked = rank_nodes(builder.fp32_model, first.model, first.int8_nodes(), builder.checked, builder.work)
        lost = _macs_lost(builder, first, ranked, shapes)
        ranked = order_by_error_per_mac(ranked, lost)
    except RuntimeFailure as exc:
        report.fallback = {**(report.fallback or {}), "target": target, "met": False, "steps": [],
                           "stopped": f"ranking failed: {exc}"}
        return first, outputs
    progress.advance()
    steps: list[dict] = []
    report.fallback = {**(report.fallback or {}), "target": target, "start_cosine": _worst(outputs),
                       "ranked": len(ranked), "steps": steps, "met": False,
                       "order": [{"node": name, "added_error": _json_float(error), "macs_lost": lost.get(name, 0)}
                                 for name, error in ranked]}
    best, best_outputs = first, outputs
    best_share = int8_coverage(builder.fp32_model, first.model, sample_shapes, [], shapes)["int8_mac_share"]
    report.fallback["start_int8_mac_share"] = best_share
    excluded = set(first.excluded)
    position, group = 0, 1
    total_groups = max(1, math.ceil(math.log2(len(ranked) + 1)))
    progress.stage(f"Moving INT8 nodes to FP16 until cosine >= {target}", total_groups)
    while position < len(ranked):
        if time.monotonic() > deadline:
            report.fallback["stopped"] = f"time budget of {options.fallback_seconds:.0f} s spent"
            break
        moved = []
        for name, _ in ranked[position:position + group]:
            # with input-only Q/DQ a node left in float reads the float tensor (placement.py), so it can leave
            # INT8 alone; with --output-qdq it shares its producer's Q/DQ pair and they leave together
            unit = unit_of(builder.fp32_model, name) if builder.settings.output_qdq else [name]
            moved += [n for n in unit if n not in excluded and n not in moved]
        position += group
        group *= 2
        if not moved:
            continue
        excluded.update(moved)
        method, candidate, candidate_outputs, _ = _best_calibration(builder, caches, frozenset(excluded), report)
        before = _worst(best_outputs)
        share = int8_coverage(builder.fp32_model, candidate.model, sample_shapes, [], shapes)["int8_mac_share"]
        steps.append({"moved_to_fp16": moved, "cosine_before": before, "cosine_after": _worst(candidate_outputs),
                      "int8_nodes_left": len(candidate.int8_nodes()), "int8_mac_share": share})
        if len(caches) > 1:
            steps[-1]["calibration"] = method
        progress.note(f"kept {len(moved)} node(s) in FP16 ({', '.join(moved[:3])}{', ...' if len(moved) > 3 else ''})"
                      f": cosine {before:.6f} -> {_worst(candidate_outputs):.6f}, INT8 coverage {share:.1%}")
        progress.advance()
        if _worst(candidate_outputs) >= _worst(best_outputs):
            best, best_outputs = candidate, candidate_outputs
            best_share = share
            if len(caches) > 1:
                report.calibration["chosen"] = method
        if _worst(best_outputs) >= target:
            report.fallback["met"] = True
            break
    report.fallback["end_cosine"] = _worst(best_outputs)
    report.fallback["int8_mac_share_kept"] = best_share
    report.kept_in_float.append({"reason": f"accuracy: --min-cosine {target}",
                                 "nodes": sorted(set(best.excluded) - set(first.excluded))})
    return best, best_outputs


def _json_float(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _macs_lost(builder: _Builder, first: Build, ranked: list[tuple[str, float]],
               shapes: dict[str, list[int]]) -> dict[str, int]:
    """The multiply-accumulates that leave INT8 when each ranked node goes to FP16 (with --output-qdq, the
    INT8 nodes of its unit, which leave together)."""
    nodes = {n.name: n for n in builder.fp32_model.graph.node if n.name}
    weights = {i.name: tuple(i.dims) for i in builder.fp32_model.graph.initializer}
    int8 = set(first.int8_nodes())
    lost = {}
    for name, _ in ranked:
        unit = unit_of(builder.fp32_model, name) if builder.settings.output_qdq else [name]
        lost[name] = sum(node_macs(nodes[n], shapes, weights) or 0 for n in unit
                         if n in int8 and n in nodes and nodes[n].op_type in HEAD_OPS)
    return lost


def _not_runnable(source: Path, exc: Exception, diagnostics: list[Diagnostic]) -> QuantizeError:
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


_WORK_PREFIX = "onnx-lint-quantize-"


def work_folder() -> tempfile.TemporaryDirectory:
    """The run's work folder (copies of the weights, the builds), named with this process's id; first the folders
    that killed runs left behind are removed (``sweep_work_folders``)."""
    sweep_work_folders()
    return tempfile.TemporaryDirectory(prefix=f"{_WORK_PREFIX}{os.getpid()}-")


def sweep_work_folders(root: Path | None = None) -> list[Path]:
    """Remove the work folders of quantize runs whose process no longer runs (killed: SIGKILL, a crashed
    server), if they are this user's folders: they hold copies of a model's weights. Returns what was removed."""
    root = Path(root or tempfile.gettempdir())
    pattern = re.compile(rf"{re.escape(_WORK_PREFIX)}(\d+)-[a-z0-9_]+\Z")
    removed = [Path(path) for path in orphans(root, pattern, stat.S_ISDIR)]
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


# The most bytes one sparse initializer may take once dense: ORT's quantizer makes each one dense, and a
# quantized model is written in one file of at most 2 GiB.
MAX_DENSE_BYTES = 2**31


def _check_sparse(model: onnx.ModelProto, source: Path) -> None:
    """Refuse a sparse initializer whose dense form would not fit (2^40 elements in a few bytes of file)."""
    for scope in iter_scopes(model):
        for sparse in scope.graph.sparse_initializer:
            elements = math.prod(sparse.dims)
            try:
                itemsize = onnx.helper.tensor_dtype_to_np_dtype(sparse.values.data_type).itemsize
            except (KeyError, TypeError, ValueError):  # no numpy type (an unset or a sub-byte one): count bytes
                itemsize = 1
            if elements * itemsize > MAX_DENSE_BYTES:
                raise QuantizeError(
                    f"{source}: sparse initializer '{sparse.values.name}' declares dims {list(sparse.dims)}: "
                    f"{elements * itemsize / 2**30:.0f} GiB once dense, and quantization makes it dense (at most "
                    f"{MAX_DENSE_BYTES / 2**30:.0f} GiB); nothing was written")


def _load_weights(model: onnx.ModelProto, source: Path) -> None:
    """Quantization needs the weights: bring external data in, each file read through one checked descriptor
    (``read_external_weights``: a file swapped for a link after the first check is not followed)."""
    external = [t for _, t in iter_tensors(list(iter_scopes(model)))
                if t.data_location == onnx.TensorProto.EXTERNAL]
    if external:
        read_external_weights(external, source)


def refuse_existing_output(output: Path, force: bool) -> None:
    """An existing file (or link) at ``output`` is someone's data: replaced only when the user said ``force``, and
    never when it is not a regular file or a link (a device, a FIFO, a folder: ``--force`` would replace the node)."""
    try:
        info = os.lstat(output)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise QuantizeError(f"{output}: cannot check the output path: {exc.strerror or exc}; nothing was written") \
            from None
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        raise QuantizeError(f"{output} exists and is not a regular file; quantize writes only regular files; "
                            "nothing was written")
    if not force:
        raise QuantizeError(f"{output} already exists; quantize never replaces a file unless told to "
                            "(--force, or the option force); nothing was written")


def _record(source: str, report: QuantizeReport, best: Build, options: QuantizeOptions,
            int8: bool) -> QuantizeRecord:
    """What the written model says about itself (model/provenance.py): the settings of the build written."""
    method = report.calibration.get("chosen") or options.calibration_method
    count = sum(1 for _ in qdq_nodes(list(iter_scopes(best.model))))
    return QuantizeRecord(__version__, source, method if int8 else None,
                          {"type": "int8", "symmetric": options.symmetric_activations},
                          {"type": "int8", "symmetric": WEIGHT_SYMMETRIC, "per_channel": options.per_channel},
                          count, options.target)


def _check_tensorrt_form(model: onnx.ModelProto) -> None:
    """Prove the TensorRT claim before writing it: OL205's own check of every Q/DQ zero-point finds nothing."""
    from onnx_lint.rules.ol205_qdq_zero_point_type import zero_point_problems

    kinds, _ = zero_point_problems(list(iter_scopes(model)))
    if kinds:
        found = "; ".join(f"{len(names)} node(s) with {problem} ({', '.join(names[:3])})"
                          for problem, names in kinds.items())
        raise QuantizeError(f"the build is not in TensorRT's form (OL205: {found}); nothing was written")


def _write_output(result: Path, model: onnx.ModelProto, output: Path, force: bool) -> None:
    """Stage ``model`` (the build at ``result``, stamped) beside ``output`` and put it in place; without
    ``force`` only where no file is."""
    extra = result.with_name(result.name + ".data")
    if extra.exists():
        raise QuantizeError("the quantized model is larger than 2 GiB; writing external data is not supported yet")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise QuantizeError(f"{output.parent}: cannot create the output folder: {exc.strerror or exc}; nothing was "
                            "written") from None
    staged = StagedWrite(output, model.SerializeToString(), new_file=not force)
    with staged:
        staged.commit()

