"""Faults while ``--fix`` writes (issue 6): each one leaves the original byte-identical and no file behind.

Faults are injected at every step of the staged write (create, write, fsync,
chmod, rename), in the proofs between them (a crash, Ctrl-C), and from outside
(SIGKILL at random moments of a real process).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import onnx
import pytest
from conftest import REPO

from examples import defects
from onnx_lint.fixes import fixer
from onnx_lint.model import write as model_io


def _raise(exc: BaseException):
    def fail(*args, **kwargs):
        raise exc
    return fail


class _HalfWrite:
    """A file handle that writes half of what it is given, then finds the disk full."""

    def __init__(self, handle):
        self._handle = handle

    def write(self, data: bytes) -> int:
        self._handle.write(data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._handle.close()


def _half_write(monkeypatch):
    real = os.fdopen
    monkeypatch.setattr(model_io.os, "fdopen", lambda fd, mode: _HalfWrite(real(fd, mode)))


# (name, how to inject it, exit code, a phrase the error must contain)
FAULTS = [
    ("create-temporary-file", lambda mp: mp.setattr(model_io.tempfile, "mkstemp",
                                                    _raise(OSError(13, "Permission denied"))),
     2, "could not create a temporary file: Permission denied"),
    ("half-written-then-disk-full", _half_write, 2, "No space left on device"),
    ("fsync-io-error", lambda mp: mp.setattr(model_io.os, "fsync", _raise(OSError(5, "Input/output error"))),
     2, "Input/output error"),
    ("chmod-refused", lambda mp: mp.setattr(model_io.os, "chmod", _raise(OSError(1, "Operation not permitted"))),
     2, "Operation not permitted"),
    ("rename-across-devices", lambda mp: mp.setattr(model_io.os, "replace",
                                                    _raise(OSError(18, "Invalid cross-device link"))),
     2, "could not replace the file: Invalid cross-device link"),
    ("checker-crashes", lambda mp: mp.setattr(fixer, "_checker_error", _raise(MemoryError("checker ran out"))),
     2, "internal error: MemoryError"),
    ("runtime-check-crashes", lambda mp: mp.setattr(fixer, "runtime_load_error", _raise(RuntimeError("ort died"))),
     2, "internal error: RuntimeError: ort died"),
    ("ctrl-c-while-writing", lambda mp: mp.setattr(model_io.os, "fsync", _raise(KeyboardInterrupt())),
     130, "interrupted"),
    ("ctrl-c-while-proving", lambda mp: mp.setattr(fixer, "_checker_error", _raise(KeyboardInterrupt())),
     130, "interrupted"),
]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != "model.onnx")


@pytest.mark.parametrize("name, inject, code, phrase", FAULTS, ids=[f[0] for f in FAULTS])
def test_a_fault_while_fixing_loses_nothing(cli, tmp_path, monkeypatch, name, inject, code, phrase):
    path = tmp_path / "model.onnx"
    onnx.save(defects.stale_rank0_output(), path)
    before = path.read_bytes()
    mode = path.stat().st_mode
    inject(monkeypatch)
    run = cli("check", str(path), "--fix", "--no-cache")
    assert run.code == code, (run.out, run.err)
    assert phrase in run.err, run.err
    if code == 2:
        assert str(path) in run.err
    assert path.read_bytes() == before and path.stat().st_mode == mode
    assert _leftovers(tmp_path) == [], "a temporary file was left behind"


def test_sigkill_at_random_moments_never_leaves_a_corrupt_model(tmp_path):
    """Killed mid-fix, the model is the original or the fixed one: the rename is the only write."""
    sys.path.insert(0, str(REPO))
    from benchmarks.models import mlp_chain, weakly_typed

    source = tmp_path / "source.onnx"
    onnx.save(weakly_typed(mlp_chain(20_000)), source)
    original = source.read_bytes()
    reference = tmp_path / "reference"
    reference.mkdir()
    shutil.copy(source, reference / "model.onnx")
    command = [sys.executable, "-m", "onnx_lint", "check", "--fix", "--no-cache", "-q"]
    started = time.perf_counter()
    subprocess.run(command + [str(reference / "model.onnx")], capture_output=True, timeout=300)
    full_run = time.perf_counter() - started
    fixed = (reference / "model.onnx").read_bytes()
    assert fixed != original
    rng = random.Random(6)
    seen = set()
    for attempt in range(8):
        folder = tmp_path / f"kill{attempt}"
        folder.mkdir()
        path = folder / "model.onnx"
        path.write_bytes(original)
        proc = subprocess.Popen(command + [str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:  # a random moment of the run; a run that ends first is not killed
            proc.wait(timeout=rng.uniform(0.2, full_run))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
        data = path.read_bytes()
        assert data in (original, fixed), f"attempt {attempt}: the model is neither the original nor the fixed one"
        seen.add("fixed" if data == fixed else "original")
        # The only possible leftover is onnx-lint's own hidden temporary file, never a partial model.
        assert all(name.startswith(".model.onnx.") and name.endswith(".onnx-lint.tmp")
                   for name in _leftovers(folder)), _leftovers(folder)
        # The next fix of the file finishes the job and removes what the killed one left.
        subprocess.run(command + [str(path)], capture_output=True, timeout=300)
        assert path.read_bytes() == fixed and _leftovers(folder) == [], _leftovers(folder)
    assert "original" in seen


def _finished_pid() -> int:
    """The id of a process that has exited (and been reaped): what a killed writer leaves in its file's name."""
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


def test_a_write_removes_what_killed_writes_of_the_same_file_left_and_nothing_else(cli, tmp_path):
    """Only this file's temporary files, regular and this user's, whose writer no longer runs, go."""
    path = tmp_path / "model.onnx"
    onnx.save(defects.stale_rank0_output(), path)
    dead = _finished_pid()
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        left = tmp_path / f".model.onnx.{dead}.k2x9_abc.onnx-lint.tmp"
        left.write_bytes(b"half a model")
        kept = [tmp_path / f".model.onnx.{writer.pid}.q7w1zz3e.onnx-lint.tmp",  # a write still running
                tmp_path / f".other.onnx.{dead}.k2x9_abc.onnx-lint.tmp",  # another file's
                tmp_path / ".model.onnx.k2x9_abc.onnx-lint.tmp",  # no writer named: an older version's
                tmp_path / f"model.onnx.{dead}.k2x9_abc.onnx-lint.tmp"]  # not hidden: not a name we write
        for other in kept:
            other.write_bytes(b"not ours to judge")
        target = tmp_path / "precious.txt"
        target.write_text("kept")
        link = tmp_path / f".model.onnx.{_finished_pid()}.aaaa_bbb.onnx-lint.tmp"
        link.symlink_to(target)
        assert cli("check", str(path), "--fix", "--no-cache").code == 0
        assert not left.exists()
        assert all(other.read_bytes() == b"not ours to judge" for other in kept)
        assert link.is_symlink() and target.read_text() == "kept"
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".model.onnx.")) == sorted(
            p.name for p in [kept[0], kept[2], link])
    finally:
        writer.kill()
        writer.wait()
