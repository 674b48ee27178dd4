"""Sandboxed children kept warm across requests, for runs over many models and for one model's requests.

A fresh child pays for a Python start and for importing onnxruntime (and sympy, for the symbolic
engine): 0.2-1 s, against a few milliseconds for asking ONNX Runtime about a one-node model. A folder
of small models (a fixture repository, a model zoo, ONNX's conformance cases) would spend nearly all
its time there, and one model whose load check and runtime probe both ask ONNX Runtime would pay it
twice. Within ``kept_warm`` (the CLI's check), each request goes to an idle child of the same label
and memory cap, started the way ``sandbox.run_child`` starts one and bounded the same way:

- it dies with this process (the bootstrap's death signal), and runs in its own process group;
- its address-space cap is fixed at start (the label's cap, never the model's size);
- before each request it sets its own ``RLIMIT_CPU`` to what it has used plus that request's budget, so
  a runaway request dies on its own deadline, and the parent kills the group at the wall-clock budget;
- a child that timed out, was cancelled, crashed, ran out of memory or served ``MAX_REQUESTS`` is never
  used again: the next request starts a fresh one.

The program runs exactly as in a cold child (``request`` and ``payload`` in its globals); what it writes
to ``sys.stdout`` and ``sys.stderr`` and its exit status come back as a ``ChildOutcome``. The answer
travels on a pipe of its own, so a native library printing to file descriptor 1 cannot corrupt it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from onnx_lint.engines import sandbox

__all__ = ["MAX_REQUESTS", "enabled", "kept_warm", "run", "shutdown"]

# A child serves at most this many requests (memory fragments; ONNX Runtime keeps arenas).
MAX_REQUESTS = 256
_HEADER = struct.Struct("!Q")
# A warm child's hard CPU limit over its whole life; each request gets its own soft limit below it.
_LIFETIME_CPU_S = 24 * 3600

# The loop a warm child runs after the sandbox bootstrap (which reads nothing from stdin for it).
_SERVE = r"""
import io, json, os, struct, sys, traceback
try:
    import resource
except ImportError:
    resource = None
answers = int(os.environ.pop("ONNX_LINT_ANSWER_FD"))
requests = sys.__stdin__.buffer
size = struct.Struct("!Q")

def read_exact(n):
    chunks = []
    while n:
        chunk = requests.read(n)
        if not chunk:
            os._exit(0)  # the parent closed our stdin: done
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)

def reply(code, out, err, spent):
    head = json.dumps({"returncode": code, "spent": spent}).encode()
    message = size.pack(len(head)) + head + size.pack(len(out)) + out + size.pack(len(err)) + err
    view = memoryview(message)
    while view:
        view = view[os.write(answers, view):]

