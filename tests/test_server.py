"""The language server, driven over stdio by pytest-lsp's real LSP client."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
import pytest_lsp
from lsp_support import (
    SERVER,
    WAIT_S,
    code_actions,
    diagnostics_for,
    execute,
    holds_for,
    next_notification,
    open_binary,
    pull,
    pull_capabilities,
    push_capabilities,
    round_trip,
    start,
    until,
)
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

import onnx_lint
from examples import defects

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.asyncio


def _save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, path)
    return path


def _view_uri(path: Path) -> str:
    return "onnx-lint://" + str(path) + ".txt"


@pytest.fixture(scope="session")
def big_model(tmp_path_factory) -> Path:
    """A 200k-node weakly-typed chain: linting it keeps a worker busy for a second or more."""
    sys.path.insert(0, str(REPO))
    from benchmarks.models import mlp_chain, weakly_typed

    return _save(weakly_typed(mlp_chain(200_000)), tmp_path_factory.mktemp("big") / "big.onnx")


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    lsp_client.registrations = await start(lsp_client, tmp_path, push_capabilities())
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def polling_client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path, push_capabilities(watch=False))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def pull_client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path, pull_capabilities())
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def configured_client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path, push_capabilities(), options={"settings": {"ignore": ["OL001"]}})
    yield
    await lsp_client.shutdown_session()


# -- diagnostics ----------------------------------------------------------------------------------
async def test_did_open_reads_the_file_from_disk_and_publishes_rule_diagnostics(client, tmp_path):
    model = _save(defects.stale_rank0_output(), tmp_path / "stale.onnx")
    open_binary(client, model)
    [d] = await diagnostics_for(client, model.as_uri())
    assert d.code == "OL001" and d.source == "onnx-lint" and d.severity == lsp.DiagnosticSeverity.Error
    assert d.message.startswith("graph output 'Y' is declared as a scalar")  # the problem first
    assert d.message.endswith("(at graph/output[0] 'Y')")
    # The link lands on the rule's own page of the docs site, generated as docs/rules/OL001.md.
    assert d.code_description.href == "https://onnx-lint.github.io/onnx-lint/rules/OL001/"
    assert (REPO / "docs" / "rules" / "OL001.md").read_text().startswith("# OL001: stale-rank-zero-output\n")
    assert d.data["key"] == ["OL001", "graph/output[0]", "Y"] and d.data["fixable"] is True
    # Each number the fix writes carries its proof: ONNX's inference derived it for every size.
    proven = {"engine": "onnx", "sizes": "every size (derived with the dynamic input dims as symbols)"}
    assert d.data["edits"] == [{"edit": "set_type", "graph": "graph", "kind": "output", "tensor": "Y",
                                "elem_type": None, "dims": [3, 5], "proofs": [proven, proven]}]


async def test_unreadable_files_give_one_error_each_and_the_server_keeps_answering(client, tmp_path):
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(os.urandom(4096))
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    for path in (garbage, empty):
        open_binary(client, path)
        [d] = await diagnostics_for(client, path.as_uri())
        assert d.code == "OL000" and d.severity == lsp.DiagnosticSeverity.Error
    assert "empty" in client.diagnostics[empty.as_uri()][0].message
    healthy = _save(defects.healthy_matmul(), tmp_path / "healthy.onnx")
    open_binary(client, healthy)
    assert await diagnostics_for(client, healthy.as_uri()) == []


async def test_closing_a_model_clears_its_diagnostics(client, tmp_path):
    model = _save(defects.stale_rank0_output(), tmp_path / "stale.onnx")
    open_binary(client, model)
    await diagnostics_for(client, model.as_uri(), bool)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(model.as_uri())))
    assert await diagnostics_for(client, model.as_uri(), lambda d: not d) == []


# -- code actions and fixes ---------------------------------------------------------------------
async def test_one_quick_fix_per_fixable_diagnostic_then_fix_all(client, tmp_path):
    model = _save(defects.weakly_typed_mlp(), tmp_path / "weak.onnx")
    open_binary(client, model)
    diagnostics = await diagnostics_for(client, model.as_uri(), bool)
    assert sorted(d.code for d in diagnostics) == ["OL001", "OL003"]
    actions = await code_actions(client, model.as_uri(), diagnostics=diagnostics)
    quick = [a for a in actions if a.kind == lsp.CodeActionKind.QuickFix]
    assert len(quick) == 2 and all(a.command.command == "onnx-lint.fix" and a.diagnostics for a in quick)
    [fix_all] = [a for a in actions if a.kind == "source.fixAll.onnx-lint"]
    assert fix_all.command.command == "onnx-lint.fixAll"
    assert [a.kind for a in await code_actions(client, model.as_uri(), only=["source.fixAll"])] == \
        ["source.fixAll.onnx-lint"]

    # One quick fix repairs its own finding only.
    [ol001] = [a for a in quick if a.diagnostics[0].code == "OL001"]
    client.diagnostics.pop(model.as_uri())
    result = await execute(client, ol001.command.command, *ol001.command.arguments)
    assert result["written"] is True and result["fixed"] == 1
    remaining = await diagnostics_for(client, model.as_uri())
    assert [d.code for d in remaining] == ["OL003"]
    assert onnx.load(model).graph.output[0].type.tensor_type.shape.dim[1].dim_value == 8

    client.diagnostics.pop(model.as_uri())
    result = await execute(client, fix_all.command.command, *fix_all.command.arguments)
    assert result["written"] is True and result["remaining"] == 0
    assert await diagnostics_for(client, model.as_uri()) == []
    onnx.checker.check_model(str(model), full_check=True)


async def test_a_quick_fix_is_titled_with_what_it_does_as_the_cli_says_it(client, tmp_path, cli):
    """The quick fix's title is the rule's fix title (ruff's ``Ruff (F401): Remove unused import``)."""
    model = _save(defects.weakly_typed_mlp(), tmp_path / "weak.onnx")
    open_binary(client, model)
    diagnostics = await diagnostics_for(client, model.as_uri(), bool)
    actions = await code_actions(client, model.as_uri(), diagnostics=diagnostics)
    titles = sorted(a.title for a in actions if a.kind == lsp.CodeActionKind.QuickFix)
    assert titles == ["onnx-lint (OL001): Declare the computed shape [batch, 8] on output 'Y'",
                      "onnx-lint (OL003): Declare 'activated' as float, 'projected' as float"]
    from_cli = cli("check", str(model), "--output-format", "json", "--no-cache").json()
    assert titles == sorted(f"onnx-lint ({d['code']}): {d['fix']['title']}" for d in from_cli)


async def test_fix_all_on_a_healthy_model_writes_nothing(client, tmp_path):
    model = _save(defects.renamed_batch(), tmp_path / "healthy.onnx")
    before = model.read_bytes()
    open_binary(client, model)
    assert await diagnostics_for(client, model.as_uri()) == []
    assert await code_actions(client, model.as_uri()) == []
    result = await execute(client, "onnx-lint.fixAll", model.as_uri())
    assert result["written"] is False and model.read_bytes() == before


async def test_a_fix_that_cannot_be_proven_is_an_error_and_writes_nothing(client, tmp_path):
    model = tmp_path / "garbage.onnx"
    model.write_bytes(b"\x08\x07garbage")
    before = model.read_bytes()
    with pytest.raises(Exception, match="cannot be fixed"):
        await execute(client, "onnx-lint.fixAll", model.as_uri())
    assert model.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["garbage.onnx"]


# -- the textual view -------------------------------------------------------------------------------
async def test_text_view_puts_diagnostics_on_real_lines_with_fixes_and_hover(client, tmp_path):
    model = _save(defects.if_branch_stale(), tmp_path / "branch.onnx")
    shown = await execute(client, "onnx-lint.showModel", model.as_uri())
    assert shown["uri"] == _view_uri(model)
    lines = shown["text"].split("\n")
    [d] = shown["diagnostics"]
    start, end = d["range"]["start"], d["range"]["end"]
    assert lines[start["line"]][start["character"]:end["character"]] == "then_out"
    assert "then_branch: graph = then_branch ()" in lines[start["line"]]

    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=shown["uri"], language_id="onnx-text", version=1, text=shown["text"])))
    [published] = await diagnostics_for(client, shown["uri"])
    assert published.range.start.line == start["line"] and published.code == "OL001"
    actions = await code_actions(client, shown["uri"], start["line"], start["character"] + 1)
    [action, fix_all] = [a for a in actions if a.kind != "quickfix.onnx-lint.rule"]
    assert action.command.arguments[0] == model.as_uri() and fix_all.kind == "source.fixAll.onnx-lint"
    assert {a.title for a in actions if a.kind == "quickfix.onnx-lint.rule"} == {
        "Ignore OL001 for this file", "Show documentation for OL001"}
    hover = await asyncio.wait_for(client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(shown["uri"]), lsp.Position(start["line"], start["character"]))), WAIT_S)
    assert "## What it does" in hover.contents.value or "What it does" in hover.contents.value
    assert "[OL001 on the docs site](https://onnx-lint.github.io/onnx-lint/rules/OL001/)" in hover.contents.value

    await execute(client, action.command.command, *action.command.arguments)
    assert await diagnostics_for(client, shown["uri"], lambda d: not d) == []


