"""The language server's own process never imports onnx (issue 14): its workers do all onnx work.

The server runs as a real process driven by pytest-lsp's client; a launcher around
``onnx-lint server`` records the main process's ``sys.modules`` when it exits.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

import onnx
import pytest
import pytest_lsp
from lsp_support import WAIT_S, diagnostics_for, execute, open_binary, push_capabilities, start, until
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from examples import defects
from onnx_lint.rules import CODES, get_rule, rule_explanation, rule_url

MODULES = Path(tempfile.gettempdir()) / f"onnx-lint-server-modules-{os.getpid()}.json"
_LAUNCHER = """
import atexit, json, sys
atexit.register(lambda: open(sys.argv[1], "w").write(json.dumps(sorted(sys.modules))))
from onnx_lint.cli import main
sys.exit(main(["server"]))
"""
RECORDING_SERVER = ClientServerConfig(server_command=[sys.executable, "-c", _LAUNCHER, str(MODULES)])


@pytest_lsp.fixture(config=RECORDING_SERVER)
async def recorded(lsp_client: LanguageClient, tmp_path):
    MODULES.unlink(missing_ok=True)
    await start(lsp_client, tmp_path, push_capabilities())
    yield


@pytest.mark.asyncio
async def test_the_server_process_never_imports_onnx(recorded, tmp_path):
    """Lint, view, hover and fix round trips: the main process still has no onnx, its workers do it all."""
    client = recorded
    model = tmp_path / "stale.onnx"
    onnx.save(defects.stale_rank0_output(), model)
    open_binary(client, model)
    [d] = await diagnostics_for(client, model.as_uri())
    assert d.code == "OL001" and d.code_description.href == rule_url("OL001")
    shown = await execute(client, "onnx-lint.showModel", model.as_uri())
    [found] = shown["diagnostics"]
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=shown["uri"], language_id="onnx-text", version=1, text=shown["text"])))
    await diagnostics_for(client, shown["uri"], bool)
    hover = await asyncio.wait_for(client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(shown["uri"]), lsp.Position(**found["range"]["start"]))), WAIT_S)
    assert get_rule("OL001").explanation() in hover.contents.value
    result = await execute(client, "onnx-lint.fixAll", model.as_uri())
    assert result["written"] is True
    await client.shutdown_session()
    await until(lambda: MODULES.exists() and MODULES.stat().st_size > 0, "the launcher's module list", timeout=10)
    modules = set(json.loads(MODULES.read_text()))
    MODULES.unlink()
    assert "onnx_lint.server.server" in modules
    assert not {m for m in modules if m == "onnx" or m.startswith(("onnx.", "onnxruntime", "numpy"))}


def test_rule_documentation_without_importing_rules_matches_the_rules():
    for code in CODES:
        rule = get_rule(code)
        assert rule is not None
        assert rule_explanation(code) == rule.explanation() and rule_url(code) == rule.url()
