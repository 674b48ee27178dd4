"""One function run in a forked child while the parent goes on, its result collected later.

ONNX's checker and its shape inference are C++ calls that hold the GIL, so a
thread cannot run one beside the other; a forked child can, on another core,
without pickling the model to it (the child shares the parent's memory,
copy-on-write). Where forking is unavailable or unsafe nothing starts and the
caller computes the result itself: off Linux (macOS system libraries are not
fork-safe, Windows has no fork), with other threads running (a child could
inherit their locks held), or with ONNX Runtime loaded (its native thread
pools are invisible to ``threading``).

The child runs no model, only ONNX's static engines on memory it shares with the
parent, so it gets no memory cap of its own (the parent's memory is already its
memory); it does die with its parent (``sandbox.die_with_parent``) and stops after
``CPU_LIMIT_S`` seconds of CPU, whoever is left to wait for it.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from onnx_lint.engines.sandbox import die_with_parent

T = TypeVar("T")
# The forked child's own deadline (CPU seconds): far above any inference measured (100k nodes: ~1 s).
CPU_LIMIT_S = 600


def fork_is_safe() -> bool:
    """Linux, no other Python thread, and no ONNX Runtime loaded (see the module's docstring)."""
    return sys.platform.startswith("linux") and threading.active_count() == 1 and "onnxruntime" not in sys.modules


def room_for_child() -> bool:
    """Whether a child started to overlap work gains this process time: the tasks runnable now, this
    one included, do not outnumber the cores it may use.

    ``/proc/loadavg``'s fourth field counts the tasks runnable at this instant. With a core idle the
    child runs beside this process. With each core taken by one task (a CI runner's second job, an
    editor and a browser on a 2-core laptop) the scheduler gives this process's two tasks two shares
    instead of one: beside one busy core of two, the 100k-node external-data chain's weak twin took
    2.15-2.26 s forked against 2.33-2.38 s in-process (the bare load and inference 1.65-1.72 s), for
    ~0.15 s more CPU. With more runnable tasks than cores a child mostly takes turns with its parent
    and only adds the fork's cost (copy-on-write pages, handing the answer back). Without that file
    (not Linux) forking is off anyway.
    """
    try:
        with open("/proc/loadavg", encoding="ascii") as stats:
            running = int(stats.read().split()[3].partition("/")[0])
        cores = len(os.sched_getaffinity(0))
    except (OSError, ValueError, IndexError, AttributeError):
        return True
    return running <= cores


def _limit_cpu() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT_S, CPU_LIMIT_S + 1))


class ForkedCall(Generic[T]):
    """A child process computing ``fn()``; ``result`` waits for it, ``abandon`` stops it.

    The child writes its pickled answer into an anonymous memory file (``memfd``) made before the
    fork, and the parent reads it back in one call once the child has exited: an inferred 100k-node
    model is 7-13 MB, which through a pipe took ~25 ms of 64 KB hand-overs between the two processes
    (the parent waits for exactly this answer), and ~5 ms this way.
    """

    def __init__(self, pid: int, fd: int, group: bool = False) -> None:
        self._pid = pid
        self._fd = fd
        self._done = False
        self._group = group

    @classmethod
    def start(cls, fn: Callable[[], T], *, own_group: bool = False) -> ForkedCall[T] | None:
        """Fork a child that runs ``fn``; ``None`` where forking is unavailable or unsafe. With ``own_group``
        the child leads a process group of its own, which ``abandon`` kills whole (whatever it started)."""
        if not fork_is_safe():
            return None
        try:
            fd = os.memfd_create("onnx-lint-forked", os.MFD_CLOEXEC)
        except (OSError, AttributeError):  # a kernel or C library without memfd: the caller computes itself
            return None
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            os.close(fd)
            return None
        if pid == 0:  # the child: compute, hand the result over, leave without any cleanup of the parent's
            code = 1
            try:
                if own_group:
                    os.setpgid(0, 0)
                die_with_parent(parent)
                _limit_cpu()
                _write_all(fd, pickle.dumps(fn()))
                code = 0
            finally:
                os._exit(code)
        if own_group:
            try:
                os.setpgid(pid, pid)  # also here: a kill right after the fork must reach the group
            except OSError:  # the child has set it already (or has exited)
                pass
        return cls(pid, fd, own_group)

    def result(self) -> tuple[bool, T | None]:
        """``(True, value)`` once the child has finished; ``(False, None)`` if it failed or died."""
        if self._done:
            return False, None
        self._done = True
        try:
            _, status = os.waitpid(self._pid, 0)
            if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
                return False, None
            size = os.fstat(self._fd).st_size
            payload = os.pread(self._fd, size, 0) if size else b""
        finally:
            os.close(self._fd)
        if len(payload) != size:
            return False, None
        return True, pickle.loads(payload)

    def finished_within(self, timeout: float, cancelled: Callable[[], bool] | None = None) -> bool | None:
        """Whether the child ends within ``timeout`` seconds (it is not reaped: ``result`` reads it); ``False``
        once the time is up or ``cancelled()`` says so; ``None`` where the kernel cannot say (no pidfd)."""
        try:
            fd = os.pidfd_open(self._pid)
        except (AttributeError, OSError):
            return None
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            deadline = time.monotonic() + timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                if poller.poll(min(left, 0.05) * 1000):
                    return True
                if cancelled is not None and cancelled():
                    return False
        finally:
            os.close(fd)

    def abandon(self) -> None:
        """Stop the child and reap it (its result is no longer wanted)."""
        if self._done:
            return
        self._done = True
        try:
            if self._group:
                os.killpg(self._pid, signal.SIGKILL)
            else:
                os.kill(self._pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self._pid, 0)
        os.close(self._fd)


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]
