"""Runs that measure a model rather than validate it, in one sandboxed child: activation statistics and
the per-node sensitivity of a masked model.

Both run the FP32 arithmetic of ONNX Runtime on a few validation samples and send back numbers, never
tensors: the child reduces each run to the figures asked for (a maximum and a shape per tensor; a
cosine per output), so a model with hundreds of exposed activations costs no archive of them. The
sensitivity run prints one line per measured node as soon as it has it: when its time budget or the
child's deadline runs out, the nodes measured so far are kept and the rest reported as not measured.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from onnx_lint.engines.sandbox import run_child, signal_name
from onnx_lint.quantization.calibration import Sample
from onnx_lint.quantization.validation import VALIDATION_MEMORY_CAP_BYTES, RuntimeFailure

_RUNNER = r"""
import json, time
import numpy as np
import onnxruntime as ort

def first_line(exc):
    text = " ".join(str(exc).split())
    return text[:1500] if text else type(exc).__name__

with np.load(request["samples"], allow_pickle=False) as archive:
    count = int(archive["__count__"])
    feeds = [{key.split("/", 1)[1]: archive[key] for key in archive.files if key.startswith(f"{k}/")}
             for k in range(count)]
options = ort.SessionOptions()
options.log_severity_level = 3
options.intra_op_num_threads = 1
options.inter_op_num_threads = 1
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
try:
    session = ort.InferenceSession(request["model"], options, providers=["CPUExecutionProvider"])
except Exception as exc:
    print(json.dumps({"index": -1, "error": "load", "message": first_line(exc)}), flush=True)
    raise SystemExit(0)
names = [o.name for o in session.get_outputs()]

def run(feed):
    try:
        return dict(zip(names, session.run(names, feed)))
    except Exception as exc:
        print(json.dumps({"index": -1, "error": "run", "message": first_line(exc)}), flush=True)
        raise SystemExit(0)

if request["mode"] == "stats":
    stats = {}
    for feed in feeds:
        for name, value in run(feed).items():
            value = np.asarray(value)
            if value.dtype.kind != "f":
                continue
            finite = np.isfinite(value)
            peak = float(np.max(np.abs(value[finite]))) if finite.any() else 0.0
            old = stats.get(name, [0.0, 0, list(value.shape)])
            stats[name] = [max(old[0], peak), old[1] + int(value.size - np.count_nonzero(finite)), old[2]]
    print(json.dumps({"index": 0, "stats": stats}), flush=True)
else:
    outputs, nodes, mask_name = request["outputs"], request["nodes"], request["mask"]
    started = time.monotonic()
    deadline = started + request["budget"]

    def masked(mask, count):
        runs = [run({**feed, mask_name: mask}) for feed in feeds[:count]]
        return {o: [np.asarray(r[o], np.float64).ravel() for r in runs] for o in outputs}

    def cosines(got, count):
        found = {}
        for o in outputs:
            a, b = np.concatenate(reference[o][:count]), np.concatenate(got[o])
            if not np.all(np.isfinite(b)):
                found[o] = -1.0
                continue
            norm = np.linalg.norm(a) * np.linalg.norm(b)
            found[o] = float(np.dot(a, b) / norm) if norm > 0 else (1.0 if np.allclose(a, b) else 0.0)
        return found

    reference = masked(np.zeros(len(nodes), np.float32), len(feeds))
    per_run = (time.monotonic() - started) / max(1, len(feeds))
    # every node on as many samples as the budget allows, at least two (the validation's when it allows all)
    count = max(min(len(feeds), 2), min(len(feeds), int(request["budget"] / max(1e-6, per_run * len(nodes)))))
    print(json.dumps({"index": 0, "samples": count,
                      "all": cosines(masked(np.ones(len(nodes), np.float32), count), count)}), flush=True)
    for k in request["order"]:
        if time.monotonic() > deadline:
            break
        mask = np.zeros(len(nodes), np.float32)
        mask[k] = 1.0
        print(json.dumps({"index": 0, "node": k, "cosines": cosines(masked(mask, count), count)}), flush=True)
"""


@dataclass
class MeasureOutcome:
    lines: list[dict]  # the child's answers, in the order it printed them
    stopped: str | None  # why it ended early (a crash, the deadline), None when it finished


def measure(model: Path, samples: list[Sample], request: dict, *, timeout: float, what: str) -> MeasureOutcome:
    """Run the measuring child on ``model`` with ``samples``; ``request`` says what to measure (``mode``).

    ``RuntimeFailure`` when ONNX Runtime cannot load or run the model at all (with its words)."""
    with tempfile.TemporaryDirectory(prefix="onnx-lint-measure-") as tmp:
        feed = Path(tmp, "samples.npz")
        arrays = {f"{k}/{name}": value for k, sample in enumerate(samples) for name, value in sample.items()}
        arrays["__count__"] = np.array(len(samples))
        np.savez(feed, **arrays)  # type: ignore[arg-type]  # numpy's stub reads **arrays as allow_pickle
        done = run_child(_RUNNER, {**request, "model": str(model), "samples": str(feed)}, label="quantize-measure",
                         timeout=timeout, memory=VALIDATION_MEMORY_CAP_BYTES)
    lines = []
    for text in done.stdout.decode("utf-8", "replace").splitlines():
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict) and "index" in value:
            lines.append(value)
    failed = next((line for line in lines if "error" in line), None)
    if failed is not None:
        raise RuntimeFailure(f"ONNX Runtime cannot {failed['error']} the {what}: {failed['message']}")
    stopped = None
    if done.timed_out:
        stopped = f"ONNX Runtime did not finish within {timeout:.0f} s"
    elif done.returncode != 0:
        crash = signal_name(done.returncode) if done.returncode < 0 else f"exit {done.returncode}"
        stopped = f"ONNX Runtime crashed ({crash}) running the {what}"
    return MeasureOutcome(lines, stopped)
