"""initialize / initialized / shutdown, the editor's settings and the workspace folders.

Client capabilities are resolved once, at ``initialize``; the editor's settings
arrive then and with ``workspace/didChangeConfiguration``. A change of either
settings or workspace folders drops the settings index and lints the open models again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.uris import to_fs_path

from onnx_lint.base.errors import ConfigError
from onnx_lint.base.version import __version__
from onnx_lint.server.api import watching
from onnx_lint.server.api.common import OnnxLintServer
from onnx_lint.server.capabilities import ResolvedClientCapabilities
from onnx_lint.server.settings import SECTION, ServerSettings


def _workspace_folders(ls: OnnxLintServer) -> list[Path]:
    """The client's workspace folders as paths (the root URI stands for them when the client sent none)."""
    uris = [folder.uri for folder in ls.workspace.folders.values()] or [ls.workspace.root_uri or ""]
    return [Path(path) for uri in uris if uri.startswith("file:") and (path := to_fs_path(uri))]


def register(server: OnnxLintServer) -> None:
    @server.feature(lsp.INITIALIZE)
    def initialize(ls: OnnxLintServer, params: lsp.InitializeParams) -> None:
        session = ls.session
        session.capabilities = ResolvedClientCapabilities.resolve(params.capabilities, ls.workspace.position_encoding)
        session.index.set_folders(_workspace_folders(ls))
        try:
            session.settings = ServerSettings.from_client(params.initialization_options)
        except ConfigError as exc:
            session.log(f"ignoring the initialization options: {exc}", lsp.MessageType.Error)

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: OnnxLintServer, params: lsp.InitializedParams) -> None:
        session = ls.session
        session.pool.start()
        mode = "pull" if session.pull_mode else "push"
        session.log(f"onnx-lint {__version__} server ready ({mode} diagnostics, {session.pool.size} workers)",
                    lsp.MessageType.Info)
        await watching.watch(session)

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: OnnxLintServer, *args: Any) -> None:
        ls.session.shutdown()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: OnnxLintServer, params: lsp.DidChangeConfigurationParams) -> None:
        session = ls.session
        raw = params.settings
        if not raw:
            if not session.capabilities.workspace_configuration:
                return
            try:
                answer = await ls.workspace_configuration_async(
                    lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section=SECTION)]))
            except Exception as exc:
                session.log(f"cannot read the settings: {exc}", lsp.MessageType.Error)
                return
            raw = answer[0] if answer else None
        try:
            session.settings = ServerSettings.from_client(raw, session.settings)
        except ConfigError as exc:
            session.tell(f"onnx-lint: {exc}; keeping the previous settings", lsp.MessageType.Error)
            return
        session.log("settings changed; linting the open models again")
        session.configuration_changed()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_workspace_folders(ls: OnnxLintServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
        ls.session.index.set_folders(_workspace_folders(ls))  # pygls has updated ls.workspace already
        ls.session.relint_all()
