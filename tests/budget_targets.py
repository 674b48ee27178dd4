"""Functions a budgeted child runs in the tests (``onnx_lint.engines.budgeted`` imports them by name)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path


def sleep_forever(request: bytes) -> bytes:
    """Never answers: the child must be stopped from outside."""
    time.sleep(3600)
    return b""


def sleep_with_grandchild(request: bytes) -> bytes:
    """Starts a grandchild (its pid written to the file named by ``request``), then never answers."""
    grandchild = subprocess.Popen(["sleep", "3600"])
    Path(request.decode()).write_text(str(grandchild.pid))
    time.sleep(3600)
    return b""
