"""The server under bad input and under load (issue 6), driven by pytest-lsp's real client."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import onnx
import pytest
import pytest_lsp
from corpus import CASES
from lsp_support import SERVER, WAIT_S, diagnostics_for, execute, holds_for, push_capabilities, start, until
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from examples import defects

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.asyncio
LOAD_MODELS = 200
WAVE = 25


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path, push_capabilities())
    yield
    if lsp_client._server is not None and lsp_client._server.returncode is None:
        await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=SERVER.server_command,
    server_env={**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO / "tests" / "aborting_runtime"), os.environ.get("PYTHONPATH", "")])}))
async def crashing_client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path, push_capabilities())
    yield
    if lsp_client._server is not None and lsp_client._server.returncode is None:
        await lsp_client.shutdown_session()


def _open(client: LanguageClient, path: Path, version: int = 1) -> None:
    """didOpen without reading the file here: a FIFO in the corpus would block the test itself."""
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=path.as_uri(), language_id="onnx", version=version, text="")))


def _close(client: LanguageClient, path: Path) -> None:
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(path.as_uri())))


# -- bad input ------------------------------------------------------------------------------------
async def test_every_corpus_file_gets_one_error_and_the_server_keeps_answering(client, tmp_path):
    paths = {}
    for case in CASES:
        folder = tmp_path / case.name
        folder.mkdir()
        paths[case.name] = case.build(folder)
    for path in paths.values():
        _open(client, path)
    for case in CASES:
        uri = paths[case.name].as_uri()
        [diag] = await diagnostics_for(client, uri, lambda d: len(d) > 0)
        assert diag.severity == lsp.DiagnosticSeverity.Error and diag.code == "OL000", (case.name, diag)
        assert case.problem in diag.message, (case.name, diag.message)
    healthy = tmp_path / "healthy.onnx"
    onnx.save(defects.healthy_matmul(), healthy)
    description = await execute(client, "onnx-lint.describeModel", healthy.as_uri())
    assert description["diagnostics"] == [] and description["summary"]["inputs"]


# -- load ---------------------------------------------------------------------------------------------
def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _running(pid: int) -> bool:
    """Alive and not a zombie (an exited process waiting to be reaped holds nothing)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _load_corpus(folder: Path) -> tuple[list[Path], dict[Path, str]]:
    """200 distinct models: mostly small defects, one in eight broken, one in twenty-five large.

    Returns the paths and, for each, the code its first lint must show.
    """
    sys.path.insert(0, str(REPO))
    from benchmarks.models import mlp_chain, weakly_typed

    broken = [c for c in CASES if c.name in {"empty", "random-bytes", "truncated", "cycle", "missing-external",
                                              "escaping-external", "duplicate-node-output", "future-opset"}]
    large = weakly_typed(mlp_chain(20_000))
    paths, expected = [], {}
    for i in range(LOAD_MODELS):
        if i % 8 == 3:
            sub = folder / f"broken{i}"
            sub.mkdir()
            path = broken[i % len(broken)].build(sub)
            expected[path] = "OL000"
        else:
            model = large if i % 25 == 1 else defects.stale_rank0_output()
            model.doc_string = f"model {i}"  # each file distinct, so none is answered from the cache
            path = folder / f"model{i}.onnx"
            onnx.save(model, path)
            expected[path] = "OL005" if model is large else "OL001"
        paths.append(path)
    return paths, expected


async def test_two_hundred_models_opened_changed_and_closed_with_bounded_memory(client, tmp_path):
    paths, expected = _load_corpus(tmp_path)
    server = client._server
    rss: list[float] = []
    workers: set[int] = set()
    requests = answered = 0
    for start_at in range(0, len(paths), WAVE):
        wave = paths[start_at:start_at + WAVE]
        for path in wave:
            _open(client, path)
        # Every open file gets its diagnostics, and requests are answered while lints run.
        pending = []
        for path in wave:
            position = lsp.Position(0, 0)
            pending.append(client.text_document_hover_async(lsp.HoverParams(
                lsp.TextDocumentIdentifier(path.as_uri()), position)))
            pending.append(client.text_document_code_action_async(lsp.CodeActionParams(
                lsp.TextDocumentIdentifier(path.as_uri()), lsp.Range(position, position),
                lsp.CodeActionContext(diagnostics=[]))))
        requests += len(pending)
        await asyncio.wait_for(asyncio.gather(*pending), WAIT_S)
        answered += len(pending)
        for path in wave:
            want = expected[path]
            await diagnostics_for(client, path.as_uri(), lambda d, want=want: any(x.code == want for x in d))
        # Change the small ones on disk (stale output -> stale element type) and tell the server twice over.
        changed = [p for p in wave if expected[p] == "OL001"]
        for path in changed:
            onnx.save(defects.stale_element_type(), path)
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=2),
                [lsp.TextDocumentContentChangeWholeDocument(text="")]))
        client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
            [lsp.FileEvent(uri=p.as_uri(), type=lsp.FileChangeType.Changed) for p in changed]))
        for path in changed:
            await diagnostics_for(client, path.as_uri(), lambda d: any(x.code == "OL006" for x in d))
        for path in wave:
            _close(client, path)
        for path in wave:
            await diagnostics_for(client, path.as_uri(), lambda d: d == [])
        workers.update(_children(server.pid))
        rss.append(_rss_mib(server.pid))
    assert answered == requests == 2 * LOAD_MODELS
    kept = {p.name: [d.code for d in client.diagnostics[p.as_uri()]] for p in paths if client.diagnostics[p.as_uri()]}
    assert kept == {}, "closed models kept their diagnostics"
    # Memory: the server's own footprint stops growing once its caches are warm.
    growth = rss[-1] - rss[1]
    assert growth < 64, f"server RSS grew {growth:.0f} MiB over {len(rss) - 2} waves: {rss}"
    assert len(workers) <= (os.cpu_count() or 1) + 8, f"{len(workers)} worker processes were started"
    # Open and close at once, as a quick peek does: nothing may be left published afterwards.
    for path in paths[:WAVE]:
        _open(client, path, version=3)
        _close(client, path)
    await execute(client, "onnx-lint.describeModel", paths[0].as_uri())
    # Nothing marks "no lint will publish any more", so watch every publication for a while.
    await holds_for(client, [p.as_uri() for p in paths[:WAVE]], lambda d: d == [], seconds=3)
    # A clean shutdown: the server exits 0 and takes every worker with it.
    await asyncio.wait_for(client.shutdown_session(), 60)
    assert server.returncode == 0
    await until(lambda: not any(_running(pid) for pid in workers), "every worker to end with the server", timeout=10)


# -- quantize: a runtime crash is an error, never the server's end ------------------------------------------
async def test_a_runtime_crash_while_quantizing_is_an_error_and_the_server_keeps_answering(
        crashing_client, tmp_path):
    pytest.importorskip("onnxruntime")
    model = tmp_path / "seed.onnx"
    onnx.save(defects.weakly_typed_mlp(), model)
    with pytest.raises(Exception, match="crash") as raised:
        await execute(crashing_client, "onnx-lint.quantize", model.as_uri(), {"output": "q.onnx"}, timeout=300)
    assert "SIGABRT" in str(raised.value)
    assert not (tmp_path / "q.onnx").exists()
    assert any(m.type == lsp.MessageType.Error and "SIGABRT" in m.message for m in crashing_client.messages)
    description = await execute(crashing_client, "onnx-lint.describeModel", model.as_uri())
    assert {d["code"] for d in description["diagnostics"]} >= {"OL001"}
