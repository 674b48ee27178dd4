"""Worker processes: the server's message loop never runs onnx itself.

onnx's inference holds the GIL and a hostile model can crash it, so every
lint, fix, view and quantize job runs in a child process. A job that goes
stale (the file changed again) or runs past its time limit is stopped by
killing its worker, which is then replaced; a worker that dies on its own
becomes a ``WorkerCrashed`` error naming the job, never a dead server.

Children write nothing to stdout: it is the LSP channel. Their fd 1 is
pointed at stderr before any job runs (so also for onnx's and ONNX Runtime's
C++ code, and the processes they start).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Spawn, not fork: the server has threads (pygls' reader), and forking them is unsafe.
_CONTEXT = multiprocessing.get_context("spawn")
CANCEL_GRACE_S = 10.0


@dataclass(frozen=True)
class JobRef:
    """A job function of ``onnx_lint.server.jobs``, by name: it pickles as its name, and only the worker
    that calls it imports the jobs module (and onnx with it), never the server's own process."""

    name: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from onnx_lint.server import jobs

        return getattr(jobs, self.name)(*args, **kwargs)


class _JobsByName:
    """``jobs_by_name.lint_job`` is ``JobRef("lint_job")``: the server names jobs as if it imported them."""

    def __getattr__(self, name: str) -> JobRef:
        if name.startswith("_"):
            raise AttributeError(name)
        return JobRef(name)


jobs_by_name = _JobsByName()


class WorkerCrashed(Exception):
    """A worker process died while running a job (a crash in onnx or ONNX Runtime)."""


class JobFailed(Exception):
    """A job raised; the message is the one the user should read."""


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "it stopped answering"
    if code < 0:
        try:
            return f"it was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"it was killed by signal {-code}"
    return f"it exited with status {code}"


def _serve(conn: multiprocessing.connection.Connection, cancel: Any, server: int) -> None:
    """The child's loop: run each job it is sent, send back events and the outcome.

    It dies with the server (``server`` is its pid), even in the middle of a job.
    """
    from onnx_lint.engines.sandbox import die_with_parent

    die_with_parent(server)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import onnx_lint.server.jobs  # noqa: F401  (warm: the first lint should not pay the imports)

    while True:
        try:
            function, args = conn.recv()
        except (EOFError, OSError):
            return

        def emit(event: Any) -> None:
            conn.send(("event", event))

        try:
            result = function(*args, emit=emit, cancelled=cancel.is_set)
        except Exception as exc:  # the job's own errors are data for the server
            conn.send(("error", (type(exc).__name__, str(exc))))
        else:
            conn.send(("ok", result))


class Worker:
    """One child process that runs one job at a time."""

    def __init__(self) -> None:
        self._cancel = _CONTEXT.Event()
        self.stopped = False
        self._start()

    def _start(self) -> None:
        parent, child = _CONTEXT.Pipe()
        self.process = _CONTEXT.Process(target=_serve, args=(child, self._cancel, os.getpid()), daemon=True,
                                        name="onnx-lint-worker")
        self.process.start()
        child.close()
        self._conn = parent

    def restart(self) -> None:
        """A fresh child for the next job (the last one went stale, ran late or crashed); none once stopped."""
        self._end_child()
        if not self.stopped:
            self._start()

    def kill(self) -> None:
        """Stop for good without waiting for the child to go (``stop`` waits)."""
        self.stopped = True
        if self.process.is_alive():
            self.process.kill()

    def stop(self) -> None:
        """Stop for good (the server shuts down, a quantize run ends): a job cancelled after this, as the
        server's tasks are, starts no new child (one spawned there outlived the server's answer to shutdown)."""
        self.stopped = True
        self._end_child()

    def _end_child(self) -> None:
        # Kill first: a thread blocked reading the pipe then sees EOF, before the pipe is closed.
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        with contextlib.suppress(Exception):
            self._conn.close()

    def request_cancel(self) -> None:
        """Ask the running job to stop at its next check (it then raises ``Cancelled``)."""
        self._cancel.set()

    async def call(self, function: Callable[..., Any], *args: Any, timeout: float | None = None,
                   on_event: Callable[[Any], None] | None = None) -> Any:
        """Run ``function(*args)`` in the child; kills and replaces the child if cancelled or late."""
        loop = asyncio.get_running_loop()
        if self.stopped:
            raise asyncio.CancelledError  # the server is shutting down: no job runs any more
        if not self.process.is_alive():  # it died while idle (killed from outside): a fresh one takes the job
            self.restart()
        self._cancel.clear()  # here, not in the child: a cancel may come before the child reads the job
        try:
            self._conn.send((function, args))
        except OSError:  # it died between the check and the send
            self.restart()
            self._conn.send((function, args))
        deadline = None if timeout is None else loop.time() + timeout
        try:
            while True:
                remaining = None if deadline is None else max(0.0, deadline - loop.time())
                receive = loop.run_in_executor(None, _receive, self._conn, self.process)
                kind, payload = await asyncio.wait_for(receive, remaining)
                if kind == "event":
                    if on_event is not None:
                        on_event(payload)
                    continue
                if kind == "error":
                    raise JobFailed(payload[1] if payload[0] in _USER_ERRORS else f"{payload[0]}: {payload[1]}")
                return payload
        except (asyncio.CancelledError, asyncio.TimeoutError):
            self.restart()
            raise
        except WorkerCrashed:
            self.restart()
            raise



def _receive(conn: multiprocessing.connection.Connection, process: Any) -> tuple[str, Any]:
    """One message from a worker (in a thread: ``recv`` blocks)."""
    try:
        return conn.recv()
    except (EOFError, OSError):
        process.join(timeout=5)
        raise WorkerCrashed(_describe_exit(process.exitcode)) from None


# Errors whose message is already written for the user (they name the file and the problem).
_USER_ERRORS = {"ModelLoadError", "FixError", "QuantizeError", "Cancelled", "ConfigError"}


class WorkerPool:
    """A few workers shared by all lint, fix and view jobs."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._workers: list[Worker] = []
        self._idle: asyncio.Queue[Worker] | None = None
        self._stopped = False

    @property
    def size(self) -> int:
        """How many workers the pool runs."""
        return self._size

    def start(self) -> None:
        """Start the children now, so that the first lint does not wait for imports (never again once stopped)."""
        if self._idle is not None or self._stopped:
            return
        self._idle = asyncio.Queue()
        for _ in range(self._size):
            worker = Worker()
            self._workers.append(worker)
            self._idle.put_nowait(worker)

    async def run(self, function: Callable[..., Any], *args: Any, timeout: float | None = None) -> Any:
        self.start()
        idle = self._idle
        if idle is None:
            raise asyncio.CancelledError  # stopped: the server is shutting down
        worker = await idle.get()
        try:
            return await worker.call(function, *args, timeout=timeout)
        finally:
            idle.put_nowait(worker)  # the queue it came from: a job cancelled by stop() ends after it dropped it

    def stop(self) -> None:
        """Stop every worker for good: all are killed first, so that their exits overlap."""
        self._stopped = True
        for worker in self._workers:
            worker.kill()
        for worker in self._workers:
            worker.stop()
        self._workers.clear()
        self._idle = None
