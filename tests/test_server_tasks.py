"""The server's background tasks are held until they end (the event loop itself keeps only weak references)."""

from __future__ import annotations

import asyncio

import pytest

from onnx_lint.server.tasks import BackgroundTasks

pytestmark = pytest.mark.asyncio


async def test_a_spawned_task_is_held_while_it_runs_and_let_go_when_done():
    tasks = BackgroundTasks()
    release = asyncio.Event()
    finished = []

    async def job() -> None:
        await release.wait()
        finished.append(True)

    tasks.spawn(job())  # no reference kept here
    await asyncio.sleep(0)
    assert len(tasks) == 1
    release.set()
    await asyncio.wait_for(_until_empty(tasks), 5)
    assert finished == [True]


async def test_cancel_all_stops_what_is_running():
    tasks = BackgroundTasks()
    task = tasks.spawn(asyncio.Event().wait())
    await asyncio.sleep(0)
    tasks.cancel_all()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(tasks) == 0


async def _until_empty(tasks: BackgroundTasks) -> None:
    while len(tasks):
        await asyncio.sleep(0)
