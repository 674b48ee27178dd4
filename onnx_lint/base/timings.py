"""Where a lint's time goes: exclusive wall time per engine step and per rule (``check --timings``).

Engines run lazily (a rule that asks for a derived shape may start ONNX Runtime's symbolic
inference), so times are *exclusive*: while a step runs inside another, only the inner one is
charged, and the step times of a file add up to the file's whole run. Recording is off unless a
caller opens a clock with ``recording()``; a ``step`` outside one costs a context-variable read.
A ``ContextVar`` keeps the server's concurrent lints (threads) apart.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

IMPORTS = "import onnx, the engines and the rules"
PARSE = "parse"
VALIDATE = "validate"
CHECKER = "engine: onnx checker"
ONNX_INFERENCE = "engine: onnx inference"
PINNED = "engine: onnx inference, dims pinned"
NAMES_PINNED = "engine: onnx inference, each input dim pinned"
SYMBOLIC = "engine: onnxruntime symbolic inference"
PROBE = "engine: onnxruntime run (probe)"
STRICT = "engine: onnx strict inference (root causes)"
TYPE_FILL = "engine: schema type fill"
FIX_PLAN = "fix: plan and prove"
FIX_WRITE = "fix: write and runtime check"
OTHER = "other (reading results, building the context)"


def rule_step(code: str) -> str:
    return f"rule {code}"


@dataclass
class StepClock:
    """Exclusive seconds per step name, and the wall time of the whole recording."""

    seconds: dict[str, float] = field(default_factory=dict)
    total: float = 0.0
    _open: list[list] = field(default_factory=list)  # [name, time the step last resumed]

    def _enter(self, name: str) -> None:
        now = time.perf_counter()
        if self._open:
            outer = self._open[-1]
            self.seconds[outer[0]] = self.seconds.get(outer[0], 0.0) + now - outer[1]
        self._open.append([name, now])

    def _leave(self) -> None:
        now = time.perf_counter()
        name, resumed = self._open.pop()
        self.seconds[name] = self.seconds.get(name, 0.0) + now - resumed
        if self._open:
            self._open[-1][1] = now


_ACTIVE: ContextVar[StepClock | None] = ContextVar("onnx_lint_step_clock", default=None)


@contextmanager
def recording() -> Iterator[StepClock]:
    """Time everything inside; what no named step claims is charged to ``OTHER``."""
    clock = StepClock()
    token = _ACTIVE.set(clock)
    started = time.perf_counter()
    clock._enter(OTHER)
    try:
        yield clock
    finally:
        clock._leave()
        clock.total = time.perf_counter() - started
        _ACTIVE.reset(token)


@contextmanager
def step(name: str) -> Iterator[None]:
    clock = _ACTIVE.get()
    if clock is None:
        yield
        return
    clock._enter(name)
    try:
        yield
    finally:
        clock._leave()


def timed(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorator form of ``step`` for an engine entry point."""

    def wrap(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            if _ACTIVE.get() is None:
                return function(*args, **kwargs)
            with step(name):
                return function(*args, **kwargs)

        return run

    return wrap


def summed(per_file: list[dict[str, float]]) -> dict[str, float]:
    total: dict[str, float] = {}
    for seconds in per_file:
        for name, value in seconds.items():
            total[name] = total.get(name, 0.0) + value
    return total


def table(seconds: dict[str, float], files: int) -> str:
    """The steps slowest first, as ESLint's ``TIMING=1`` prints its rules."""
    whole = sum(seconds.values()) or 1.0
    rows = sorted(seconds.items(), key=lambda kv: (-kv[1], kv[0]))
    width = max([len(name) for name, _ in rows] + [len("step")])
    lines = [f"Timings over {files} file{'s' if files != 1 else ''} linted (exclusive wall time):",
             f"{'step':<{width}}  {'seconds':>9}  {'share':>6}"]
    lines += [f"{name:<{width}}  {value:9.3f}  {100 * value / whole:5.1f}%" for name, value in rows]
    lines.append(f"{'total':<{width}}  {sum(seconds.values()):9.3f}  100.0%")
    return "\n".join(lines) + "\n"
