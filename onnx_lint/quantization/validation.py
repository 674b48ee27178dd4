"""Run the FP32 and the quantized model on the same samples, in a child process.

Some FP16 models made by the converters crash ONNX Runtime (SIGSEGV) at its
default optimization level, or are refused there because a fusion produces a
kernel without FP16 scales (``QLinearConcat``), yet load and run at BASIC. The
child tries the default level first and falls back to BASIC; the pipeline
writes only models that run at the default level, so BASIC serves to diagnose
(which fused kernel was refused, in the runtime's words). A crash of the child
becomes an error message: it never takes the CLI or the editor down. Float
inputs are cast to the type the model declares, so a model with FP16 inputs
(``--no-keep-io-types``) gets the same samples in FP16.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from onnx_lint.base.errors import OnnxLintError, one_line
from onnx_lint.engines.sandbox import run_child, signal_name

# The fixed address-space cap of the validation child: it holds the FP32 and the quantized model and
# their outputs on every sample; a model set larger than a quarter of it is refused before it starts.
VALIDATION_MEMORY_CAP_BYTES = 8 * 2**30

_RUNNER = r"""
import json, sys
import numpy as np
import onnxruntime as ort

def first_line(exc):
    text = " ".join(str(exc).split())
    return text[:1500] if text else type(exc).__name__

FLOATS = {"tensor(float16)": np.float16, "tensor(float)": np.float32, "tensor(double)": np.float64}

samples_path, level = request["samples"], request["level"]
jobs = request["jobs"]
with np.load(samples_path, allow_pickle=False) as archive:
    count = int(archive["__count__"])
    feeds = [{key.split("/", 1)[1]: archive[key] for key in archive.files if key.startswith(f"{k}/")}
             for k in range(count)]
for index, (model, out_path) in enumerate(jobs):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    try:
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        print(json.dumps({"index": index, "error": "load", "message": first_line(exc)}), flush=True)
        continue
    names = [o.name for o in session.get_outputs()]
    # a model whose float inputs were made FP16 (--no-keep-io-types) is fed the same samples cast to FP16
    inputs = {i.name: FLOATS.get(i.type) for i in session.get_inputs()}
    results = {}
    try:
        for k, feed in enumerate(feeds):
            run_feed = {n: feed[n].astype(t) if t is not None and feed[n].dtype.kind == "f" else feed[n]
                        for n, t in inputs.items()}
            for name, value in zip(names, session.run(names, run_feed)):
                results[f"{k}/{name}"] = np.asarray(value)
    except Exception as exc:
        print(json.dumps({"index": index, "error": "run", "message": first_line(exc)}), flush=True)
        continue
    np.savez(out_path, **results)
    print(json.dumps({"index": index, "outputs": names}), flush=True)
