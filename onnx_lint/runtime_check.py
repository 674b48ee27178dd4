"""Does ONNX Runtime load a model? Asked in a child process.

Some models crash the runtime outright (SIGSEGV at session creation); in a child
process a crash becomes a message instead of taking the CLI or the editor down.
"""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import sys
from pathlib import Path

_LOAD = r"""
import sys
import onnxruntime as ort
options = ort.SessionOptions()
options.log_severity_level = 3
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
try:
    ort.InferenceSession(sys.argv[1], options, providers=["CPUExecutionProvider"])
except Exception as exc:
    sys.stderr.write(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    sys.exit(3)
"""


def runtime_available() -> bool:
    return importlib.util.find_spec("onnxruntime") is not None


def runtime_load_error(path: Path, timeout: float = 120.0) -> str | None:
    """``None`` when ONNX Runtime creates a session for the model, else why not."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _LOAD, str(path)],
            capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return f"ONNX Runtime did not finish loading the model within {timeout:.0f} s"
    if done.returncode == 0:
        return None
    if done.returncode < 0:
        try:
            name = signal.Signals(-done.returncode).name
        except ValueError:
            name = f"signal {-done.returncode}"
        return f"ONNX Runtime crashed while loading the model ({name})"
    return done.stderr.strip()[-500:] or f"ONNX Runtime exited with status {done.returncode}"