async def test_describe_model_gives_the_model_view_its_data(client, tmp_path):
    model = _save(defects.weakly_typed_mlp(), tmp_path / "weak.onnx")
    described = await execute(client, "onnx-lint.describeModel", model.as_uri())
    summary = described["summary"]
    assert summary["producer"] == "onnx-lint-examples" and summary["irVersion"] == 8
    assert {"domain": "com.microsoft", "version": 1} in summary["opsets"] and summary["nodes"] == 4
    assert summary["inputs"] == [{"name": "X", "declared": "float[batch, 16]"}]
    assert summary["outputs"] == [{"name": "Y", "declared": "float", "derived": "float[batch, 8]",
                                   "engine": "onnxruntime-symbolic"}]  # onnx stops at the custom Gelu
    assert sorted(d["code"] for d in described["diagnostics"]) == ["OL001", "OL003"]
    assert summary["provenance"] is None  # not a model onnx-lint quantize wrote
    await execute(client, "onnx-lint.fixAll", model.as_uri())
    after = await execute(client, "onnx-lint.describeModel", model.as_uri())
    assert after["summary"]["outputs"][0]["declared"] == "float[batch, 8]" and after["diagnostics"] == []


async def test_compare_models_finds_the_original_and_what_the_fix_changed(client, tmp_path):
    from pygls.exceptions import JsonRpcException

    original = _save(defects.weakly_typed_mlp(), tmp_path / "weak.onnx")
    fixed = _save(defects.weakly_typed_mlp(), tmp_path / "weak.fixed.onnx")
    await execute(client, "onnx-lint.fixAll", fixed.as_uri())
    os.utime(original, (time.time() - 60, time.time() - 60))  # the fix wrote its twin after reading the original
    seen_from_twin = await execute(client, "onnx-lint.compareModels", fixed.as_uri(), original.as_uri())
    assert seen_from_twin["viewed"] == "after" and seen_from_twin["why"] == "weak.fixed.onnx is the newer file"
    changed = [(d["tensor"], d["before"], d["after"])
               for d in seen_from_twin["declarations"] if d["change"] == "changed"]
    assert changed == [("Y", "float", "float[batch, 8]")]
    assert seen_from_twin["nodes"] == [] and seen_from_twin["counts"]["declarations.changed"] == 1
    seen_from_original = await execute(client, "onnx-lint.compareModels", original.as_uri(), fixed.as_uri())
    assert seen_from_original["viewed"] == "before"
    assert seen_from_original["declarations"] == seen_from_twin["declarations"]
    with pytest.raises(JsonRpcException, match="not with itself"):
        await execute(client, "onnx-lint.compareModels", original.as_uri(), original.as_uri())
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    with pytest.raises(JsonRpcException) as failed:
        await execute(client, "onnx-lint.compareModels", original.as_uri(), broken.as_uri())
    assert failed.value.code == lsp.LSPErrorCodes.RequestFailed
    assert "weak.onnx: cannot compare it with broken.onnx" in str(failed.value) and "Traceback" not in str(failed.value)