"""

LEVELS = ("ORT_ENABLE_ALL", "ORT_ENABLE_BASIC")


class RuntimeFailure(OnnxLintError):
    """ONNX Runtime could not load or run a model (or crashed trying)."""


@dataclass
class RunResult:
    outputs: dict[str, list[np.ndarray]]
    level: str
    notes: list[str]


def run_models(models: list[tuple[Path, str]], samples: list[dict[str, np.ndarray]],
               timeout: float = 900.0) -> list[RunResult]:
    """Outputs of each model on every sample, all in one child process (one ONNX Runtime start).

    A model that crashes the child or is refused at the default optimization level is
    retried alone at BASIC; ``RuntimeFailure`` carries the runtime's words if that fails too.
    The child is sandboxed (``onnx_lint.engines.sandbox``) under ``VALIDATION_MEMORY_CAP_BYTES``.
    """
    total = sum(path.stat().st_size for path, _ in models)
    if total > VALIDATION_MEMORY_CAP_BYTES // 4:
        raise RuntimeFailure(f"the models to compare are {total / 2**20:.0f} MiB together; validation runs under "
                             f"a {VALIDATION_MEMORY_CAP_BYTES // 2**30} GiB memory cap, which holds up to "
                             f"{VALIDATION_MEMORY_CAP_BYTES // 4 // 2**20} MiB of models")
    with tempfile.TemporaryDirectory(prefix="onnx-lint-run-") as tmp:
        feed = Path(tmp, "samples.npz")
        arrays = {f"{k}/{name}": value for k, sample in enumerate(samples) for name, value in sample.items()}
        arrays["__count__"] = np.array(len(samples))
        np.savez(feed, **arrays)  # type: ignore[arg-type]  # numpy's stub reads **arrays as allow_pickle
        results: list[RunResult | None] = [None] * len(models)
        notes: list[list[str]] = [[] for _ in models]
        failures: list[str] = [""] * len(models)
        for level in LEVELS:
            todo = [i for i, r in enumerate(results) if r is None]
            if not todo:
                break
            batches = [todo] if level == LEVELS[0] else [[i] for i in todo]
            for batch in batches:
                outs = {i: Path(tmp, f"out-{i}-{level}.npz") for i in batch}
                request = {"samples": str(feed), "level": level,
                           "jobs": [[str(models[i][0]), str(outs[i])] for i in batch]}
                done = run_child(_RUNNER, request, label="quantize-validation", timeout=timeout,
                                 memory=VALIDATION_MEMORY_CAP_BYTES)
                if done.timed_out:
                    raise RuntimeFailure(f"ONNX Runtime did not finish within {timeout:.0f} s")
                reports = {r["index"]: r for r in _json_lines(done.stdout.decode("utf-8", "replace"))}
                for position, i in enumerate(batch):
                    what = models[i][1]
                    report = reports.get(position)
                    if report is None:
                        crash = signal_name(done.returncode) if done.returncode < 0 else f"exit {done.returncode}"
                        failures[i] = f"ONNX Runtime crashed ({crash}) running the {what}"
                        notes[i].append(f"{failures[i]} at {level}")
                    elif "error" in report:
                        failures[i] = f"ONNX Runtime cannot {report['error']} the {what}: {report['message']}"
                        notes[i].append(f"{failures[i]} at {level}")
                    else:
                        with np.load(outs[i], allow_pickle=False) as archive:
                            outputs = {name: [archive[f"{k}/{name}"] for k in range(len(samples))]
                                       for name in report["outputs"]}
                        if notes[i]:
                            notes[i].append(f"the {what} runs at {level}: use that optimization level with it")
                        results[i] = RunResult(outputs, level, notes[i])
        for i, result in enumerate(results):
            if result is None:
                crashed = all("crashed" in n for n in notes[i])
                if crashed:
                    raise RuntimeFailure(f"ONNX Runtime crashes running the {models[i][1]} at every "
                                         f"optimization level ({'; '.join(notes[i])})")
                raise RuntimeFailure(failures[i])
        return [r for r in results if r is not None]


def run_in_process(model: Path, samples: list[dict[str, np.ndarray]]) -> dict[str, list[np.ndarray]]:
    """The FP32 reference outputs, computed here: calibration already ran this model in-process."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        runs = [session.run(names, sample) for sample in samples]
    except Exception as exc:
        raise RuntimeFailure(f"ONNX Runtime cannot run the repaired FP32 model: {one_line(exc)}") from None
    return {name: [np.asarray(run[i]) for run in runs] for i, name in enumerate(names)}


def _json_lines(stdout: str) -> list[dict]:
    found = []
    for line in stdout.strip().splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and "index" in value:
            found.append(value)
    return found


@dataclass(frozen=True)
class OutputAgreement:
    """How close the quantized model's output is to the FP32 one, and how large the FP32 values are.

    The FP32 scale and the relative error sit beside the cosine because a cosine
    alone can mislead: an output of ~1e-9 everywhere gives 1.000000 or 0 by
    accident of rounding.
    """

    name: str
    cosine: float
    max_abs_error: float
    shape: tuple[int, ...]
    fp32_max_abs: float = 0.0
    relative_error: float = 0.0  # ||fp32 - quantized|| / ||fp32||
    non_finite: int = 0  # values that are inf/NaN in the quantized model where the FP32 model's are finite
    top1: float | None = None  # outputs shaped like class scores: share of rows whose argmax FP32 agrees with
    top5: float | None = None  # ... and whose FP32 argmax is among the quantized model's 5 best (C >= 5)

    @property
    def finite(self) -> bool:
        return self.non_finite == 0

    def to_json(self) -> dict:
        return {"name": self.name, "cosine_similarity": _json_number(self.cosine),
                "max_abs_error": _json_number(self.max_abs_error),
                "relative_error": _json_number(self.relative_error), "fp32_max_abs": self.fp32_max_abs,
                "non_finite": self.non_finite, "shape": list(self.shape), "top1_agreement": self.top1,
                "top5_agreement": self.top5}


def _json_number(value: float) -> float | None:
    """NaN and inf are not JSON: a broken output's figures are null, and ``non_finite`` says why."""
    return value if np.isfinite(value) else None


