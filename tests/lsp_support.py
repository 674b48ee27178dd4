"""Helpers for driving the real `onnx-lint server` with pytest-lsp's client over stdio."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import Any

from lsprotocol import types as lsp
from lsprotocol.converters import get_converter
from pygls.protocol.json_rpc import JsonRPCResponseMessage
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "onnx_lint", "server"])
WAIT_S = 90.0


def push_capabilities(watch: bool = True) -> lsp.ClientCapabilities:
    """Neovim's capabilities (push diagnostics), with dynamic file watching when ``watch``."""
    caps = client_capabilities("neovim@v0.7.0")
    if watch:
        caps.workspace.did_change_watched_files = lsp.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=True)
    caps.workspace.configuration = True
    return caps


def pull_capabilities() -> lsp.ClientCapabilities:
    """VS Code's capabilities with pull diagnostics and refresh, as vscode-languageclient 9 sends."""
    caps = client_capabilities("visual_studio_code")
    caps.text_document.diagnostic = lsp.DiagnosticClientCapabilities(dynamic_registration=False)
    caps.workspace.diagnostics = lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    caps.workspace.did_change_watched_files = lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)
    return caps


class Registrations(list):
    """The server's ``client/registerCapability`` requests, with an event set when one arrives."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = asyncio.Event()

    async def first(self, timeout: float = WAIT_S) -> lsp.RegistrationParams:
        await asyncio.wait_for(self.arrived.wait(), timeout)
        return self[0]


async def start(client: LanguageClient, root, capabilities: lsp.ClientCapabilities,
                options: Any = None) -> Registrations:
    """Initialize a session; returns the list that collects the server's registrations."""
    registrations = Registrations()

    @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(params: lsp.RegistrationParams) -> None:
        registrations.append(params)
        registrations.arrived.set()

    await client.initialize_session(lsp.InitializeParams(
        capabilities=capabilities, root_uri=root.as_uri(), initialization_options=options,
        workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))
    return registrations


def open_binary(client: LanguageClient, path) -> None:
    """didOpen as an editor sends it for a binary file: mangled text the server must ignore."""
    mangled = path.read_bytes().decode("latin-1")
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=path.as_uri(), language_id="onnx", version=1, text=mangled)))


async def next_notification(client: LanguageClient, method: str, timeout: float) -> bool:
    """Wait up to ``timeout`` for the next ``method`` notification; whether one came.

    The waiter is left pending on a timeout, never cancelled: pytest-lsp resolves the
    waiter of the next such notification, and resolving a cancelled one raises
    InvalidStateError inside the client, which it treats as a fatal server error.
    """
    arrived = asyncio.wrap_future(client.protocol.wait_for_notification(method))
    done, _pending = await asyncio.wait({arrived}, timeout=timeout)
    return bool(done)


async def diagnostics_for(client: LanguageClient, uri: str, condition=lambda d: True,
                          timeout: float = WAIT_S) -> list[lsp.Diagnostic]:
    """Wait until diagnostics published for ``uri`` satisfy ``condition``; returns them."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if uri in client.diagnostics and condition(list(client.diagnostics[uri])):
            return list(client.diagnostics[uri])
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise AssertionError(f"no matching diagnostics for {uri}; last: {client.diagnostics.get(uri)}")
        await next_notification(client, lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, min(remaining, 5.0))


async def fresh_diagnostics(client: LanguageClient, uri: str, timeout: float = WAIT_S) -> list[lsp.Diagnostic]:
    """The next diagnostics published for ``uri`` (after the call)."""
    client.diagnostics.pop(uri, None)
    return await diagnostics_for(client, uri, timeout=timeout)


async def code_actions(client: LanguageClient, uri: str, line: int = 0, character: int = 0,
                       diagnostics: list[lsp.Diagnostic] | None = None,
                       only: list[str] | None = None) -> list[lsp.CodeAction]:
    """Code actions at a position, decoded as CodeActions.

    pytest-lsp's converter decodes a CodeAction that carries a command as a bare
    Command (FIELD-NOTES), so this request is decoded with the precise type.
    """
    protocol = client.protocol
    original = protocol.get_result_type
    protocol.get_result_type = lambda method: (  # type: ignore[method-assign]
        JsonRPCResponseMessage if method == lsp.TEXT_DOCUMENT_CODE_ACTION else original(method))
    try:
        position = lsp.Position(line, character)
        raw = await asyncio.wait_for(client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri), range=lsp.Range(position, position),
            context=lsp.CodeActionContext(diagnostics=diagnostics or [], only=only))), WAIT_S)
    finally:
        protocol.get_result_type = original  # type: ignore[method-assign]
    converter = get_converter()
    return [converter.structure(item, lsp.CodeAction) for item in raw or []]


async def execute(client: LanguageClient, command: str, *arguments: Any, timeout: float = WAIT_S) -> Any:
    return await asyncio.wait_for(client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command=command, arguments=list(arguments))), timeout)


async def pull(client: LanguageClient, uri: str, previous: str | None = None):
    return await asyncio.wait_for(client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
        text_document=lsp.TextDocumentIdentifier(uri), previous_result_id=previous)), WAIT_S)


async def round_trip(client: LanguageClient) -> None:
    """A request and its answer: the server has handled every message sent before it (it reads in order),
    and the tasks those handlers started have taken their first step."""
    await asyncio.wait_for(client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier("file:///barrier.onnx"), lsp.Position(0, 0))), WAIT_S)


async def holds_for(client: LanguageClient, uris: list[str], condition: Callable[[list[lsp.Diagnostic]], bool],
                    seconds: float) -> None:
    """Assert that the diagnostics of ``uris`` satisfy ``condition`` for ``seconds``, checked on every
    publishDiagnostics (for "nothing shows up later", where no event marks the end)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        for uri in uris:
            current = client.diagnostics.get(uri)
            assert current is None or condition(list(current)), f"{uri}: {current}"
        remaining = deadline - loop.time()
        if remaining <= 0:
            return
        await next_notification(client, lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, remaining)


async def until(condition: Callable[[], bool], what: str, timeout: float = WAIT_S, every: float = 0.02) -> None:
    """Wait for a condition that no notification announces (a process state, a file), with a deadline."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(every)
