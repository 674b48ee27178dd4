"""Every child that runs a model is bounded and dies with its parent; its request never travels in argv.

The kill tests start the real CLI on a model whose run never ends, wait (bounded) until the CLI has a
child, kill the CLI, and then watch the process table until that child is gone: proof by the process
tree, not by sleeping.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import onnx
import pytest
import pytest_lsp
from hostile_models import endless_loop, long_names, tile_bomb
from lsp_support import SERVER, open_binary, push_capabilities, start, until
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from onnx_lint.engines import sandbox
from onnx_lint.engines.probe import probe
from onnx_lint.model.load import read_model

REPO = Path(__file__).resolve().parent.parent
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process table in /proc")
BOUND_S = 60.0


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time) of a process, or None when it no longer exists."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1]), int(fields[19])


def _children(parent: int) -> list[tuple[int, int]]:
    """(pid, start time) of each live probe child of ``parent`` (the CLI starts other children too: the
    budgeted engines)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[1] == parent and stat[0] != "Z" and _is_probe(int(entry)):
                found.append((int(entry), stat[2]))
    return found


def _is_probe(pid: int) -> bool:
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return sandbox.CHILD_MARK.encode() in words and b"runtime-session" in words


def _alive(pid: int, started: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[2] == started and stat[0] != "Z"


def _wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + BOUND_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} within {BOUND_S:.0f} s")
        time.sleep(0.05)


def _start_cli(model: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "onnx_lint", "check", str(model), "--no-cache"],
                            cwd=model.parent, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


@linux_only
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_the_probe_child_dies_with_a_killed_cli(save, how):
    cli = _start_cli(save(endless_loop()))
    children: list[tuple[int, int]] = []
    try:
        _wait_for(lambda: _children(cli.pid), "the CLI started no probe child")
        children = _children(cli.pid)
        os.kill(cli.pid, how)
        cli.wait(timeout=BOUND_S)
        _wait_for(lambda: not any(_alive(pid, started) for pid, started in children),
                  f"the probe child outlived the CLI killed by {how.name}")
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
        for pid, started in children:  # never leave a runaway behind, even when the test fails
            if _alive(pid, started):
                os.kill(pid, signal.SIGKILL)


def _limits(pid: int) -> dict[str, str]:
    """The soft limits of a running process, by name, from /proc/PID/limits."""
    rows = Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]
    return {row[:26].strip(): row[26:47].strip() for row in rows}


@linux_only
def test_the_probe_child_has_its_own_cpu_deadline_and_a_fixed_memory_cap(save):
    """The child stops on its own (RLIMIT_CPU) and its address space is capped at a constant, however large
    the file: 40 MB of unused weights do not raise the cap."""
    cli = _start_cli(save(endless_loop(padding_bytes=40 * 2**20)))
    try:
        _wait_for(lambda: _children(cli.pid), "the CLI started no probe child")
        [(child, _)] = _children(cli.pid)
        # Until its bootstrap runs, the child shows whatever soft limit it inherited (onnx-lint caps its own
        # engines' address space for a while): wait for its own cap, which is never the file's size.
        _wait_for(lambda: _limits(child)["Max address space"] == str(3 * 2**30), "the child set no 3 GiB cap")
        # The child is kept warm (ONNX Runtime's load check started it, the probe runs in it): each request
        # sets its own soft limit as it starts, the CPU the child has used (a few seconds) plus its budget.
        _wait_for(lambda: int(_limits(child)["Max cpu time"]) <= 60 + sandbox.CPU_GRACE_S + 5,
                  "the probe's request set no CPU deadline of its own")
        assert sandbox.MEMORY_CAP_BYTES == 3 * 2**30
        assert sandbox.CHILD_MARK in Path(f"/proc/{child}/cmdline").read_bytes().decode()
    finally:
        os.killpg(cli.pid, signal.SIGKILL)
        cli.wait()


def test_a_run_that_asks_for_more_than_the_cap_fails_inside_it(cli, save):
    """The cap is fixed: 3.36 GB for a 166-byte model is refused (the old cap, 4 GiB + 4x the file, let it
    peak at 3.4 GB), and the note says why."""
    diags = cli("check", str(save(tile_bomb())), "--output-format", "json").json()
    [note] = [d for d in diags if d["code"] == "OL007"]
    assert "onnxruntime run: the run ran out of its memory cap (3 GiB of address space)" in note["message"]


def test_a_model_too_large_for_the_memory_cap_is_refused_before_it_runs(save, monkeypatch):
    path = save(endless_loop(padding_bytes=64 * 2**10))
    monkeypatch.setattr(sandbox, "MAX_MODEL_BYTES", 32 * 2**10)
    result = probe(read_model(path), ["Y"])
    assert result.facts == {}
    assert result.reason is not None and "a run is capped at 3 GiB of memory" in result.reason


