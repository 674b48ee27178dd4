"""Run one function in a killable child process under a wall-clock budget.

Some engines (ONNX Runtime's symbolic shape inference, through sympy) can run for
minutes on a real model, inside calls that no cooperative check reaches. Such a call
runs here instead: a fresh interpreter started in a process group of its own, which
dies with its parent (``PR_SET_PDEATHSIG``), stops itself once it has used its CPU
seconds (``RLIMIT_CPU``), and is killed, group and all, when the budget runs out or
the caller cancels. The request (which function, and its bytes) travels through the
child's stdin, never its command line; the answer comes back on its stdout.

The function named by ``target`` (``"package.module:function"``) takes ``bytes`` and
returns ``bytes``; it must live in ``onnx_lint`` or be importable by the child.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

_PARENT_ENV = "ONNX_LINT_BUDGET_PARENT"
_PR_SET_PDEATHSIG = 1
_POLL_S = 0.05
# This copy of onnx_lint first on the child's path (``-c`` would put the working folder first).
_BOOT = (f"import sys; sys.path.insert(0, {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r}); "
         "from onnx_lint.budgeted import _child_main; _child_main()")


@dataclass(frozen=True)
class ChildOutcome:
    """The child's answer, or why there is none (``expired`` when the budget ran out)."""

    payload: bytes | None
    reason: str = ""
    expired: bool = False

    @property
    def ok(self) -> bool:
        return self.payload is not None


def run_in_child(target: str, request: bytes, budget_s: float,
                 cancelled: Callable[[], bool] | None = None) -> ChildOutcome:
    """``target(request)`` in a child that cannot outlive ``budget_s`` seconds or this process."""
    header = json.dumps({"target": target, "cpu_s": max(1, math.ceil(budget_s))}).encode() + b"\n"
    env = dict(os.environ, **{_PARENT_ENV: str(os.getpid())})
    try:
        child = subprocess.Popen([sys.executable, "-c", _BOOT], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env)
    except OSError as exc:
        return ChildOutcome(None, f"could not start a child process ({exc})")
    deadline = time.monotonic() + budget_s
    pending: bytes | None = header + request
    try:
        while True:
            step = min(_POLL_S if cancelled is not None else budget_s, deadline - time.monotonic())
            try:
                out, err = child.communicate(pending, timeout=max(step, 0.001))
                break
            except subprocess.TimeoutExpired:
                pending = None  # communicate keeps writing what it started
                if time.monotonic() >= deadline:
                    _kill_group(child)
                    return ChildOutcome(None, f"did not finish within its budget of {budget_s:.3g} s", True)
                if cancelled is not None and cancelled():
                    _kill_group(child)
                    return ChildOutcome(None, "cancelled")
    except BaseException:
        _kill_group(child)
        raise
    if child.returncode == 0:
        return ChildOutcome(out)
    if child.returncode in (-getattr(signal, "SIGXCPU", 0), -getattr(signal, "SIGKILL", 0)) and child.returncode:
        return ChildOutcome(None, f"did not finish within its budget of {budget_s:.3g} s", True)
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return ChildOutcome(None, lines[-1][:300] if lines else f"the child exited with status {child.returncode}")


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    """Kill the child's whole process group (POSIX) and reap the child."""
    killpg = getattr(os, "killpg", None)
    if killpg is not None:
        try:
            killpg(child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    child.kill()
    child.communicate()


def _die_with_parent() -> None:
    """Ask the kernel to kill this process when its parent dies (Linux); leave if that already happened."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    expected = os.environ.get(_PARENT_ENV)
    if expected is not None and str(os.getppid()) != expected:
        os._exit(3)  # the parent died before the request was made


def _child_main() -> None:
    _die_with_parent()
    stdin = sys.stdin.buffer
    header = json.loads(stdin.readline())
    cpu = int(header["cpu_s"])
    try:
        import resource  # POSIX only

        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU at the soft limit, SIGKILL at the hard
    except (ImportError, ValueError, OSError):
        pass  # the parent's deadline still holds
    module_name, _, function_name = str(header["target"]).partition(":")
    import importlib

    function = getattr(importlib.import_module(module_name), function_name)
    answer = function(stdin.read())
    sys.stdout.buffer.write(answer)
    sys.stdout.buffer.flush()