async def test_finding_graph_draws_a_diagnostics_neighbourhood_from_its_data(client, tmp_path):
    model = _save(defects.weakly_typed_mlp(), tmp_path / "weak.onnx")
    described = await execute(client, "onnx-lint.describeModel", model.as_uri())
    ol001 = next(d for d in described["diagnostics"] if d["code"] == "OL001")
    drawing = await execute(client, "onnx-lint.findingGraph", model.as_uri(), ol001["data"]["location"])
    [stale] = [e for e in drawing["edges"] if e["stale"]]
    assert (stale["tensor"], stale["declared"], stale["derived"]) == ("Y", "float", "float[batch, 8]")
    assert stale["to"] == "output:Y" and stale["engine"] == "onnxruntime-symbolic"
    with pytest.raises(Exception, match="cannot draw this finding"):
        await execute(client, "onnx-lint.findingGraph", model.as_uri(), {"path": "graph/node[7]/body/output[0]"})


async def test_finding_graphs_of_a_200k_node_model_are_bounded_and_quick_once_indexed(client, big_model):
    described = await execute(client, "onnx-lint.describeModel", big_model.as_uri())
    locations = [d["data"]["location"] for d in described["diagnostics"][:5]]
    for location in locations[:3]:  # each worker indexes the graph once (the pool hands jobs round robin)
        await execute(client, "onnx-lint.findingGraph", big_model.as_uri(), location)
    started = time.perf_counter()
    drawings = [await execute(client, "onnx-lint.findingGraph", big_model.as_uri(), loc) for loc in locations[3:]]
    assert (time.perf_counter() - started) / len(drawings) < 0.5
    for drawing in drawings:
        assert 1 <= sum(n["kind"] == "node" for n in drawing["nodes"]) <= 24
        assert any(e["stale"] for e in drawing["edges"])


