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
from onnx_lint.model.load import LoadedModel

_LOAD = r"""
import sys
import onnxruntime as ort
options = ort.SessionOptions()
options.log_severity_level = 3
options.intra_op_num_threads = 1
options.inter_op_num_threads = 1
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
try:
    ort.InferenceSession(request.get("path") or payload, options, providers=["CPUExecutionProvider"])
except Exception as exc:  # the words go to stdout: stderr also holds whatever the runtime's C++ logged
    sys.stdout.write(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
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


# The label of every child that creates an ONNX Runtime session for a model (this load check and the
# runtime probe): within ``warm_children.kept_warm`` a model's probe then runs in the child its load
# check started, which has onnxruntime imported already (~0.3 s of CPU a fresh child pays).
SESSION_LABEL = "runtime-session"

# ONNX Runtime's session creation grows superlinearly with graph size: above this it is not asked.
RUNTIME_CHECK_MAX_NODES = 20_000


def runtime_refusal_to_ask(loaded: LoadedModel) -> str | None:
    """Why ONNX Runtime cannot be asked whether it loads ``loaded`` in a bounded child (``None``: it can):
    not installed, weights in external data (a session reads them all), too many nodes, too large."""
    if not runtime_available():
        return "onnxruntime is not installed"
    if loaded.has_external_data:
        return "the model keeps its weights in external data"
    nodes = sum(len(scope.graph.node) for scope in loaded.scopes)
    if nodes > RUNTIME_CHECK_MAX_NODES:
        return f"the model has {nodes} nodes (more than {RUNTIME_CHECK_MAX_NODES})"
    return too_large(len(loaded.data))


def runtime_load_error(path: Path | bytes, timeout: float = 120.0) -> str | None:
    """``None`` when ONNX Runtime creates a session for the model (a file, or a self-contained model's
    bytes), else why not, in ONNX Runtime's words."""
    request, payload = ({"path": str(path)}, b"") if isinstance(path, Path) else ({}, path)
    done = run_child(_LOAD, request, payload, label=SESSION_LABEL, timeout=timeout)
    if done.timed_out:
        return f"ONNX Runtime did not finish loading the model within {timeout:.0f} s"
    if done.returncode == 0:
        return None
    if done.returncode < 0:
        return f"ONNX Runtime crashed while loading the model ({signal_name(done.returncode)})"
    said = done.stdout.decode("utf-8", "replace").strip() if done.returncode == 3 else ""
    if not said:  # an error before the session was asked for (an import): the last line it wrote
        lines = done.text().strip().splitlines()
        said = lines[-1] if lines else ""
    return said[:500] or f"ONNX Runtime exited with status {done.returncode}"
