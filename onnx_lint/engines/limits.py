"""A memory ceiling around the engines: a hostile model must not take the machine's memory.

onnx's data propagation allocates a dim per element when it meets a 1-D tensor
with a large static length (a ``float[1000000000]`` input cast to INT64 asks for
about 140 GB). No check of the model can foresee every such path, so the engines
run under an address-space ceiling: a runaway allocation fails with
``MemoryError`` instead of waking the kernel's OOM killer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

# Room the engines get above what the process already maps, plus a multiple of the graph's size:
# inference of a 100k-node graph needs about 0.2 GiB.
BASE_HEADROOM_BYTES = 2**30
PER_MODEL_BYTE = 4


def engine_headroom(model_bytes: int) -> int:
    return BASE_HEADROOM_BYTES + PER_MODEL_BYTE * model_bytes


def _mapped_bytes() -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


@contextlib.contextmanager
def memory_ceiling(headroom: int) -> Iterator[None]:
    """Cap the address space at its current size plus ``headroom`` while the block runs (Linux).

    Elsewhere, or when a tighter limit is already set, the block runs as it is.
    """
    try:
        import resource
    except ImportError:  # not a Unix
        yield
        return
    mapped = _mapped_bytes()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if mapped is None:
        yield
        return
    ceiling = mapped + headroom
    if hard != resource.RLIM_INFINITY:
        ceiling = min(ceiling, hard)
    if soft != resource.RLIM_INFINITY and soft <= ceiling:
        yield
        return
    resource.setrlimit(resource.RLIMIT_AS, (ceiling, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
