"""The language server's commands and settings are requests from outside the user's hands: each is checked first.

A wrong argument type gets InvalidParams naming what was expected (never a Python exception), a path is bounded
before anything resolves it, a number of samples or seconds is bounded, a FIFO is never read, a fix is confined
to the workspace, and a quantize run that goes on too long is stopped.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import onnx
import pytest
import pytest_lsp
from lsp_support import SERVER, execute, push_capabilities, start
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from examples import defects

pytestmark = pytest.mark.asyncio
INVALID_PARAMS, REQUEST_FAILED = -32602, -32803


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    model = workspace / "m.onnx"
    onnx.save(defects.stale_rank0_output(), model)
    return workspace, model


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    workspace, _model = _workspace(tmp_path)
    await start(lsp_client, workspace, push_capabilities(), {"quantizeTimeout": 0.5})
    yield
    await lsp_client.shutdown_session()


async def _refused(client: LanguageClient, command: str, *arguments, code: int = INVALID_PARAMS) -> str:
    with pytest.raises(JsonRpcException) as refused:
        await execute(client, command, *arguments)
    message = str(refused.value)
    assert refused.value.code == code, message
    for python in ("Traceback", "TypeError", "ValueError", "unhashable", "could not convert", "embedded null"):
        assert python not in message, message
    return message


async def test_a_huge_output_path_is_refused_at_once_and_the_server_stays_responsive(client, tmp_path):
    _workspace_folder, model = _workspace(tmp_path)
    started = time.monotonic()
    message = await _refused(client, "onnx-lint.quantize", model.as_uri(), {"output": "x/" * 400_000 + "q.onnx"})
    assert "at most 4096" in message and time.monotonic() - started < 5
    await _refused(client, "onnx-lint.showRuleDocs", 42)  # answered right after: nothing is left running


@pytest.mark.parametrize(("command", "arguments", "expected"), [
    ("onnx-lint.fix", ["{model}", [["a"], {"b": 1}]], "data.key"),
    ("onnx-lint.fix", ["{model}", "OL001"], "data.key"),
    ("onnx-lint.fixRule", ["{model}", 7], "rule code"),
    ("onnx-lint.ignoreRule", ["{model}", ["OL001"]], "rule code"),
    ("onnx-lint.quantize", ["{model}", "fast"], "quantize options"),
    ("onnx-lint.quantize", ["{model}", {"samples": "x"}], "'samples' must be a whole number"),
    ("onnx-lint.quantize", ["{model}", {"samples": 100_000_000}], "from 1 to 1024"),
    ("onnx-lint.quantize", ["{model}", {"minCosine": "high"}], "'minCosine' must be a number"),
    ("onnx-lint.quantize", ["{model}", {"fallbackSeconds": float("inf")}], "'fallbackSeconds'"),
    ("onnx-lint.quantize", ["{model}", {"opTypes": [1, 2]}], "'opTypes' must be a list of strings"),
    ("onnx-lint.quantize", ["{model}", {"calibrationMethod": ["minmax"]}], "'calibrationMethod'"),
    ("onnx-lint.quantize", ["{model}", {"perChannel": "yes"}], "'perChannel' must be true or false"),
    ("onnx-lint.graphNode", ["{model}", "", "0"], "graph path, node index"),
    ("onnx-lint.findingGraph", ["{model}", {"path": 3}], "data.location"),
    ("onnx-lint.fixAll", ["file:///%00/m.onnx"], "not an ONNX model URI"),
    ("onnx-lint.describeModel", [{"uri": "x"}], "model's URI"),
], ids=lambda v: v if isinstance(v, str) and v.startswith("onnx-lint") else None)
async def test_commands_with_wrong_argument_types_get_invalid_params(client, tmp_path, command, arguments, expected):
    _workspace_folder, model = _workspace(tmp_path)
    filled = [model.as_uri() if a == "{model}" else a for a in arguments]
    assert expected in await _refused(client, command, *filled)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFOs")
async def test_calibration_data_naming_a_fifo_is_refused_without_blocking(plain_client, tmp_path):
    _workspace_folder, model = _workspace(tmp_path)
    fifo = tmp_path / "ws" / "data.npz"
    os.mkfifo(fifo)
    message = await _refused(plain_client, "onnx-lint.quantize", model.as_uri(), {"calibrationData": str(fifo)},
                             code=REQUEST_FAILED)
    assert "must be a regular file" in message and "FIFO" in message


async def test_a_fix_outside_every_workspace_folder_is_refused(client, tmp_path):
    outside = tmp_path / "victim.onnx"
    onnx.save(defects.stale_rank0_output(), outside)
    before = outside.read_bytes()
    for uri in (outside.as_uri(), f"{(tmp_path / 'ws').as_uri()}/../victim.onnx"):
        message = await _refused(client, "onnx-lint.fixAll", uri, code=REQUEST_FAILED)
        assert "outside every workspace folder" in message
    assert outside.read_bytes() == before
    _workspace_folder, model = _workspace(tmp_path)
    assert (await execute(client, "onnx-lint.fixAll", model.as_uri()))["written"]  # inside: fixed


async def test_a_quantize_run_past_its_time_limit_is_stopped_and_writes_nothing(client, tmp_path):
    _workspace_folder, model = _workspace(tmp_path)
    message = await _refused(client, "onnx-lint.quantize", model.as_uri(), {"output": "q.onnx"},
                             code=REQUEST_FAILED)
    assert "longer than 0.5 s" in message and "quantizeTimeout" in message
    await asyncio.sleep(0)
    assert not (tmp_path / "ws" / "q.onnx").exists()


@pytest_lsp.fixture(config=SERVER)
async def plain_client(lsp_client: LanguageClient, tmp_path):
    workspace, _model = _workspace(tmp_path)
    await start(lsp_client, workspace, push_capabilities())
    yield lsp_client
    await lsp_client.shutdown_session()


async def test_a_bad_quantize_setting_is_reported_and_never_used(plain_client):
    """``onnxLint.quantize.samples`` of 100 million is refused when the settings arrive, naming the option."""
    plain_client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"onnxLint": {"quantize": {"samples": 100_000_000}}}))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if any("'samples'" in m.message and "from 1 to 1024" in m.message for m in plain_client.messages):
            return
        await asyncio.sleep(0.05)
    pytest.fail(f"no message about the setting: {[m.message for m in plain_client.messages]}")
