"""An untrusted workspace gets a static lint only: no model is run, no file is written; the model view says so.

A workspace's own settings cannot grant trust: only the top-level ``workspaceTrusted`` of the payload
(what the extension sends from ``vscode.workspace.isTrusted``) can.
"""

from __future__ import annotations

import onnx
import pytest
import pytest_lsp
from hostile_models import long_names
from lsp_support import SERVER, code_actions, diagnostics_for, execute, open_binary, push_capabilities, start
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio
pytest.importorskip("onnxruntime")


@pytest_lsp.fixture(config=SERVER)
async def untrusted(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path, push_capabilities(), options={"workspaceTrusted": False, "settings": {}})
    yield
    await lsp_client.shutdown_session()


def _probed_model(tmp_path):
    """A model whose output shape only a run of the model can derive (an ``ai.onnx.ml`` op; declared rank 0)."""
    path = tmp_path / "probed.onnx"
    onnx.save(long_names(), path)
    return path


def _codes(diagnostics) -> list[str]:
    return sorted(str(d["code"] if isinstance(d, dict) else d.code) for d in diagnostics)


async def test_an_untrusted_workspace_runs_no_model_and_writes_nothing(untrusted, tmp_path):
    client = untrusted
    model = _probed_model(tmp_path)
    before = model.read_bytes()
    open_binary(client, model)
    [note] = await diagnostics_for(client, model.as_uri(), bool)
    assert note.code == "OL007" and "onnxruntime run: turned off" in note.message
    described = await execute(client, "onnx-lint.describeModel", model.as_uri())
    assert described["trusted"] is False and "this workspace is not trusted" in described["restricted"]
    assert await code_actions(client, model.as_uri()) == []
    for command, arguments in (("onnx-lint.fixAll", [model.as_uri()]),
                               ("onnx-lint.quantize", [model.as_uri(), {"output": str(tmp_path / "q.onnx")}])):
        with pytest.raises(JsonRpcException) as refused:
            await execute(client, command, *arguments)
        assert refused.value.code == lsp.LSPErrorCodes.RequestFailed and "not trusted" in str(refused.value)
    assert model.read_bytes() == before and not (tmp_path / "q.onnx").exists()


async def test_workspace_settings_cannot_grant_trust_but_the_client_can(untrusted, tmp_path):
    client = untrusted
    model = _probed_model(tmp_path)
    open_binary(client, model)
    assert _codes(await diagnostics_for(client, model.as_uri(), bool)) == ["OL007"]
    # what a workspace's .vscode/settings.json can put into the synchronized onnxLint section
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"onnxLint": {"workspaceTrusted": True}}))
    described = await execute(client, "onnx-lint.describeModel", model.as_uri())
    assert described["trusted"] is False and _codes(described["diagnostics"]) == ["OL007"]
    # what the extension sends on onDidGrantWorkspaceTrust
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"workspaceTrusted": True}))
    await diagnostics_for(client, model.as_uri(), lambda ds: _codes(ds) == ["OL001"])
    described = await execute(client, "onnx-lint.describeModel", model.as_uri())
    assert described["trusted"] is True and described["restricted"] is None


@pytest_lsp.fixture(config=SERVER)
async def no_probe(lsp_client: LanguageClient, tmp_path):
    """A trusted workspace whose user turned the runtime probe off (the extension's onnxLint.runtimeProbe)."""
    await start(lsp_client, tmp_path, push_capabilities(),
                options={"workspaceTrusted": True, "settings": {"onnxLint": {"runtimeProbe": False}}})
    yield
    await lsp_client.shutdown_session()


async def test_the_editor_can_turn_the_runtime_probe_off_and_on_again(no_probe, tmp_path):
    client = no_probe
    model = _probed_model(tmp_path)
    open_binary(client, model)
    [note] = await diagnostics_for(client, model.as_uri(), bool)
    assert note.code == "OL007" and "onnxruntime run: turned off" in note.message
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"onnxLint": {"runtimeProbe": True}}))
    await diagnostics_for(client, model.as_uri(), lambda ds: _codes(ds) == ["OL001"])
