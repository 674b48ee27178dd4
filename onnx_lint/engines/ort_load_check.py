"""Does ONNX Runtime load a model? Asked in a sandboxed child process.

Some models crash the runtime outright (SIGSEGV at session creation); in a child
process a crash becomes a message instead of taking the CLI or the editor down. The
child is bounded like every model-running child (``onnx_lint.engines.sandbox``): it dies with
us, on its own CPU deadline, under the fixed memory cap, on one thread.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from onnx_lint.engines.sandbox import run_child, signal_name, too_large

_LOAD = r"""
import sys
import onnxruntime as ort
options = ort.SessionOptions()
options.log_severity_level = 3
options.intra_op_num_threads = 1
options.inter_op_num_threads = 1
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
try:
    ort.InferenceSession(request["path"], options, providers=["CPUExecutionProvider"])
except Exception as exc:
    sys.stderr.write(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    sys.exit(3)
"""


def runtime_available() -> bool:
    return importlib.util.find_spec("onnxruntime") is not None


def runtime_checkable(path: Path) -> bool:
    """Whether the model file fits the child's fixed memory cap (a larger one is not loaded at all)."""
    try:
        return too_large(path.stat().st_size) is None
    except OSError:
        return False


def runtime_load_error(path: Path, timeout: float = 120.0) -> str | None:
    """``None`` when ONNX Runtime creates a session for the model, else why not."""
    done = run_child(_LOAD, {"path": str(path)}, label="runtime-load-check", timeout=timeout)
    if done.timed_out:
        return f"ONNX Runtime did not finish loading the model within {timeout:.0f} s"
    if done.returncode == 0:
        return None
    if done.returncode < 0:
        return f"ONNX Runtime crashed while loading the model ({signal_name(done.returncode)})"
    return done.text().strip()[-500:] or f"ONNX Runtime exited with status {done.returncode}"