async def test_text_view_of_an_unreadable_model_is_a_clear_error(client, tmp_path):
    model = tmp_path / "bad.onnx"
    model.write_bytes(b"not a model")
    with pytest.raises(Exception, match="no textual view"):
        await execute(client, "onnx-lint.showModel", model.as_uri())


# -- settings and configuration files -----------------------------------------------------------------
async def test_initialization_options_and_did_change_configuration(configured_client, tmp_path):
    client = configured_client
    model = _save(defects.stale_rank0_output(), tmp_path / "stale.onnx")
    open_binary(client, model)
    assert await diagnostics_for(client, model.as_uri()) == []
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"onnxLint": {"ignore": []}}))
    [d] = await diagnostics_for(client, model.as_uri(), bool)
    assert d.code == "OL001"


async def test_settings_requested_from_the_client_when_the_notification_has_none(client, tmp_path):
    client.set_configuration({"select": ["OL005"]}, section="onnxLint")
    model = _save(defects.stale_rank0_output(), tmp_path / "stale.onnx")
    open_binary(client, model)
    await diagnostics_for(client, model.as_uri(), bool)
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    assert await diagnostics_for(client, model.as_uri(), lambda d: not d) == []


async def test_configuration_file_of_the_workspace_folder_is_honoured(client, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.onnx-lint]\nignore = ["OL001"]\n')
    model = _save(defects.stale_rank0_output(), tmp_path / "stale.onnx")
    open_binary(client, model)
    assert await diagnostics_for(client, model.as_uri()) == []

    (tmp_path / "pyproject.toml").write_text('[tool.onnx-lint]\nignore = "OL001"\n')
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
        lsp.FileEvent(uri=(tmp_path / "pyproject.toml").as_uri(), type=lsp.FileChangeType.Changed)]))
    [d] = await diagnostics_for(client, model.as_uri(), bool)
    assert d.severity == lsp.DiagnosticSeverity.Error and "pyproject.toml" in d.message