@linux_only
def test_a_child_past_its_time_is_killed_with_its_process_group():
    program = ("import subprocess, sys, time\n"
               "grandchild = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],\n"
               "                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
               "print(grandchild.pid, flush=True)\ntime.sleep(600)\n")
    done = sandbox.run_child(program, None, timeout=5, label="test")
    assert done.timed_out and done.returncode == -signal.SIGKILL
    grandchild = int(done.stdout.split()[0])
    _wait_for(lambda: (_stat(grandchild) or ("Z",))[0] == "Z", "the grandchild outlived the timeout")


def test_a_request_of_megabytes_travels_on_stdin():
    done = sandbox.run_child("import sys; sys.stdout.write(str(len(request['name'])) + ' ' + str(len(payload)))",
                             {"name": "n" * 3_000_000}, b"\0" * 1000, timeout=60, label="test")
    assert done.returncode == 0 and done.stdout == b"3000000 1000"


@pytest.mark.parametrize("model", [
    pytest.param(lambda: long_names(output_name_chars=200_000), id="200KB-output-name"),
    pytest.param(lambda: long_names(inputs=1500, input_name_chars=150), id="1500-long-input-names"),
])
def test_the_probe_runs_models_whose_names_exceed_the_argument_limit(cli, save, model):
    path = save(model())
    run = cli("check", str(path), "--output-format", "json")
    assert "Argument list too long" not in run.err and "internal error" not in run.err
    [diag] = [d for d in run.json() if d["code"] == "OL001"]
    assert run.code == 1 and diag["engine"] == "onnxruntime run"
    assert cli("check", str(path), "--fix").code == 0
    assert len(onnx.load(path).graph.output[0].type.tensor_type.shape.dim) == 2


def _descendants_running_a_model() -> list[tuple[int, int]]:
    """(pid, start time) of our sandboxed children anywhere below this test process."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None and stat[0] != "Z":
            parents[int(entry)] = stat[1]
    found = []
    for pid in parents:
        ancestor = parents.get(pid)
        while ancestor not in (None, 0, 1, os.getpid()):
            ancestor = parents.get(ancestor)
        if ancestor == os.getpid():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            stat = _stat(pid)
            if sandbox.CHILD_MARK.encode() in cmdline and stat is not None:
                found.append((pid, stat[2]))
    return found


@pytest_lsp.fixture(config=SERVER)
async def server(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path, push_capabilities())
    yield
    await lsp_client.shutdown_session()


@linux_only
@pytest.mark.asyncio
async def test_closing_a_model_mid_probe_leaves_no_child(server, tmp_path):
    """didClose stops the lint by killing its worker; the probe child that worker started goes with it."""
    model = tmp_path / "endless.onnx"
    onnx.save(endless_loop(), model)
    open_binary(server, model)
    await until(lambda: bool(_descendants_running_a_model()), "the server started no probe child")
    children = _descendants_running_a_model()
    server.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri=model.as_uri())))
    try:
        await until(lambda: not any(_alive(pid, started) for pid, started in children),
                    "the probe child outlived its killed worker", timeout=BOUND_S)
    finally:
        for pid, started in children:
            if _alive(pid, started):
                os.kill(pid, signal.SIGKILL)


@linux_only
def test_warm_children_keep_each_request_bounded_and_replace_a_spent_one():
    """Within ``kept_warm`` one child answers many requests (no new interpreter each), yet each request has a
    CPU deadline of its own, a runaway is stopped at its budget, and a crash or a timeout retires the child; a
    native write to file descriptor 1 cannot corrupt an answer; at the block's end no warm child is left."""
    from onnx_lint.engines.warm_children import kept_warm

    pid = "import os, sys; sys.stdout.write(str(os.getpid()))"
    with kept_warm():
        first = sandbox.run_child(pid, None, timeout=10, label="test")
        again = sandbox.run_child(pid + "; os.write(1, b'noise')", None, timeout=10, label="test")
        assert first.returncode == again.returncode == 0 and first.stdout == again.stdout
        refused = sandbox.run_child("import sys; sys.stdout.write('no'); sys.exit(3)", None, timeout=10, label="test")
        assert (refused.returncode, refused.stdout) == (3, b"no")
        assert sandbox.run_child(pid, None, timeout=10, label="test").stdout == first.stdout  # kept after exit 3
        deadline = sandbox.run_child(
            "import resource, sys; used = resource.getrusage(resource.RUSAGE_SELF); "
            "sys.stdout.write(f'{resource.getrlimit(resource.RLIMIT_CPU)[0] - used.ru_utime - used.ru_stime}')",
            None, timeout=10, label="test")
        assert 10 + sandbox.CPU_GRACE_S - 1 <= float(deadline.stdout) <= 10 + sandbox.CPU_GRACE_S + 2
        runaway = sandbox.run_child("while True: pass", None, timeout=2, label="test")
        assert runaway.timed_out
        crashed = sandbox.run_child("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", None, timeout=10,
                                    label="test")
        assert crashed.returncode == -signal.SIGSEGV
        fresh = sandbox.run_child(pid, None, timeout=10, label="test")
        assert fresh.returncode == 0 and fresh.stdout != first.stdout
        children = _descendants_running_a_model()
        assert [p for p, _ in children] == [int(fresh.stdout)]
    _wait_for(lambda: not _descendants_running_a_model(), "a warm child outlived kept_warm")
