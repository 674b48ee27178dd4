"""Background tasks the server starts and must not lose.

The event loop keeps only weak references to tasks: one started with
``ensure_future`` and stored nowhere can be garbage-collected mid-flight
(asyncio's documentation says to keep a reference). Every fire-and-forget
task goes through ``BackgroundTasks``, which holds it until it is done and
cancels what is left at shutdown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundTasks:
    """A set of running tasks: each is held until done, then discarded."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``coroutine`` in the background, keeping its task alive until it ends."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def __len__(self) -> int:
        return len(self._tasks)

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()
