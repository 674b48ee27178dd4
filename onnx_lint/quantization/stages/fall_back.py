"""Stage 7, fall back: with ``--min-cosine``, keep in FP16 the fewest multiply-accumulates that meet the target.

The FP16-only model is built first: when even it misses the target, no mix can meet it and the run says so
at once. Otherwise nodes leave INT8 in the sensitivity ranking's order (most error per multiply-accumulate
first), as a prefix of that order. The masked model of the sensitivity stage predicts each prefix for one
session run per sample; the shortest prefix predicted to meet the target (with room for the FP16-only
build's own error) is built and validated, the prediction's last miss too, and a few builds refine it
(without the masked model, the measured errors' shares predict the first prefix and builds grow and bisect).
Every prediction and every build is a point of the accuracy/coverage frontier the report shows.
"""

from __future__ import annotations

import math
import time

from onnx_lint.quantization.build import Build
from onnx_lint.quantization.coverage import int8_coverage, node_macs_by_name
from onnx_lint.quantization.report_parts import FallbackBuild, FallbackSearch, FrontierPoint, RankedNode
from onnx_lint.quantization.run_state import QuantizeRun
from onnx_lint.quantization.sensitivity import unit_of
from onnx_lint.quantization.stages.build_validate import best_calibration, worst
from onnx_lint.quantization.validation import OutputAgreement


def fall_back(run: QuantizeRun) -> None:
    target = run.options.min_cosine
    if target is None or worst(run.outputs) >= target:
        return
    if _ceiling_below_target(run, target):
        return
    _search(run, target)


def _share(run: QuantizeRun, build: Build) -> float:
    return float(int8_coverage(run.model, build.model, run.sample_shapes, [], run.shapes)["int8_mac_share"])


def _ceiling_below_target(run: QuantizeRun, target: float) -> bool:
    """Build the FP16-only model first: when even it misses ``--min-cosine``, no placement of INT8 nodes can
    meet the target, so say so at once (with the ceiling and the outputs responsible) instead of searching."""
    builder, _ = run.built()
    everything = frozenset(n.name for n in run.model.graph.node if n.op_type in run.op_types and n.name)
    run.progress.stage("Measuring the FP16-only ceiling (every node out of INT8)", 1)
    kept_before = list(run.report.kept_in_float)
    _, ceiling_outputs = builder.make(everything | run.first_excluded)
    run.report.kept_in_float = kept_before  # an account of the probe build, not of the model written
    run.progress.advance()
    ceiling = worst(ceiling_outputs)
    search = FallbackSearch(ceiling, frontier=[FrontierPoint(0.0, ceiling, "FP16 only", ceiling >= target)])
    run.report.fallback = search
    if ceiling >= target:
        return False
    short = ", ".join(f"'{o.name}' {o.cosine:.6f}" for o in ceiling_outputs if not (o.finite and o.cosine >= target))
    _, first = run.built()
    search.target, search.start_cosine, search.start_int8_mac_share = target, worst(run.outputs), _share(run, first)
    # the frontier shows why: the first pass and the FP16-only build, both below the target
    search.frontier.insert(0, FrontierPoint(search.start_int8_mac_share, search.start_cosine, "first pass", False))
    search.stopped = (f"the FP16-only model already scores {ceiling:.6f} (outputs below the target: {short}), so no "
                      f"INT8 placement can reach --min-cosine {target}")
    return True


