"""The server's commands as an editor meets them: one list of names, typed arguments, clear refusals.

The server and the VS Code extension take their command names from one list
(``onnx_lint/server/command_names.py``; the extension's copy is ``src/commandNames.ts``), so a
command the extension calls always exists. Each command's arguments are typed
(``onnx_lint/server/api/arguments.py``): a malformed call is answered with InvalidParams naming
the command, its usage and the bad argument, and the server's log shows no traceback for it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import onnx
import pytest
import pytest_asyncio
from lsp_support import execute, pull_capabilities
from pygls.exceptions import JsonRpcException
from server_process import ServerProcess

from examples import defects
from onnx_lint.server import command_names as names

REPO = Path(__file__).resolve().parent.parent
EXTENSION = REPO / "vscode-extension"
INVALID_PARAMS, REQUEST_FAILED = -32602, -32803


# -- one list of names ---------------------------------------------------------------------------------
def test_the_extensions_copy_of_the_command_list_is_the_servers():
    """A stale copy would let the extension call a command the server no longer has ("command not found")."""
    copy = (EXTENSION / names.TYPESCRIPT_MODULE.removeprefix("vscode-extension/")).read_text()
    regenerate = "python -m onnx_lint.server.command_names > vscode-extension/src/commandNames.ts"
    assert copy == names.typescript(), f"vscode-extension/src/commandNames.ts is stale: run `{regenerate}`"


def test_every_command_the_extension_names_is_in_the_list():
    sources = {path: path.read_text() for path in (EXTENSION / "src").rglob("*.ts")
               if path.name != "commandNames.ts"}
    called = {name for text in sources.values() for name in re.findall(r"""["'`](onnx-lint\.[A-Za-z]+)["'`]""", text)}
    assert called, "no server command found in the extension's sources"
    assert called <= set(names.SERVER_COMMANDS), f"not served: {sorted(called - set(names.SERVER_COMMANDS))}"
    extension = sources[EXTENSION / "src" / "extension.ts"]
    registered = re.findall(r"""registerCommand\(\s*["'](onnxLint\.[A-Za-z]+)["']""", extension)
    assert sorted(registered) == sorted(names.EXTENSION_COMMANDS)
    links = {name for text in sources.values() for name in re.findall(r"command:(onnxLint\.[A-Za-z]+)", text)}
    assert links and links <= set(names.EXTENSION_COMMANDS)  # a Problems entry's link runs a registered command


def test_package_json_contributes_the_palette_commands_the_extension_registers():
    """A contributed command the extension does not register shows in the palette and fails ("not found")."""
    contributes = json.loads((EXTENSION / "package.json").read_text())["contributes"]
    assert [c["command"] for c in contributes["commands"]] == list(names.PALETTE)
    assert all(c["title"] and c["category"] == "onnx-lint" for c in contributes["commands"])
    in_menus = {item["command"] for items in contributes["menus"].values() for item in items}
    assert in_menus <= set(names.PALETTE)
    assert set(names.PALETTE) <= set(names.EXTENSION_COMMANDS)


# -- a server session ------------------------------------------------------------------------------------
@pytest_asyncio.fixture
async def server(tmp_path):
    process = await ServerProcess.start(tmp_path, pull_capabilities())
    yield process
    await process.kill()


def _model(folder: Path) -> Path:
    path = folder / "m.onnx"
    onnx.save(defects.stale_rank0_output(), path)
    return path


async def _refused(server: ServerProcess, command: str, *arguments, code: int = INVALID_PARAMS) -> str:
    with pytest.raises(JsonRpcException) as refused:
        await execute(server.client, command, *arguments)
    assert refused.value.code == code, refused.value
    return str(refused.value.message)


@pytest.mark.asyncio
async def test_the_server_offers_exactly_the_listed_commands(server):
    assert server.initialized is not None
    offered = server.initialized.capabilities.execute_command_provider
    assert offered is not None and sorted(offered.commands) == sorted(names.SERVER_COMMANDS)
    for command in names.SERVER_COMMANDS:  # each says what it takes when called with nothing
        usage = await _refused(server, command)
        assert re.fullmatch(rf"{re.escape(command)}\(([^,)]+)[^)]*\): argument 1 \(\1\) is missing", usage), usage


@pytest.mark.asyncio
async def test_a_malformed_call_names_the_command_and_the_argument_and_logs_no_traceback(server, tmp_path):
    model = _model(tmp_path).as_uri()
    graph_node = await _refused(server, names.GRAPH_NODE, model, "", "0")
    assert graph_node == ('onnx-lint.graphNode(model URI, graph path, node index): argument 3 (node index) must be '
                          'a whole number of 0 or more, not the string "0"')
    assert await _refused(server, names.FIX, model) == \
        "onnx-lint.fix(model URI, data.key): argument 2 (data.key) is missing"
    assert await _refused(server, names.FIX_ALL, model, "again") == \
        "onnx-lint.fixAll(model URI): takes at most 1 argument, got 2"
    assert await _refused(server, names.DESCRIBE_MODEL) == \
        "onnx-lint.describeModel(model URI): argument 1 (model URI) is missing"
    assert await _refused(server, names.DESCRIBE_MODEL, {"uri": model}) == (
        "onnx-lint.describeModel(model URI): argument 1 (model URI) must be the model's URI "
        "(file:///.../model.onnx), not an object")
    assert await _refused(server, names.SHOW_RULE_DOCS, "OL999") == (
        'onnx-lint.showRuleDocs(rule code): argument 1 (rule code) is not a rule code of this onnx-lint: '
        'the string "OL999"')
    assert await _refused(server, names.QUANTIZE, model, {"samples": "x"}) == (
        "onnx-lint.quantize(model URI, [quantize options]): argument 2 (quantize options) is refused: "
        "quantize option 'samples' must be a whole number from 1 to 1024")
    assert await _refused(server, names.FINDING_GRAPH, model, {"path": 3}) == (
        "onnx-lint.findingGraph(model URI, data.location): argument 2 (data.location) must be the diagnostic's "
        'data.location (an object with a string path), not {"path": 3}')
    assert (await _refused(server, "onnx-lint.bogus", model)).startswith(
        "no command 'onnx-lint.bogus': this server's commands are onnx-lint.compareModels, onnx-lint.describeModel, ")
    # Well-formed calls are answered as before; a trailing argument with a default may be left out.
    described = await execute(server.client, names.DESCRIBE_MODEL, model)
    assert [d["code"] for d in described["diagnostics"]] == ["OL001"]
    node = await execute(server.client, names.GRAPH_NODE, model, "graph", 0)
    assert node["op"] and node["inputs"]
    (tmp_path / "m.int8-fp16.onnx").write_bytes(b"")  # quantize's default output: refused, not overwritten
    assert "already exists" in await _refused(server, names.QUANTIZE, model, code=REQUEST_FAILED)
    assert await server.shutdown() < 30 and await server.exit() == 0
    assert server.tracebacks() == [], "".join(server.stderr)
