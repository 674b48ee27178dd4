"""Progress reporting that the quantize pipeline drives and each face renders its own way.

The CLI shows rich progress bars on a terminal and plain lines otherwise; the
language server maps the same calls onto LSP work-done progress and uses
``cancelled`` to stop a run between steps.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Cancelled(Exception):
    """The user cancelled a long operation; nothing was written."""


class Progress:
    """A sink for progress events; this base class ignores them all (``--quiet``)."""

    def stage(self, title: str, total: int | None = None) -> None:
        """A new step begins; ``total`` is its number of units when known."""

    def advance(self, units: int = 1) -> None:
        """``units`` more of the current step are done."""

    def note(self, message: str) -> None:
        """Something the user should read (warnings go here too)."""

    def close(self) -> None:
        """The operation ended."""

    def cancelled(self) -> bool:
        return False

    def check(self) -> None:
        """Raise ``Cancelled`` if the user asked to stop."""
        if self.cancelled():
            raise Cancelled("cancelled")


class PlainProgress(Progress):
    """One line per step and per note: for logs and pipes."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self._title = ""
        self._total: int | None = None
        self._done = 0
        self._started = 0.0

    def stage(self, title: str, total: int | None = None) -> None:
        self._finish()
        self._title, self._total, self._done, self._started = title, total, 0, time.perf_counter()
        print(f"{title}...", file=self.stream, flush=True)

    def advance(self, units: int = 1) -> None:
        self._done += units

    def note(self, message: str) -> None:
        print(message, file=self.stream, flush=True)

    def _finish(self) -> None:
        if self._title:
            count = f" {self._done}/{self._total}" if self._total else ""
            print(f"{self._title}: done{count} ({time.perf_counter() - self._started:.1f} s)",
                  file=self.stream, flush=True)
            self._title = ""

    def close(self) -> None:
        self._finish()


class RichProgress(Progress):
    """rich progress bars on an interactive terminal."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TaskID,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as Bars

        self.console = Console(stderr=True)
        self.bars = Bars(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                         TimeElapsedColumn(), console=self.console, transient=False)
        self.bars.start()
        self._task: TaskID | None = None

    def stage(self, title: str, total: int | None = None) -> None:
        if self._task is not None:
            task = self.bars.tasks[-1]
            self.bars.update(self._task, completed=task.total or 1, total=task.total or 1)
        self._task = self.bars.add_task(title, total=total)

    def advance(self, units: int = 1) -> None:
        if self._task is not None:
            self.bars.advance(self._task, units)

    def note(self, message: str) -> None:
        self.console.print(message, markup=False, highlight=False)

    def close(self) -> None:
        if self._task is not None:
            task = self.bars.tasks[-1]
            self.bars.update(self._task, completed=task.total or 1, total=task.total or 1)
            self._task = None
        self.bars.stop()


def terminal_progress(quiet: bool) -> Progress:
    """Bars on a terminal, plain lines on a pipe, nothing with ``--quiet``."""
    if quiet:
        return Progress()
    if sys.stderr.isatty():
        try:
            return RichProgress()
        except ImportError:
            pass
    return PlainProgress()
