"""Every child process onnx-lint starts to run or load a model: bounded, and gone when we are.

A model is code: a Loop whose trip count is 2**62 never ends, a Tile can ask for
gigabytes. The child that runs one therefore carries its own limits instead of
trusting the parent to stop it:

- it dies with its parent: on Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` is its first
  act, followed by a check that the parent is still the one that started it (the
  parent may have died before the call); elsewhere a watchdog thread polls the parent;
- ``RLIMIT_CPU`` is its own deadline, so it dies even if nobody is left to kill it;
- ``RLIMIT_AS`` is a fixed cap, never proportional to the model; a model too large for
  the cap is refused before anything starts (``too_large``);
- one thread: ``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS``/``MKL_NUM_THREADS`` are 1 and
  the child programs create ONNX Runtime sessions with one intra- and inter-op thread;
- its own process group (``start_new_session``), killed as a group on timeout or when the
  parent gives up waiting;
- the request travels on stdin, never in argv (a 200 KB output name, or a thousand long
  input names, would exceed the kernel's argument limit).

The child program is Python source run by a small bootstrap; it finds ``request`` (the
decoded JSON header) and ``payload`` (the bytes that follow it) in its globals.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from onnx_lint.engines import warm_children as warm

# The fixed address-space cap of a child that runs a model (the probe, the --fix runtime check).
MEMORY_CAP_BYTES = 3 * 2**30
# The largest model such a child accepts: ONNX Runtime holds the file's bytes, its own copy of the
# weights and the arrays it computes, all inside the cap.
MAX_MODEL_BYTES = MEMORY_CAP_BYTES // 4
# Seconds of CPU a child may use beyond its wall-clock timeout before the kernel stops it.
CPU_GRACE_S = 5
# Environment that keeps BLAS and OpenMP pools, which ignore ONNX Runtime's options, to one thread.
ONE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                  "NUMEXPR_NUM_THREADS": "1", "VECLIB_MAXIMUM_THREADS": "1"}
# How often a cancellable wait asks whether to stop.
_CANCEL_POLL_S = 0.05
# Marks our children's command line, so that tests (and people) can find them in the process table.
CHILD_MARK = "onnx-lint-sandboxed-child"

_BOOTSTRAP = r"""
import os, sys
parent = int(os.environ.pop("ONNX_LINT_PARENT_PID"))
if sys.platform.startswith("linux"):
    import ctypes, signal
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(70)  # the parent died before the signal was armed
else:
    import threading, time
    def _watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(70)
    threading.Thread(target=_watch, daemon=True).start()
limits = [int(v) for v in os.environ.pop("ONNX_LINT_LIMITS").split(",")]
try:
    import resource
except ImportError:
    resource = None  # Windows: the parent's timeout and the watchdog remain
if resource is not None:
    cpu, memory = limits
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if memory > 0:
        try:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        except (ValueError, OSError):
            if sys.platform.startswith("linux"):
                raise
            # macOS refuses RLIMIT_AS; the time limits remain
import json
stream = sys.stdin.buffer
header = json.loads(stream.readline())
payload = b"" if os.environ.pop("ONNX_LINT_WARM", None) else stream.read()  # a warm child reads on, framed
sys.stdin = open(os.devnull)
exec(compile(header["program"], "<onnx-lint child>", "exec"),
     {"__name__": "__onnx_lint_child__", "request": header["request"], "payload": payload})
"""


@dataclass(frozen=True)
class ChildOutcome:
    """What a child did: its exit status (negative: the signal), its output, and whether time ran out."""

    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    cancelled: bool = False  # the caller's ``cancelled()`` said stop (an edited or closed document)

    def text(self) -> str:
        return self.stderr.decode("utf-8", "replace")


def too_large(size: int) -> str | None:
    """Why a model of ``size`` bytes may not run in a child (``None``: it may)."""
    if size <= MAX_MODEL_BYTES:
        return None
    return (f"the model is {size / 2**20:.0f} MiB; a run is capped at {MEMORY_CAP_BYTES // 2**30} GiB of memory, "
            f"which holds models up to {MAX_MODEL_BYTES // 2**20} MiB")


def run_child(program: str, request: object, payload: bytes = b"", *, timeout: float, label: str,
              memory: int = MEMORY_CAP_BYTES, cancelled: Callable[[], bool] | None = None,
              reusable: bool = True) -> ChildOutcome:
    """Run ``program`` in a sandboxed child (see the module's docstring) and wait at most ``timeout`` s.

    ``label`` is a fixed word (``runtime-session``, ``quantize-validation``) that follows ``CHILD_MARK`` in the
    child's argv, so that ``ps`` (and a test) can tell our children apart; no request data goes there.
    ``memory`` is the address-space cap in bytes: ``MEMORY_CAP_BYTES`` unless the caller documents its own
    (quantize's validation holds two models and their outputs; 0: no cap). ``cancelled`` is polled while
    the child runs; when it returns True the child's group is killed at once. Within ``kept_warm``, a
    ``reusable`` request runs in a warm child of the same label and cap (``warm_children.py``).
    """
    if reusable and warm.enabled():
        return warm.run(program, request, payload, timeout=timeout, label=label, memory=memory,
                        cancelled=cancelled)
    env = dict(os.environ)
    env.update(ONE_THREAD_ENV)
    env["ONNX_LINT_PARENT_PID"] = str(os.getpid())
    env["ONNX_LINT_LIMITS"] = f"{int(timeout) + CPU_GRACE_S},{memory}"
    header = json.dumps({"program": program, "request": request}).encode() + b"\n"
    process = subprocess.Popen([sys.executable, "-c", _BOOTSTRAP, CHILD_MARK, label], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    deadline = time.monotonic() + timeout
    pending: bytes | None = header + payload
    try:
        while True:
            left = deadline - time.monotonic()
            wait = left if cancelled is None else min(_CANCEL_POLL_S, left)
            try:
                stdout, stderr = process.communicate(pending, timeout=max(wait, 0.001))
                break
            except subprocess.TimeoutExpired:
                pending = None  # communicate goes on writing what it started
                stop = time.monotonic() >= deadline
                if stop or (cancelled is not None and cancelled()):
                    _kill_group(process)
                    stdout, stderr = process.communicate()
                    return ChildOutcome(process.returncode, stdout, stderr, timed_out=stop, cancelled=not stop)
    except BaseException:  # interrupted while waiting: the child must not outlive the wait
        _kill_group(process)
        process.wait()
        raise
    return ChildOutcome(process.returncode, stdout, stderr)


def _kill_group(process: subprocess.Popen) -> None:
    killpg = getattr(os, "killpg", None)
    try:
        if killpg is None:  # no process groups (Windows): the child alone
            process.kill()
        else:
            killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # already gone


def signal_name(returncode: int) -> str:
    """``SIGKILL`` for -9; the words for an unknown signal number."""
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def die_with_parent(parent: int) -> None:
    """For a forked child (no exec), given the pid that forked it: the bootstrap's death signal and race check."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(70)