def compare(reference: dict[str, list[np.ndarray]], candidate: dict[str, list[np.ndarray]],
            class_outputs: Collection[str] = ()) -> list[OutputAgreement]:
    """Per output: cosine, errors, FP32 scale, how many values became inf/NaN (a failed validation), and for
    ``class_outputs`` (``class_score_outputs``) the top-1/top-5 agreement."""
    result = []
    for name, ref_values in reference.items():
        got = candidate.get(name)
        if got is None:
            raise RuntimeFailure(f"the quantized model has no output '{name}'")
        a = np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in ref_values])
        b = np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in got])
        if a.shape != b.shape:
            raise RuntimeFailure(f"output '{name}' has {b.size} values, the FP32 model gives {a.size}")
        non_finite = int(np.count_nonzero(np.isfinite(a) & ~np.isfinite(b)))
        scale = float(np.max(np.abs(a))) if a.size else 0.0
        if non_finite:  # a cosine over inf/NaN is NaN or, worse, looks fine: the output is broken
            cosine, error, relative = float("nan"), float("inf"), float("inf")
        else:
            norm = np.linalg.norm(a) * np.linalg.norm(b)
            cosine = float(np.dot(a, b) / norm) if norm > 0 else (1.0 if np.allclose(a, b) else 0.0)
            error = float(np.max(np.abs(a - b))) if a.size else 0.0
            ref_norm, diff = float(np.linalg.norm(a)), float(np.linalg.norm(a - b))
            relative = diff / ref_norm if ref_norm > 0 else (0.0 if diff == 0 else float("inf"))
        top1, top5 = class_agreement(ref_values, got) if name in class_outputs and not non_finite else (None, None)
        result.append(OutputAgreement(name, cosine, error, tuple(np.asarray(ref_values[0]).shape), scale, relative,
                                      non_finite, top1, top5))
    return result


# Heads whose output reads as class scores, seen through the reshapes that follow them.
_CLASS_HEADS = frozenset({"Gemm", "MatMul", "Softmax", "LogSoftmax", "Sigmoid"})
_PASS_THROUGH = frozenset({"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Cast"})


def class_score_outputs(model: onnx.ModelProto) -> frozenset[str]:
    """Graph outputs that a classifier head computes: a Gemm/MatMul (logits) or a Softmax, LogSoftmax or
    Sigmoid (probabilities, or a softmax spelled out as Exp / sum), possibly reshaped. Their shape is checked
    on the values (``class_agreement``)."""
    producer = {o: n for n in model.graph.node for o in n.output if o}
    found = set()
    for output in model.graph.output:
        node = producer.get(output.name)
        while node is not None and node.op_type in _PASS_THROUGH and node.input:
            node = producer.get(node.input[0])
        if node is not None and (node.op_type in _CLASS_HEADS or _spelled_out_softmax(node, producer)):
            found.add(output.name)
    return frozenset(found)


def _spelled_out_softmax(node: onnx.NodeProto, producer: dict[str, onnx.NodeProto]) -> bool:
    """``Exp(x) / sum(Exp(x))`` as exporters write a softmax (tf2onnx, jax2tf: magika's ``target_label``)."""
    numerator = producer.get(node.input[0]) if node.op_type == "Div" and node.input else None
    return numerator is not None and numerator.op_type == "Exp"


def class_agreement(reference: list[np.ndarray], candidate: list[np.ndarray]) -> tuple[float | None, float | None]:
    """Top-1 and top-5 agreement with FP32 for an output shaped like class scores, else ``(None, None)``.

    Class scores are a float output whose last axis holds C >= 2 classes and whose other axes only
    count rows: ``(C,)``, ``(N, C)`` or ``(N, 1, ..., C)``. For a classifier the cosine of the scores says
    little about what a user sees: whether the predicted class stays the same.
    """
    first = np.asarray(reference[0])
    if first.ndim == 0 or first.shape[-1] < 2 or not np.issubdtype(first.dtype, np.floating):
        return None, None
    if first.ndim > 2 and math.prod(first.shape[1:-1]) != 1:
        return None, None
    classes = first.shape[-1]
    ref = np.concatenate([np.asarray(v, dtype=np.float64).reshape(-1, classes) for v in reference])
    got = np.concatenate([np.asarray(v, dtype=np.float64).reshape(-1, classes) for v in candidate])
    truth = ref.argmax(axis=1)
    top1 = float(np.mean(got.argmax(axis=1) == truth))
    if classes < 5:
        return top1, None
    best5 = np.argpartition(-got, 4, axis=1)[:, :5]
    return top1, float(np.mean((best5 == truth[:, None]).any(axis=1)))