async def test_configuration_is_read_once_and_again_after_a_change_or_save(client, tmp_path):
    """The settings index: a re-lint reuses the resolved configuration file; a reported change or a
    didSave of it resolves it again, and the next diagnostics follow the file."""
    config = tmp_path / "onnx-lint.toml"
    config.write_text('ignore = ["OL001"]\n')
    model = _save(defects.stale_rank0_output(), tmp_path / "stale.onnx")
    open_binary(client, model)
    assert await diagnostics_for(client, model.as_uri()) == []

    def model_changed() -> None:
        client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
            lsp.FileEvent(uri=model.as_uri(), type=lsp.FileChangeType.Changed)]))

    config.write_text("")  # nobody tells the server: a lint of the model keeps the configuration it resolved
    client.diagnostics.pop(model.as_uri())
    model_changed()
    assert await diagnostics_for(client, model.as_uri()) == []

    client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(config.as_uri())))
    [d] = await diagnostics_for(client, model.as_uri(), bool)
    assert d.code == "OL001"

    config.write_text('ignore = ["OL001"]\n')
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
        lsp.FileEvent(uri=config.as_uri(), type=lsp.FileChangeType.Changed)]))
    assert await diagnostics_for(client, model.as_uri(), lambda d: not d) == []

    config.write_text("")  # new editor settings resolve the configuration files again too
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"onnxLint": {}}))
    [d] = await diagnostics_for(client, model.as_uri(), bool)
    assert d.code == "OL001"


async def test_the_configured_inference_budget_applies_in_the_editor(client, tmp_path):
    """``inference-budget`` from the configuration file bounds the slow engines in the server too: the
    stopped engine's note is a diagnostic, and nothing it would have proven is claimed."""
    from test_budget import two_outputs

    (tmp_path / "onnx-lint.toml").write_text('inference-budget = 0.001\nignore = ["OL003"]\n')
    model = _save(two_outputs(), tmp_path / "two.onnx")
    open_binary(client, model)
    found = await diagnostics_for(client, model.as_uri(), bool)
    codes = sorted((d.code, d.severity) for d in found)
    assert ("OL008", lsp.DiagnosticSeverity.Information) in codes
    assert [d.message.split("'")[1] for d in found if d.code == "OL001"] == ["Z"]


async def test_clients_that_cannot_watch_files_still_see_configuration_changes(polling_client, tmp_path):
    client = polling_client
    config = tmp_path / "onnx-lint.toml"
    config.write_text('ignore = ["OL001"]\n')
    model = _save(defects.stale_rank0_output(), tmp_path / "stale.onnx")
    open_binary(client, model)
    assert await diagnostics_for(client, model.as_uri()) == []
    config.write_text('ignore = ["OL005"]\n')
    [d] = await diagnostics_for(client, model.as_uri(), bool)
    assert d.code == "OL001"


# -- changes on disk ----------------------------------------------------------------------------------
async def test_watched_model_change_on_disk_is_linted_again(client, tmp_path):
    registered = await client.registrations.first()
    patterns = [w["globPattern"] for reg in registered.registrations for w in reg.register_options["watchers"]]
    assert "**/*.onnx" in patterns
    model = _save(defects.stale_rank0_output(), tmp_path / "model.onnx")
    open_binary(client, model)
    await diagnostics_for(client, model.as_uri(), bool)
    _save(defects.healthy_matmul(), model)
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
        lsp.FileEvent(uri=model.as_uri(), type=lsp.FileChangeType.Changed)]))
    assert await diagnostics_for(client, model.as_uri(), lambda d: not d) == []


