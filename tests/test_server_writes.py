"""The server writes a quantized model only inside the model's workspace folder (issue 23, finding 5).

Driven by pytest-lsp's real client: the workspace folder is ``tmp_path/ws``, and
everything beside it (``tmp_path/victim``, ``tmp_path/outside``) is what an output
path from a command or from the client's settings must never reach.
"""

from __future__ import annotations

import os
from pathlib import Path

import onnx
import pytest
import pytest_lsp
from lsp_support import SERVER, diagnostics_for, execute, push_capabilities, start
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from examples import defects

pytestmark = pytest.mark.asyncio


def _layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The workspace with a model, a victim file beside the workspace, and a folder a symlink leads to."""
    workspace = tmp_path / "ws"
    (workspace / "models").mkdir(parents=True, exist_ok=True)
    model = workspace / "models" / "m.onnx"
    onnx.save(defects.weakly_typed_mlp(), model)
    victim = tmp_path / "victim" / ".bashrc"
    victim.parent.mkdir(exist_ok=True)
    victim.write_text("echo mine\n")
    (tmp_path / "outside").mkdir(exist_ok=True)
    link = workspace / "models" / "link"
    if not link.is_symlink():
        link.symlink_to(tmp_path / "outside")
    return workspace, model, victim


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    workspace, _model, _victim = _layout(tmp_path)
    await start(lsp_client, workspace, push_capabilities())
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def configured_client(lsp_client: LanguageClient, tmp_path):
    """A client whose settings carry an output that escapes the workspace."""
    workspace, _model, _victim = _layout(tmp_path)
    await start(lsp_client, workspace, push_capabilities(), {"quantize": {"output": "../../../victim/.bashrc"}})
    yield
    await lsp_client.shutdown_session()


def _everything(tmp_path: Path) -> list[str]:
    return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))


@pytest.mark.parametrize("output", [
    "../../../victim/.bashrc",  # relative, out of the workspace to a file that exists
    "../../../made_dir/new.onnx",  # relative, would create folders above the workspace
    "{tmp}/victim/.bashrc",  # absolute, elsewhere
    "link/q.onnx",  # a folder inside the workspace that is a symlink to one outside
    "..",  # the workspace folder itself
], ids=["dotdot-to-existing", "dotdot-new-folders", "absolute-elsewhere", "symlinked-parent", "the-folder"])
async def test_quantize_output_outside_the_workspace_is_refused(client, tmp_path, output):
    _workspace, model, victim = _layout(tmp_path)
    before = _everything(tmp_path)
    with pytest.raises(JsonRpcException, match="outside the workspace folder") as refused:
        await execute(client, "onnx-lint.quantize", model.as_uri(), {"output": output.format(tmp=tmp_path)})
    assert refused.value.code == -32803  # RequestFailed
    assert victim.read_text() == "echo mine\n"
    assert _everything(tmp_path) == before, "a file or folder was created"
    assert not (tmp_path / "made_dir").exists() and not (tmp_path / "outside" / "q.onnx").exists()


async def test_quantize_output_from_the_settings_is_checked_the_same_way(configured_client, tmp_path):
    _workspace, model, victim = _layout(tmp_path)
    with pytest.raises(JsonRpcException, match="outside the workspace folder"):
        await execute(configured_client, "onnx-lint.quantize", model.as_uri(), {})
    assert victim.read_text() == "echo mine\n"


async def test_quantize_never_replaces_an_existing_file_without_force(client, tmp_path):
    _workspace, model, _victim = _layout(tmp_path)
    notes = model.parent / "notes.txt"
    notes.write_text("my notes\n")
    with pytest.raises(JsonRpcException, match="already exists"):
        await execute(client, "onnx-lint.quantize", model.as_uri(), {"output": "notes.txt"})
    with pytest.raises(JsonRpcException, match="'force' must be true or false"):  # only a boolean true counts
        await execute(client, "onnx-lint.quantize", model.as_uri(), {"output": "notes.txt", "force": "yes"})
    assert notes.read_text() == "my notes\n"


async def test_a_sparse_2gib_file_of_zeros_is_refused_before_it_is_hashed(client, tmp_path):
    """The server hashes a file before it lints it: 2 GiB - 1 of zeros is refused from its first byte instead."""
    model = tmp_path / "ws" / "zeros.onnx"
    with open(model, "wb"):
        pass
    os.truncate(model, 2**31 - 1)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=model.as_uri(), language_id="onnx", version=1, text="")))
    [found] = await diagnostics_for(client, model.as_uri(), lambda d: bool(d))
    assert found.code == "OL000" and "starts with a zero byte" in found.message
