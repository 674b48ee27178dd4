"""What the installed ONNX Runtime accepts, read from ONNX Runtime itself and cached per version.

Two facts: the newest IR version and opset per domain it loads (found by
asking it to load tiny models, so they are exactly what its loader enforces),
and its CPU kernel registry (``get_all_opkernel_def``: op, domain, version
range, type constraints). Importing onnxruntime costs ~0.3-1.5 s and a plain
lint must not pay it (tests/test_inference.py), so the facts are gathered once
per ONNX Runtime version in a child process and kept as JSON in the user's
cache folder (``$XDG_CACHE_HOME/onnx-lint``, else ``~/.cache/onnx-lint``);
where that folder cannot be written, in a per-user folder under the temporary directory. Either
folder is used only while it is private to the user (``private_dirs``): facts from a folder someone
else could write are never read, they are gathered again.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from onnx_lint.base.private_dirs import private_folder, read_private_file

FACTS_FORMAT = 1
# Domains ONNX Runtime validates opset imports for, beyond those its kernels live in.
_PROBE_DOMAINS = ("", "ai.onnx.ml", "com.microsoft", "com.microsoft.nchwc", "ai.onnx.preview.training",
                  "com.microsoft.experimental")

_GATHER = r"""
import json, sys
import onnx
from onnx import helper as h, TensorProto as T
import onnxruntime as ort
from onnxruntime.capi import _pybind_state as C

def loads(ir, opsets):
    graph = h.make_graph([h.make_node("Identity", ["X"], ["Y"])], "probe",
                         [h.make_tensor_value_info("X", T.FLOAT, [1])], [h.make_tensor_value_info("Y", T.FLOAT, [1])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid(d, v) for d, v in opsets], ir_version=ir)
    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        return True
    except Exception:
        return False

def highest(accepts, low, high):
    if not accepts(low):
        return None
    while low < high:  # the largest accepted value in [low, high]
        mid = (low + high + 1) // 2
        low, high = (mid, high) if accepts(mid) else (low, mid - 1)
    return low

FORMAT = int(request["format"])
base = ("", 13)
max_ir = highest(lambda ir: loads(ir, [base]), 7, 64)
opsets = {}
for domain in request["domains"]:
    if domain == "":
        found = highest(lambda v: loads(7, [("", v)]), 1, 256)
    else:
        found = highest(lambda v: loads(7, [base, (domain, v)]), 1, 256)
    if found is not None:
        opsets[domain] = found
kernels = [[k.domain, k.op_name, k.version_range[0], k.version_range[1],
            {name: list(types) for name, types in k.type_constraints.items()}]
           for k in C.get_all_opkernel_def() if k.provider == "CPUExecutionProvider"]
sys.stdout.write(json.dumps({"format": FORMAT, "version": ort.__version__, "max_ir_version": max_ir,
                             "max_opsets": opsets, "kernels": kernels}))
"""


@dataclass(frozen=True)
class RuntimeFacts:
    """The installed ONNX Runtime's load limits and CPU kernels."""

    version: str
    max_ir_version: int | None
    max_opsets: dict[str, int]
    # (domain, op) -> [(first version, last version, {constraint: [types]})]
    kernels: dict[tuple[str, str], list[tuple[int, int, dict[str, list[str]]]]]

    @classmethod
    def from_json(cls, data: dict) -> RuntimeFacts:
        kernels: dict[tuple[str, str], list[tuple[int, int, dict[str, list[str]]]]] = {}
        for domain, op, first, last, constraints in data["kernels"]:
            kernels.setdefault((domain, op), []).append((first, last, constraints))
        return cls(data["version"], data["max_ir_version"], dict(data["max_opsets"]), kernels)


def installed_version() -> str | None:
    """ONNX Runtime's version without importing it."""
    try:
        return importlib.metadata.version("onnxruntime")
    except importlib.metadata.PackageNotFoundError:
        return None


def cache_folder() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "onnx-lint"


@functools.lru_cache(maxsize=1)
def runtime_facts() -> RuntimeFacts | None:
    """The facts for the installed ONNX Runtime; ``None`` when it is not installed or cannot say."""
    version = installed_version()
    if version is None:
        return None
    import onnx  # the cache key includes the onnx that built the probe models

    key = f"ort-facts-{version}-onnx-{onnx.__version__}-v{FACTS_FORMAT}.json"
    # The user's cache folder, else a per-user temporary one (a read-only home must not cost every
    # process a new child).
    folders = [cache_folder(), Path(tempfile.gettempdir()) / f"onnx-lint-{getattr(os, 'getuid', lambda: 0)()}"]
    for folder in folders:
        text = read_private_file(folder / key)  # a folder another user could write is never read
        if text is None:
            continue
        try:
            data = json.loads(text)
            if data.get("format") == FACTS_FORMAT:
                return RuntimeFacts.from_json(data)
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
    data = _gather()
    if data is None:
        return None
    for folder in folders:
        if _store(folder / key, data):
            break
    return RuntimeFacts.from_json(data)


def _gather() -> dict | None:
    from onnx_lint.engines.sandbox import run_child  # the one kind of child: dies with us, bounded in time and memory

    try:
        done = run_child(_GATHER, {"domains": list(_PROBE_DOMAINS), "format": FACTS_FORMAT}, timeout=120,
                         label="runtime-facts")
    except OSError:
        return None
    if done.timed_out or done.returncode != 0:
        return None
    try:
        return json.loads(done.stdout)
    except ValueError:
        return None


def _store(path: Path, data: dict) -> bool:
    """Write atomically; ``False`` when the folder cannot be written or is not private (``private_dirs``)."""
    if private_folder(path.parent) is None:
        return False
    try:
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(data, out)
        os.replace(temp, path)
    except OSError:
        Path(temp).unlink(missing_ok=True)
        return False
    return True
