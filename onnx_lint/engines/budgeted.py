"""Run one function of bytes in a sandboxed child under a wall-clock budget.

Some engines (ONNX Runtime's symbolic shape inference, through sympy) can run for
minutes on a real model, inside calls that no cooperative check reaches. Such a call
runs in a child of ``onnx_lint.engines.sandbox`` instead — the one kind of child onnx-lint
starts: it dies with its parent, stops itself once it has used its CPU seconds, takes
its request on stdin and is killed, group and all, when the budget runs out or the
caller cancels. This module only names the function to run and reads the answer back.

The function named by ``target`` (``"package.module:function"``) takes ``bytes`` and
returns ``bytes``; it must live in ``onnx_lint`` or be importable by the child (the
working folder and ``PYTHONPATH`` are on its path).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from dataclasses import dataclass

from onnx_lint.engines.sandbox import run_child

# This copy of onnx_lint first on the child's path (the folder above onnx_lint/engines/), then the
# function, then its answer on stdout.
_PROGRAM = f"""
import importlib, sys
sys.path.insert(0, {os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))!r})
module, _, name = request["target"].partition(":")
answer = getattr(importlib.import_module(module), name)(payload)
sys.stdout.buffer.write(answer)
sys.stdout.buffer.flush()
"""
# Signals that mean the child ran out of time: its own CPU limit, or our kill at the deadline.
_OUT_OF_TIME = {-getattr(signal, "SIGXCPU", signal.SIGKILL), -signal.SIGKILL}


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
    try:
        done = run_child(_PROGRAM, {"target": target}, request, timeout=budget_s, label="budgeted-engine",
                         memory=0, cancelled=cancelled)
    except OSError as exc:
        return ChildOutcome(None, f"could not start a child process ({exc})")
    if done.cancelled:
        return ChildOutcome(None, "cancelled")
    if done.timed_out or done.returncode in _OUT_OF_TIME:
        return ChildOutcome(None, f"did not finish within its budget of {budget_s:.3g} s", True)
    if done.returncode == 0:
        return ChildOutcome(done.stdout)
    lines = done.text().strip().splitlines()
    return ChildOutcome(None, lines[-1][:300] if lines else f"the child exited with status {done.returncode}")
