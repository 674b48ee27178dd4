"""'onnx-lint: Restart server' while a big model is linted ends with one running server and no traceback.

The extension restarts as ``vscode-extension/src/serverLifecycle.ts`` says: ``shutdown`` (answered
within its STOP_TIMEOUT_MS, or the process is killed), ``exit``, then a new server. Here pytest-lsp's
client does the same over stdio while the model view's requests for a 100,000-node model are in
flight: the old server answers in time, ends with every worker (none started again as its cancelled
jobs unwind), and the new one answers with the model's findings.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from pathlib import Path

import onnx
import pytest
from lsp_support import WAIT_S, execute, open_binary, pull_capabilities, until
from pygls.exceptions import JsonRpcException
from server_process import ServerProcess, running

from examples import defects
from onnx_lint.server import command_names as names

REPO = Path(__file__).resolve().parent.parent
STOP_TIMEOUT_S = int(re.search(r"STOP_TIMEOUT_MS = ([\d_]+);", (
    REPO / "vscode-extension" / "src" / "serverLifecycle.ts").read_text()).group(1).replace("_", "")) / 1000
REQUEST_CANCELLED = -32800


@pytest.fixture(scope="module")
def chain(tmp_path_factory) -> Path:
    """A 100,000-node weakly-typed chain (benchmarks/models.py): its lint keeps a worker busy for seconds."""
    sys.path.insert(0, str(REPO))
    from benchmarks.models import mlp_chain, weakly_typed

    path = tmp_path_factory.mktemp("chain") / "chain-100k.onnx"
    onnx.save(weakly_typed(mlp_chain(100_000)), path)
    return path


def _cpu_ticks(pids: set[int]) -> int:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime + stime
    return total


async def _answer_or_cancelled(request: asyncio.Future) -> str:
    """How a request in flight at the restart ended: answered, or cancelled (never an internal error)."""
    try:
        await asyncio.wait_for(request, WAIT_S)
    except JsonRpcException as exc:
        assert exc.code == REQUEST_CANCELLED, f"{exc.code}: {exc}"
        return "cancelled"
    return "answered"


@pytest.mark.asyncio
async def test_a_restart_during_a_lint_ends_with_one_server_and_no_traceback(chain, tmp_path):
    root = chain.parent
    small = tmp_path / "small.onnx"
    onnx.save(defects.stale_rank0_output(), small)
    first = await ServerProcess.start(root, pull_capabilities())
    second: ServerProcess | None = None
    requests: list[asyncio.Future] = []
    try:
        await execute(first.client, names.DESCRIBE_MODEL, small.as_uri())  # the workers are warm
        workers = first.workers()
        assert len(workers) == 2, workers
        idle = _cpu_ticks(workers)
        # The model view of a model just opened: the open starts its lint, the view asks for its findings and
        # for the whole graph.
        open_binary(first.client, chain)
        requests += [asyncio.ensure_future(execute(first.client, command, chain.as_uri(), timeout=300))
                     for command in (names.DESCRIBE_MODEL, names.MODEL_GRAPH)]
        await until(lambda: _cpu_ticks(workers) > idle + 50, "a worker busy with the 100k-node model")
        assert not any(r.done() for r in requests), "the lint ended before the restart could start"

        restart = time.monotonic()
        answered_in = await first.shutdown(timeout=STOP_TIMEOUT_S)
        # Stopped for good: every worker is gone, and the jobs cancelled by the shutdown start no new one.
        seen: set[int] = set(workers)
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            seen |= first.workers()
            await asyncio.sleep(0.02)
        assert first.workers() == set(), f"workers still running after shutdown: {first.workers()}"
        assert seen == workers, f"workers started during the shutdown: {sorted(seen - workers)}"
        ended = [await _answer_or_cancelled(r) for r in requests]
        assert await first.exit(timeout=10) == 0
        await until(lambda: not any(running(pid) for pid in seen), "the first server's workers to end", 10)

        second = await ServerProcess.start(root, pull_capabilities())
        started_in = time.monotonic() - restart
        open_binary(second.client, chain)
        described = await execute(second.client, names.DESCRIBE_MODEL, chain.as_uri(), timeout=300)
        linted_in = time.monotonic() - restart
        assert described["summary"]["nodes"] == 100_000
        assert {"OL001", "OL005"} <= {d["code"] for d in described["diagnostics"]}
        assert first.process.returncode == 0  # one server answers: the new one
        assert await second.shutdown() < STOP_TIMEOUT_S and await second.exit() == 0
        print(f"restart during the lint: shutdown answered in {answered_in:.2f} s, new server initialized "
              f"{started_in:.2f} s and its findings in {linted_in:.2f} s after the restart began; the requests in "
              f"flight: {ended}")
    finally:
        for request in requests:
            request.cancel()  # a test that failed midway leaves none pending
        await first.kill()
        if second is not None:
            await second.kill()
    assert first.tracebacks() == [], "".join(first.stderr)
    assert second.tracebacks() == [], "".join(second.stderr)
