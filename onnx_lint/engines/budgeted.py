"""Run one function of bytes in a child under a wall-clock budget.

Some engines (ONNX Runtime's symbolic shape inference, through sympy) can run for
minutes on a real model, inside calls that no cooperative check reaches. Such a call
runs in a child instead, killed when the budget runs out or the caller cancels. Where
forking is safe (``forked.fork_is_safe``: the command line's one thread, no ONNX Runtime
loaded) the child is forked, so it starts with this process's imports: a fresh interpreter
spends 0.2-0.8 s importing onnx (ml_dtypes 0.7 alone takes 0.7 s) before the engine runs,
often longer than the engine itself. Elsewhere (the language server's threads) it is a
child of ``onnx_lint.engines.sandbox``, which takes its request on stdin. Both die with
their parent and stop themselves once they have used their CPU seconds.

The function named by ``target`` (``"package.module:function"``) takes ``bytes`` and
returns ``bytes``; it must live in ``onnx_lint`` or be importable by the child (the
working folder and ``PYTHONPATH`` are on its path).
"""

from __future__ import annotations

import importlib
import os
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from onnx_lint.engines.forked import ForkedCall
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
    forked = _run_forked(target, request, budget_s, cancelled)
    if forked is not None:
        return forked
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


def _run_forked(target: str, request: bytes, budget_s: float,
                cancelled: Callable[[], bool] | None) -> ChildOutcome | None:
    """``run_in_child`` by a forked child; ``None`` where forking is unsafe or unavailable."""
    pending = EarlyChild.start(target, request)
    return pending.outcome(budget_s, cancelled) if pending is not None else None


class EarlyChild:
    """A forked ``target(request)`` started before its caller knows whether it needs the answer or how long
    it may wait: ``outcome`` gives the child ``budget_s`` seconds from its start (the answer is taken if it
    is there by then, or if it is there when asked), ``abandon`` stops it unasked."""

    def __init__(self, call: ForkedCall[tuple[bytes | None, str | None]]) -> None:
        self._call, self._started = call, time.monotonic()

    @classmethod
    def start(cls, target: str, request: bytes) -> EarlyChild | None:
        """The child started; ``None`` where forking is unsafe or unavailable (or the target not importable
        here: the sandbox's child imports it on its own path)."""
        module, _, name = target.partition(":")
        try:
            function = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            return None
        call = ForkedCall.start(partial(_answer, function, request), own_group=True)
        return cls(call) if call is not None else None

    def outcome(self, budget_s: float, cancelled: Callable[[], bool] | None = None) -> ChildOutcome | None:
        """The child's answer within ``budget_s`` seconds of its start; ``None`` where the kernel cannot wait
        on it with a deadline (the caller runs the sandbox's child instead)."""
        call = self._call
        left = max(0.0, self._started + budget_s - time.monotonic())
        finished = call.finished_within(left, cancelled) if left > 0 else call.finished_within(0.001)
        if finished is None:
            call.abandon()
            return None
        if not finished:
            call.abandon()
            if cancelled is not None and cancelled():
                return ChildOutcome(None, "cancelled")
            return ChildOutcome(None, f"did not finish within its budget of {budget_s:.3g} s", True)
        done, answer = call.result()
        if not done or answer is None:
            return ChildOutcome(None, "the child process ended without an answer (its CPU limit, or a crash)")
        payload, error = answer
        return ChildOutcome(payload) if error is None else ChildOutcome(None, error)

    def abandon(self) -> None:
        self._call.abandon()


def _answer(function: Callable[[bytes], bytes], request: bytes) -> tuple[bytes | None, str | None]:
    """In the forked child: the answer, or the exception's last line (as the sandbox's child reports it)."""
    try:
        return function(request), None
    except Exception as exc:
        return None, traceback.format_exception_only(exc)[-1].strip()[:300]