async def test_clients_that_cannot_watch_files_still_see_changes(polling_client, tmp_path):
    client = polling_client
    model = _save(defects.healthy_matmul(), tmp_path / "model.onnx")
    open_binary(client, model)
    assert await diagnostics_for(client, model.as_uri()) == []
    _save(defects.stale_rank0_output(), model)
    [d] = await diagnostics_for(client, model.as_uri(), bool)
    assert d.code == "OL001"


# -- pull diagnostics (VS Code) ------------------------------------------------------------------------
async def test_pull_diagnostics_for_a_file_never_opened_and_no_pushes(pull_client, tmp_path):
    client = pull_client
    model = _save(defects.weakly_typed_mlp(), tmp_path / "weak.onnx")
    report = await pull(client, model.as_uri())
    assert report.kind == "full" and sorted(d.code for d in report.items) == ["OL001", "OL003"]
    again = await pull(client, model.as_uri(), previous=report.result_id)
    assert again.kind == "unchanged" and again.result_id == report.result_id

    refreshes = client.diagnostic_refresh_count
    result = await execute(client, "onnx-lint.fixAll", model.as_uri())
    assert result["written"] is True
    assert client.diagnostic_refresh_count > refreshes
    after = await pull(client, model.as_uri(), previous=report.result_id)
    assert after.kind == "full" and list(after.items) == []
    assert client.diagnostics == {}  # a pulling client is never pushed to: nothing shows twice


# -- responsiveness --------------------------------------------------------------------------------------
async def test_a_busy_lint_blocks_neither_hover_nor_code_actions_nor_shutdown(client, tmp_path, big_model):
    small = _save(defects.stale_rank0_output(), tmp_path / "small.onnx")
    open_binary(client, small)
    await diagnostics_for(client, small.as_uri(), bool)
    open_binary(client, big_model)
    hover = await asyncio.wait_for(client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(small.as_uri()), lsp.Position(0, 0))), WAIT_S)
    actions = await code_actions(client, small.as_uri())
    assert "OL001" in hover.contents.value and len([a for a in actions if a.kind != "quickfix.onnx-lint.rule"]) == 2
    assert big_model.as_uri() not in client.diagnostics  # answered while the big model was still being linted
    big = await diagnostics_for(client, big_model.as_uri(), bool)
    assert {d.code for d in big} == {"OL001", "OL005"}


async def test_a_long_lint_of_one_model_does_not_hold_up_another(client, tmp_path, big_model):
    """Even on a two-core machine: the small model's diagnostics arrive while the big one is still linted."""
    warm = _save(defects.healthy_matmul(), tmp_path / "warm.onnx")
    open_binary(client, warm)  # starts the workers
    await diagnostics_for(client, warm.as_uri())
    server_pid = client._server.pid
    workers = Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
    idle = _cpu_ticks(workers)
    open_binary(client, big_model)
    deadline = time.monotonic() + WAIT_S
    while _cpu_ticks(workers) < idle + 50 and time.monotonic() < deadline:  # a worker is busy with it
        await asyncio.sleep(0.05)
    assert big_model.as_uri() not in client.diagnostics, "the big model was linted before the test could start"
    small = _save(defects.stale_rank0_output(), tmp_path / "small.onnx")
    open_binary(client, small)
    [d] = await diagnostics_for(client, small.as_uri(), bool)
    assert d.code == "OL001" and big_model.as_uri() not in client.diagnostics
    assert {d.code for d in await diagnostics_for(client, big_model.as_uri(), bool)} == {"OL001", "OL005"}


