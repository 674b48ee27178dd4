"""Run the FP32 and the quantized model on the same samples, in a child process.

Some FP16 models made by the converters crash ONNX Runtime (SIGSEGV) at its
default optimization level, or are refused there because a fusion produces a
kernel without FP16 scales (``QLinearConcat``), yet load and run at BASIC. The
child tries the default level first and falls back to BASIC (the report says
so), and a crash of the child becomes an error message: it never takes the CLI
or the editor down.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from onnx_lint.errors import OnnxLintError

_RUNNER = r"""
import json, sys
import numpy as np
import onnxruntime as ort
model, samples_path, out_path, level = sys.argv[1:5]
options = ort.SessionOptions()
options.log_severity_level = 3
options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
try:
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
except Exception as exc:
    print(json.dumps({"error": "load", "message": str(exc).strip().splitlines()[0][:800] if str(exc).strip() else type(exc).__name__}))
    sys.exit(3)
names = [o.name for o in session.get_outputs()]
with np.load(samples_path, allow_pickle=False) as archive:
    count = int(archive["__count__"])
    inputs = [i.name for i in session.get_inputs()]
    results = {}
    try:
        for k in range(count):
            feed = {name: archive[f"{k}/{name}"] for name in inputs}
            for name, value in zip(names, session.run(names, feed)):
                results[f"{k}/{name}"] = np.asarray(value)
    except Exception as exc:
        print(json.dumps({"error": "run", "message": str(exc).strip().splitlines()[0][:800] if str(exc).strip() else type(exc).__name__}))
        sys.exit(4)
np.savez(out_path, **results)
print(json.dumps({"outputs": names}))
"""

LEVELS = ("ORT_ENABLE_ALL", "ORT_ENABLE_BASIC")


class RuntimeFailure(OnnxLintError):
    """ONNX Runtime could not load or run a model (or crashed trying)."""


@dataclass
class RunResult:
    outputs: dict[str, list[np.ndarray]]
    level: str
    notes: list[str]


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def run_in_child(model: Path, samples: list[dict[str, np.ndarray]], what: str,
                 timeout: float = 900.0) -> RunResult:
    """Outputs of ``model`` on every sample; ``RuntimeFailure`` with the runtime's words if it fails."""
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="onnx-lint-run-") as tmp:
        feed = Path(tmp, "samples.npz")
        arrays = {f"{k}/{name}": value for k, sample in enumerate(samples) for name, value in sample.items()}
        np.savez(feed, __count__=np.array(len(samples)), **arrays)
        out = Path(tmp, "outputs.npz")
        for level in LEVELS:
            try:
                done = subprocess.run([sys.executable, "-c", _RUNNER, str(model), str(feed), str(out), level],
                                      capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                raise RuntimeFailure(f"ONNX Runtime did not finish running the {what} within {timeout:.0f} s") from None
            if done.returncode < 0:
                notes.append(f"ONNX Runtime crashed ({_signal_name(done.returncode)}) running the {what} "
                             f"at {level}")
                continue
            report = _last_json(done.stdout)
            if done.returncode != 0:
                message = report.get("message") if report else (done.stderr.strip()[-800:] or "unknown error")
                stage = "load" if report.get("error") == "load" else "run"
                failure = f"ONNX Runtime cannot {stage} the {what}: {message}"
                if level == LEVELS[-1]:
                    raise RuntimeFailure(failure + ("" if not notes else f" ({'; '.join(notes)})"))
                notes.append(f"{failure} at {level}")
                continue
            with np.load(out, allow_pickle=False) as archive:
                outputs = {name: [archive[f"{k}/{name}"] for k in range(len(samples))] for name in report["outputs"]}
            if notes:
                notes.append(f"the {what} runs at {level}: use that optimization level with it")
            return RunResult(outputs, level, notes)
    raise RuntimeFailure(f"ONNX Runtime crashes running the {what} at every optimization level "
                         f"({'; '.join(notes)})")


def _last_json(stdout: str) -> dict:
    for line in reversed(stdout.strip().splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    return {}


@dataclass(frozen=True)
class OutputAgreement:
    """How close the quantized model's output is to the FP32 one."""

    name: str
    cosine: float
    max_abs_error: float
    shape: tuple[int, ...]


def compare(reference: dict[str, list[np.ndarray]], candidate: dict[str, list[np.ndarray]]) -> list[OutputAgreement]:
    result = []
    for name, ref_values in reference.items():
        got = candidate.get(name)
        if got is None:
            raise RuntimeFailure(f"the quantized model has no output '{name}'")
        a = np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in ref_values])
        b = np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in got])
        if a.shape != b.shape:
            raise RuntimeFailure(f"output '{name}' has {b.size} values, the FP32 model gives {a.size}")
        norm = np.linalg.norm(a) * np.linalg.norm(b)
        cosine = float(np.dot(a, b) / norm) if norm > 0 else (1.0 if np.allclose(a, b) else 0.0)
        error = float(np.max(np.abs(a - b))) if a.size else 0.0
        result.append(OutputAgreement(name, cosine, error, tuple(np.asarray(ref_values[0]).shape)))
    return result
