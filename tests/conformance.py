"""ONNX's own operator conformance cases, generated from the installed onnx (no download).

``onnx.backend.test.case.node`` builds ~1,900 single-operator models, each with the outputs ONNX
expects from it. They are a corpus nobody here wrote and every ONNX runtime is judged by; the
judges here are theirs, not onnx-lint's engines: each case's expected outputs (does every declared
output dim match them?) and ONNX Runtime's session creation (does it load the model?).
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx


@dataclass(frozen=True)
class Case:
    """One conformance model on disk, with what its own data and ONNX Runtime say of it."""

    path: Path
    declarations_hold: bool  # every declared output matches the outputs ONNX expects (rank and dims)
    runtime_refusal: str | None  # ONNX Runtime's words when it will not create a session


def write_cases(folder: Path) -> list[Case]:
    """Write every node case of the installed onnx into ``folder``; judge each by its data and by ONNX Runtime."""
    import onnx.backend.test.case.node as node_cases

    folder.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cases' reference computations divide by zero on purpose
        cases = node_cases.collect_testcases(None)
    holds: dict[Path, bool] = {}
    for case in cases:
        path = folder / f"{case.name}.onnx"
        onnx.save(case.model, path)
        expected = case.data_sets[0][1] if case.data_sets else None
        holds[path] = expected is not None and _declarations_hold(case.model, expected)
    refusals = runtime_refusals(sorted(holds))
    return [Case(path, ok, refusals.get(path)) for path, ok in sorted(holds.items())]


def _declarations_hold(model: onnx.ModelProto, expected: list) -> bool:
    if len(expected) != len(model.graph.output):
        return False
    for value, array in zip(model.graph.output, expected):
        if not value.type.HasField("tensor_type") or not value.type.tensor_type.HasField("shape"):
            continue
        dims = value.type.tensor_type.shape.dim
        shape = np.shape(array)
        if len(dims) != len(shape):
            return False
        if any(d.HasField("dim_value") and d.dim_value != s for d, s in zip(dims, shape)):
            return False
    return True


_SESSIONS = r"""
import json, sys
import onnxruntime as ort
options = ort.SessionOptions()
options.log_severity_level = 4
for path in sys.argv[1:]:
    try:
        ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        error = None
    except Exception as exc:
        error = str(exc)
    print(json.dumps([path, error]), flush=True)
"""


def runtime_refusals(paths: list[Path]) -> dict[Path, str]:
    """ONNX Runtime's refusal per model, asked in child processes (a crash costs one model its answer)."""
    refusals: dict[Path, str] = {}
    todo = [str(p) for p in paths]
    while todo:
        done = subprocess.run([sys.executable, "-c", _SESSIONS, *todo], capture_output=True, text=True,
                              timeout=600)
        answered = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
        for path, error in answered:
            if error is not None:
                refusals[Path(path)] = error
        todo = todo[len(answered):]
        if todo:  # the runtime crashed on the next model: that is a refusal too
            refusals[Path(todo[0])] = f"ONNX Runtime crashed (exit status {done.returncode})"
            todo = todo[1:]
    return refusals