async def test_a_new_change_cancels_the_stale_lint(client, tmp_path, big_model):
    model = tmp_path / "changing.onnx"
    model.write_bytes(big_model.read_bytes())
    open_binary(client, model)
    await round_trip(client)  # the server has started linting the big content
    _save(defects.healthy_matmul(), model)
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
        lsp.FileEvent(uri=model.as_uri(), type=lsp.FileChangeType.Changed)]))
    # The first (and only) diagnostics published are those of the new content.
    assert await diagnostics_for(client, model.as_uri()) == []
    await holds_for(client, [model.as_uri()], lambda d: d == [], seconds=1.0)  # the stale lint never publishes


async def test_cached_reopen_and_a_crashed_worker(client, tmp_path, big_model):
    model = _save(defects.stale_rank0_output(), tmp_path / "stale.onnx")
    open_binary(client, model)
    await diagnostics_for(client, model.as_uri(), bool)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(model.as_uri())))
    await diagnostics_for(client, model.as_uri(), lambda d: not d)
    open_binary(client, model)
    [d] = await diagnostics_for(client, model.as_uri(), bool)
    assert d.code == "OL001"

    # A worker that dies mid-lint (as on a crash in onnx's C++ code) is one error, then a fresh worker.
    crash = tmp_path / "crash.onnx"
    crash.write_bytes(big_model.read_bytes())
    server_pid = client._server.pid
    children = Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
    # Wait for the workers to be idle first: work left from the reopen would otherwise count as the
    # crash lint's, and the workers would be killed before that job reached one.
    before = await _settled(children)
    open_binary(client, crash)
    await until(lambda: _cpu_ticks(children) > before + 5, "a worker to be busy linting crash.onnx")
    for pid in children:
        os.kill(int(pid), signal.SIGKILL)
    [d] = await diagnostics_for(client, crash.as_uri(), bool)
    assert d.code == "OL000" and "crashed" in d.message and "SIGKILL" in d.message
    healthy = _save(defects.healthy_matmul(), tmp_path / "healthy.onnx")
    open_binary(client, healthy)
    assert await diagnostics_for(client, healthy.as_uri()) == []


async def _settled(pids: list[str], quiet_s: float = 0.3, timeout: float = 30.0) -> int:
    """The processes' CPU ticks once they stopped rising for ``quiet_s`` seconds (they are idle)."""
    deadline = time.monotonic() + timeout
    ticks = _cpu_ticks(pids)
    while time.monotonic() < deadline:
        await asyncio.sleep(quiet_s)
        now = _cpu_ticks(pids)
        if now == ticks:
            return now
        ticks = now
    raise AssertionError(f"the workers stayed busy for {timeout:g} s")