def _search(run: QuantizeRun, target: float) -> None:
    builder, first = run.built()
    options, report, progress = run.options, run.report, run.progress
    deadline = time.monotonic() + options.fallback_seconds
    search = report.fallback
    assert search is not None  # the ceiling came first
    start = worst(run.outputs)
    first_coverage = int8_coverage(run.model, first.model, run.sample_shapes, [], run.shapes)
    start_share = float(first_coverage["int8_mac_share"])
    int8 = set(first.int8_nodes())
    macs = node_macs_by_name(run.model, run.shapes, int8)  # 0 for a pooling: only Conv/MatMul/Gemm count
    search.target, search.start_cosine, search.start_int8_mac_share = target, start, start_share
    search.end_cosine, search.int8_mac_share_kept = start, start_share
    search.frontier.append(FrontierPoint(start_share, start, "first pass", False))
    if run.sensitivity is None or not run.sensitivity.nodes:
        search.order, search.stopped = [], "no ranking: the error each INT8 node causes was not measured"
        return
    ranking = run.sensitivity.ranked()
    order = [n.node for n in ranking if n.error > 0] + [n.node for n in ranking if n.error <= 0]
    order += [n for n in run.sensitivity.not_measured if n not in order]
    lost = _macs_lost(run, order, macs)
    errors = {n.node: n.error for n in ranking}
    search.order = [RankedNode(name, errors.get(name), lost.get(name, 0),
                               errors[name] / max(1, lost.get(name, 0)) if name in errors else None)
                    for name in order]
    tried: dict[int, tuple[Build, list[OutputAgreement], float, str]] = {}

    def moved(count: int) -> list[str]:
        names: list[str] = []
        for name in order[:count]:
            # with input-only Q/DQ a node left in float reads the float tensor (placement.py), so it can leave
            # INT8 alone; with --output-qdq it shares its producer's Q/DQ pair and they leave together
            unit = unit_of(run.model, name) if builder.settings.output_qdq else [name]
            names += [n for n in unit if n not in first.excluded and n not in names]
        return names

    def evaluate(count: int) -> bool:
        # the search's first build tries each calibration (once an outlier's nodes are out of INT8, other
        # ranges may win) and the rest use the winner's
        names = moved(count)
        if not tried and len(run.caches) > 1:
            method, candidate, outputs, _ = best_calibration(builder, run.caches, first.excluded | frozenset(names),
                                                             report)
        else:
            kept_before = list(report.kept_in_float)
            candidate, outputs = builder.make(first.excluded | frozenset(names))
            report.kept_in_float = kept_before
            method = builder.settings.method
        share, cosine = _share(run, candidate), worst(outputs)
        tried[count] = (candidate, outputs, share, method)
        met = cosine >= target
        search.steps.append(FallbackBuild(names, start, cosine, len(candidate.int8_nodes()), share, met,
                                          method if len(run.caches) > 1 else None))
        search.frontier.append(FrontierPoint(share, cosine, f"{len(names)} node(s) in FP16", met))
        progress.note(f"{len(names)} node(s) in FP16: cosine {cosine:.6f}, INT8 coverage {share:.1%}"
                      f"{' (target met)' if met else ''}")
        progress.advance()
        return met

    progress.stage(f"Cosine {start:.6f} < target {target}: keeping the most error per MAC in FP16", 1 + math.ceil(
        math.log2(len(order) + 1)) * 2)
    low, high = 0, None  # the longest prefix known to miss, the shortest known to meet
    count = _predicted(order, errors, start, target)
    ceiling = search.ceiling
    predicted = _masked_prediction(run, int8, macs, first_coverage, moved, len(order), target, ceiling, search)
    hint = 0  # the longest prefix the masked model predicts to miss: a prediction with the first pass's ranges
    if predicted is not None:  # the masked model names the prefix; builds confirm it
        hint, count = predicted
    budget_note = f"time budget of {options.fallback_seconds:.0f} s spent"
    while high is None and low < len(order):
        if time.monotonic() > deadline:
            search.stopped = budget_note
            break
        if evaluate(count):
            high = count
        else:
            low = count
            count = min(len(order), max(count + 1, count + (count + 1) // 2 if predicted else 2 * count))
    if high is not None and low < hint < high and time.monotonic() <= deadline:
        # other ranges can meet the target where the prediction missed: the hint is tried, then bisected below
        if evaluate(hint):
            high = hint
        else:
            low = hint
    while high is not None and high - low > 1 and (predicted is None or len(tried) < PREDICTED_BUILDS):
        if time.monotonic() > deadline:
            search.stopped = budget_note
            break
        middle = (low + high) // 2
        if evaluate(middle):
            high = middle
        else:
            low = middle
    keep: int | None = high
    search.met = high is not None
    if high is None:  # the closest build, when none met the target (nothing is written then)
        keep = max(tried, key=lambda c: worst(tried[c][1]), default=None)
    if keep is not None and (high is not None or worst(tried[keep][1]) > start):
        candidate, outputs, share, method = tried[keep]
        if len(run.caches) > 1:
            report.calibration["chosen"] = method
        run.best, run.outputs = candidate, outputs
        search.end_cosine, search.int8_mac_share_kept = worst(outputs), share
    search.frontier.sort(key=lambda point: -point.int8_mac_share)
    _, kept = run.built()
    report.kept_in_float.append({"reason": f"accuracy: --min-cosine {target}",
                                 "nodes": sorted(set(kept.excluded) - set(first.excluded))})


PREDICTED_BUILDS = 4  # with the masked model's prediction, the builds the search makes before it settles


def _masked_prediction(run: QuantizeRun, int8: set[str], macs: dict[str, int], first_coverage: dict,
                       moved, count: int, target: float, ceiling: float,  # noqa: ANN001 - moved: a closure
                       search: FallbackSearch) -> tuple[int, int] | None:
    """The prefix of the ranking the masked model predicts meets the target with room for FP16's own error
    (the FP16-only build's), found by bisection at one session run per sample each: ``(longest prefix predicted
    to miss, shortest predicted to meet)``; every prediction is a frontier point. None without the masked
    model."""
    sensitivity = run.sensitivity
    if sensitivity is None or sensitivity.runner is None:
        return None
    total = max(1, int(first_coverage["macs"]))
    goal = min(1.0, target + max(0.0, 1.0 - ceiling))
    cache: dict[int, float] = {}

    def cosine(prefix: int) -> float:
        if prefix not in cache:
            names = set(moved(prefix))
            value = sensitivity.predicted(int8 - names)
            cache[prefix] = value if value is not None else -1.0
            share = first_coverage["int8_mac_share"] - sum(macs.get(n, 0) for n in names) / total
            search.frontier.append(FrontierPoint(max(0.0, share), cache[prefix], f"{len(names)} node(s) in FP16, "
                                                 "predicted (INT8 alone, FP32 arithmetic)", cache[prefix] >= target,
                                                 predicted=True))
        return cache[prefix]

    low, high = 0, count
    while high - low > 1:
        middle = (low + high) // 2
        if cosine(middle) >= goal:
            high = middle
        else:
            low = middle
    return low, high


def _predicted(order: list[str], errors: dict[str, float], start: float, target: float) -> int:
    """The shortest prefix of ``order`` whose moved share of the summed error brings the first pass's error
    (1 - ``start``) under the target's (errors alone add up only roughly, so this is where the search begins)."""
    total = sum(errors.values())
    if total <= 0:
        return 1
    needed = 1.0 - (1.0 - target) / max(1e-12, 1.0 - start)  # the share of the error that must go
    removed = 0.0
    for count, name in enumerate(order, 1):
        removed += errors.get(name, 0.0) / total
        if removed >= needed:
            return count
    return len(order)


def _macs_lost(run: QuantizeRun, order: list[str], macs: dict[str, int]) -> dict[str, int]:
    """The multiply-accumulates that leave INT8 when each node goes to FP16 (``macs``: those of the first pass's
    INT8 nodes; with --output-qdq, the INT8 nodes of its unit, which leave together)."""
    builder, _ = run.built()
    return {name: sum(macs.get(n, 0) for n in (unit_of(run.model, name) if builder.settings.output_qdq else [name]))
            for name in order}