while True:
    header = json.loads(read_exact(size.unpack(read_exact(size.size))[0]))
    payload = read_exact(size.unpack(read_exact(size.size))[0])
    if resource is not None:
        used = resource.getrusage(resource.RUSAGE_SELF)
        spent = int(used.ru_utime + used.ru_stime) + 1
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        resource.setrlimit(resource.RLIMIT_CPU, (spent + header["cpu"], hard))
    out, err = io.BytesIO(), io.BytesIO()
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="replace", write_through=True)
    code = 0
    spent = False  # out of memory: the heap may be left in pieces, so the child is not used again
    try:
        exec(compile(header["program"], "<onnx-lint child>", "exec"),
             {"__name__": "__onnx_lint_child__", "request": header["request"], "payload": payload})
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            sys.stderr.write(str(exc.code))
    except BaseException as exc:
        traceback.print_exc()
        code, spent = 1, isinstance(exc, MemoryError)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
        stream.detach()  # a dropped wrapper would close the buffer it wraps
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    reply(code, out.getvalue(), err.getvalue(), spent)
"""

_enabled = False
_lock = threading.Lock()
_idle: dict[tuple[str, int], list[_Warm]] = {}
_owner = os.getpid()


@dataclass
class _Warm:
    """One warm child: the process, the pipe its answers come on, and how many requests it served."""

    process: subprocess.Popen
    answers: int
    served: int = 0

    def close(self) -> None:
        sandbox._kill_group(self.process)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            os.close(self.answers)
        except OSError:
            pass


@contextlib.contextmanager
def kept_warm() -> Iterator[None]:
    """Within the block, reusable sandboxed requests of this process (and of processes it forks) go to warm
    children; at its end the idle ones are stopped."""
    global _enabled
    before, _enabled = _enabled, True
    try:
        yield
    finally:
        _enabled = before
        if not before:
            shutdown()


def enabled() -> bool:
    return _enabled and sys.platform.startswith("linux")


def run(program: str, request: object, payload: bytes, *, timeout: float, label: str, memory: int,
        cancelled: Callable[[], bool] | None) -> sandbox.ChildOutcome:
    """``program`` in a warm child of ``label`` and ``memory`` (started if none is idle); see the module."""
    key = (label, memory)
    child = _take(key)
    fresh = child is None
    if child is None:
        child = _start(label, memory)
    header = json.dumps({"program": program, "request": request, "cpu": int(timeout) + sandbox.CPU_GRACE_S}).encode()
    message = _HEADER.pack(len(header)) + header + _HEADER.pack(len(payload)) + payload
    try:
        _send(child, message)
    except OSError:  # it died while idle (its creating thread ended, say): nothing ran, so start afresh
        child.close()
        if fresh:
            raise
        child = _start(label, memory)
        _send(child, message)
    outcome, spent = _receive(child, time.monotonic() + timeout, cancelled)
    if not spent and outcome.returncode >= 0 and not outcome.timed_out and not outcome.cancelled:
        child.served += 1
        if child.served < MAX_REQUESTS:
            _give_back(key, child)
            return outcome
    child.close()
    return outcome


def _take(key: tuple[str, int]) -> _Warm | None:
    global _owner
    with _lock:
        if os.getpid() != _owner:  # a forked process: the parent's children are not ours to use
            _idle.clear()
            _owner = os.getpid()
        while _idle.get(key):
            child = _idle[key].pop()
            if child.process.poll() is None:
                return child
            child.close()
    return None


def _give_back(key: tuple[str, int], child: _Warm) -> None:
    with _lock:
        _idle.setdefault(key, []).append(child)


def _start(label: str, memory: int) -> _Warm:
    read_end, write_end = os.pipe()
    env = dict(os.environ)
    env.update(sandbox.ONE_THREAD_ENV)
    env["ONNX_LINT_PARENT_PID"] = str(os.getpid())
    # The hard CPU limit leaves room for every request's own soft limit (set by the serve loop).
    env["ONNX_LINT_LIMITS"] = f"{_LIFETIME_CPU_S},{memory}"
    env["ONNX_LINT_ANSWER_FD"] = str(write_end)
    env["ONNX_LINT_WARM"] = "1"
    try:
        process = subprocess.Popen([sys.executable, "-c", sandbox._BOOTSTRAP, sandbox.CHILD_MARK, label],
                                   stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   env=env, start_new_session=True, pass_fds=(write_end,))
    except BaseException:
        os.close(read_end)
        os.close(write_end)
        raise
    os.close(write_end)
    child = _Warm(process, read_end)
    _send(child, json.dumps({"program": _SERVE, "request": None}).encode() + b"\n")
    return child


def _send(child: _Warm, message: bytes) -> None:
    stdin = child.process.stdin
    if stdin is None or child.process.poll() is not None:
        raise BrokenPipeError("the warm child is gone")
    stdin.write(message)
    stdin.flush()


def _receive(child: _Warm, deadline: float, cancelled: Callable[[], bool] | None
             ) -> tuple[sandbox.ChildOutcome, bool]:
    """The child's answer and whether the child is spent, or the outcome of killing it at the deadline or on
    cancel (spent too)."""
    import selectors

    buffer = bytearray()
    needed: int | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(child.answers, selectors.EVENT_READ)
        while needed is None or len(buffer) < needed:
            left = deadline - time.monotonic()
            if left <= 0 or (cancelled is not None and cancelled()):
                child.close()
                return sandbox.ChildOutcome(-9, b"", b"", timed_out=left <= 0, cancelled=left > 0), True
            if selector.select(min(left, 0.05 if cancelled is not None else left)):
                chunk = os.read(child.answers, 1 << 20)
                if not chunk:  # it died mid-request: a crash or its own CPU deadline
                    code = child.process.wait()
                    return sandbox.ChildOutcome(code if code < 0 else (code or 1), b"", b""), True
                buffer += chunk
                needed = _complete(buffer)
    return _decode(bytes(buffer))


def _complete(buffer: bytearray) -> int | None:
    """The whole answer's length once its three length fields have arrived, else ``None``."""
    offset = 0
    for _ in range(3):
        if len(buffer) < offset + _HEADER.size:
            return None
        offset += _HEADER.size + _HEADER.unpack_from(buffer, offset)[0]
    return offset


def _decode(data: bytes) -> tuple[sandbox.ChildOutcome, bool]:
    parts = []
    offset = 0
    for _ in range(3):
        length = _HEADER.unpack_from(data, offset)[0]
        offset += _HEADER.size
        parts.append(data[offset:offset + length])
        offset += length
    head = json.loads(parts[0])
    return sandbox.ChildOutcome(int(head["returncode"]), parts[1], parts[2]), bool(head.get("spent"))


def shutdown() -> None:
    """Stop every idle warm child (at exit; each would die with us anyway)."""
    with _lock:
        children = [child for pool in _idle.values() for child in pool] if os.getpid() == _owner else []
        _idle.clear()
    for child in children:
        child.close()


atexit.register(shutdown)