def _cpu_ticks(pids: list[str]) -> int:
    """User and system CPU time of processes, in clock ticks (a worker's rises only while it runs a job)."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total


# -- quantize ----------------------------------------------------------------------------------------------
def _calibration(path: Path) -> Path:
    rng = np.random.default_rng(1)
    np.savez(path, X=rng.standard_normal((8, 16)).astype(np.float32))
    return path


async def test_quantize_command_reports_progress_output_and_accuracy(client, tmp_path):
    pytest.importorskip("onnxruntime")
    model = _save(defects.weakly_typed_mlp(), tmp_path / "seed.onnx")
    before = model.read_bytes()
    result = await execute(client, "onnx-lint.quantize", model.as_uri(),
                           {"calibrationData": str(_calibration(tmp_path / "calib.npz"))}, timeout=300)
    output = tmp_path / "seed.int8-fp16.onnx"
    assert result["output"] == str(output) and output.is_file()
    assert "cosine similarity" in result["summary"] and result["report"]["outputs"][0]["cosine_similarity"] > 0.9
    assert model.read_bytes() == before
    [reports] = client.progress_reports.values()
    kinds = [r.kind for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds
    assert reports[0].cancellable is True
    assert any(m.message.startswith("Quantized model written to") for m in client.messages)
    # The written model's view: where it came from, and no note about the Q/DQ onnx-lint itself just wrote.
    described = await execute(client, "onnx-lint.describeModel", output.as_uri())
    provenance = described["summary"]["provenance"]
    assert provenance.startswith(f"Quantized by onnx-lint {onnx_lint.__version__} for ONNX Runtime from seed.onnx, ")
    assert "calibration, INT8 (asymmetric) activations, INT8 (symmetric, per-channel) weights" in provenance
    assert not {d["code"] for d in described["diagnostics"]} & {"OL202", "OL205"}, described["diagnostics"]


async def test_quantize_nothing_int8_quantizable_is_the_cli_policy(client, tmp_path):
    """Same policy as the CLI: an FP16-only model is written, with exitCode 3 and a warning message."""
    pytest.importorskip("onnxruntime")
    model = _save(defects.stale_element_type(), tmp_path / "plain.onnx")
    result = await execute(client, "onnx-lint.quantize", model.as_uri(), {}, timeout=300)
    assert result["fp16Only"] is True and result["exitCode"] == 3 and result["written"] is True
    assert Path(result["output"]).is_file()
    assert any("FP16-only model" in w for w in result["warnings"])
    assert any(m.message.startswith("nothing could be quantized to INT8") for m in client.messages)


async def test_quantize_output_that_becomes_infinite_fails_like_the_cli(client, tmp_path):
    """The CLI's exit 2 is a failed request here, with the same message; nothing is written."""
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto as T
    from onnx import helper as h

    weights = onnx.numpy_helper.from_array(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32), "W")
    bias = onnx.numpy_helper.from_array(np.full(3, -1e6, np.float32), "B")
    graph = h.make_graph([h.make_node("Gemm", ["X", "W", "B"], ["Y"], name="fc")], "bias",
                         [h.make_tensor_value_info("X", T.FLOAT, ["n", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["n", 3])], [weights, bias])
    model = _save(h.make_model(graph, ir_version=10, opset_imports=[h.make_opsetid("", 21)]), tmp_path / "b.onnx")
    with pytest.raises(Exception, match="output 'Y' .* inf/NaN"):
        await execute(client, "onnx-lint.quantize", model.as_uri(), {"output": "q.onnx"}, timeout=300)
    assert not (tmp_path / "q.onnx").exists()
    assert any("validation failed" in m.message for m in client.messages)


async def test_quantize_can_be_cancelled_and_writes_nothing(client, tmp_path):
    pytest.importorskip("onnxruntime")
    model = _save(defects.weakly_typed_mlp(), tmp_path / "seed.onnx")
    task = asyncio.ensure_future(execute(client, "onnx-lint.quantize", model.as_uri(),
                                         {"output": "out.onnx", "samples": 64}, timeout=300))
    while not client.progress_reports or not next(iter(client.progress_reports.values())):
        assert await next_notification(client, lsp.PROGRESS, WAIT_S), "no progress began"
    [token] = client.progress_reports
    client.window_work_done_progress_cancel(lsp.WorkDoneProgressCancelParams(token=token))
    with pytest.raises(Exception, match="cancelled"):
        await task
    assert not (tmp_path / "out.onnx").exists()
    assert client.progress_reports[token][-1].kind == "end"


# -- protocol errors --------------------------------------------------------------------------------------
async def test_bad_command_arguments_and_failed_requests_carry_the_lsp_error_codes(client, tmp_path):
    from pygls.exceptions import JsonRpcException

    with pytest.raises(JsonRpcException) as bad:
        await execute(client, "onnx-lint.fix", (tmp_path / "m.onnx").as_uri())  # no data.key
    assert bad.value.code == lsp.ErrorCodes.InvalidParams and "data.key" in str(bad.value)
    unreadable = tmp_path / "bad.onnx"
    unreadable.write_bytes(b"not a model")
    with pytest.raises(JsonRpcException) as failed:
        await execute(client, "onnx-lint.showModel", unreadable.as_uri())
    assert failed.value.code == lsp.LSPErrorCodes.RequestFailed
