"""Runs that measure the FP32 model rather than validate a build: activation statistics, and the per-node
sensitivity of a masked copy of it.

Both run in this process, as calibration does: the FP32 model has just run here for calibration, and the
masked copy adds only standard float32 QuantizeLinear/DequantizeLinear/Sub/Mul/Add/Gather nodes to it. (The
builds, FP16 models that can crash ONNX Runtime, are validated in a sandboxed child: ``validation.py``.)
Each run is reduced at once to the figures asked for (a maximum and a shape per tensor; a cosine per
output), so a model with hundreds of exposed activations keeps no copy of them. The sensitivity loop checks
its time budget between runs: the nodes measured by then are kept, the rest reported as not measured.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from onnx_lint.base.errors import one_line
from onnx_lint.quantization.calibration import Sample
from onnx_lint.quantization.validation import RuntimeFailure


def _session(model: Path, what: str):  # noqa: ANN202 - ORT's session
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    try:
        return ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise RuntimeFailure(f"ONNX Runtime cannot load the {what}: {one_line(exc)}") from None


def _runs(session, feeds: list[Sample], what: str) -> Iterator[dict[str, np.ndarray]]:  # noqa: ANN001
    names = [o.name for o in session.get_outputs()]
    for feed in feeds:
        try:
            yield dict(zip(names, session.run(names, feed)))
        except Exception as exc:
            raise RuntimeFailure(f"ONNX Runtime cannot run the {what}: {one_line(exc)}") from None


def activation_stats(model: Path, samples: list[Sample]) -> dict[str, tuple[float, list[int]]]:
    """Per float output of ``model``: the largest finite magnitude over ``samples``, and its first shape."""
    what = "FP32 model with its activations exposed"
    stats: dict[str, tuple[float, list[int]]] = {}
    for outputs in _runs(_session(model, what), samples, what):
        for name, value in outputs.items():
            value = np.asarray(value)
            if value.dtype.kind != "f":
                continue
            finite = value[np.isfinite(value)]
            peak = float(np.max(np.abs(finite))) if finite.size else 0.0
            old = stats.get(name, (0.0, list(value.shape)))
            stats[name] = (max(old[0], peak), old[1])
    return stats


class MaskedRunner:
    """One session of the masked FP32 model (``sensitivity.py``): the worst cosine of its outputs with FP32 for a
    mask, on the first ``used`` samples. The all-zeros mask computes the FP32 model: the reference."""

    def __init__(self, model: Path, samples: list[Sample], mask: str, count: int, outputs: list[str]) -> None:
        self.what = "masked FP32 model"
        self.session = _session(model, self.what)
        self.samples, self.mask, self.count, self.outputs = samples, mask, count, outputs
        started = time.monotonic()
        self.reference = self._run(np.zeros(count, np.float32), len(samples))
        self.per_run = (time.monotonic() - started) / max(1, len(samples))
        self.used = len(samples)

    def _run(self, values: np.ndarray, used: int) -> dict[str, list[np.ndarray]]:
        runs = list(_runs(self.session, [{**feed, self.mask: values} for feed in self.samples[:used]], self.what))
        return {o: [np.asarray(r[o], np.float64).ravel() for r in runs] for o in self.outputs}

    def cosines(self, values: np.ndarray) -> dict[str, float]:
        got = self._run(values, self.used)
        found = {}
        for o in self.outputs:
            a, b = np.concatenate(self.reference[o][:self.used]), np.concatenate(got[o])
            if not np.all(np.isfinite(b)):
                found[o] = -1.0
                continue
            norm = np.linalg.norm(a) * np.linalg.norm(b)
            found[o] = float(np.dot(a, b) / norm) if norm > 0 else (1.0 if np.allclose(a, b) else 0.0)
        return found

    def worst(self, values: np.ndarray) -> float:
        return min((v for v in self.cosines(values).values()), default=1.0)


@dataclass
class MaskedCosines:
    samples: int  # the samples every node was measured on
    all_int8: dict[str, float]  # per output, every mask entry on
    per_node: dict[int, dict[str, float]]  # per mask entry measured, per output, that entry alone on
    stopped: bool  # the budget ran out before every entry was measured
    runner: MaskedRunner  # the session, for the accuracy target's search


def masked_cosines(model: Path, samples: list[Sample], mask: str, count: int, order: list[int], outputs: list[str],
                   budget: float, cap: float) -> MaskedCosines:
    """Per mask entry (in ``order``), the cosine of each output with the all-zeros mask's (FP32) outputs when
    that entry alone is 1; on as many ``samples`` as ``budget`` seconds allow for every entry. Every entry gets
    at least one sample, even past ``budget``, as long as ``cap`` seconds allow: an entry not measured at all
    can only be ranked last."""
    started = time.monotonic()
    runner = MaskedRunner(model, samples, mask, count, outputs)
    each = max(1e-6, runner.per_run * count)  # one sample for every entry
    runner.used = max(1, min(len(samples), int(budget / each)))
    deadline = started + min(cap, max(budget, 1.2 * each * runner.used))
    result = MaskedCosines(runner.used, runner.cosines(np.ones(count, np.float32)), {}, False, runner)
    for k in order:
        if time.monotonic() > deadline:
            result.stopped = True
            break
        values = np.zeros(count, np.float32)
        values[k] = 1.0
        result.per_node[k] = runner.cosines(values)
    return result
