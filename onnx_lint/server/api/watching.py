"""Changes on disk: models and configuration files, reported by the client or seen by polling.

A client that can watch files is asked to report ``*.onnx`` and the
configuration files; for one that cannot, the server stats the tracked models
and the configuration files it has read once a second (a timer that shutdown
cuts short, not a sleep).
"""

from __future__ import annotations

import asyncio
import uuid

from lsprotocol import types as lsp

from onnx_lint.server.api.common import OnnxLintServer, file_path
from onnx_lint.server.results import stat_key
from onnx_lint.server.session import Session
from onnx_lint.server.settings_index import CONFIG_FILE_NAMES, is_config_file

POLL_INTERVAL_S = 1.0
WATCHED = ("**/*.onnx", *(f"**/{name}" for name in CONFIG_FILE_NAMES))


async def watch(session: Session) -> None:
    """Ask the client to report changes of models and configuration files, or poll if it cannot."""
    if session.capabilities.watch_files:
        options = lsp.DidChangeWatchedFilesRegistrationOptions(
            watchers=[lsp.FileSystemWatcher(glob_pattern=pattern) for pattern in WATCHED])
        registration = lsp.Registration(id=str(uuid.uuid4()), method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                        register_options=options)
        try:
            await session.client.client_register_capability_async(lsp.RegistrationParams(registrations=[registration]))
            return
        except Exception as exc:
            session.log(f"file watching not available ({exc}); polling tracked models instead")
    session.tasks.spawn(_poll(session))


async def _poll(session: Session) -> None:
    """Look at the tracked models and configuration files every few seconds (shutdown cancels it)."""
    while True:
        await asyncio.sleep(POLL_INTERVAL_S)
        if not session.settings.lint_on_change:
            continue
        changed_configs = session.index.changed_on_disk()
        if changed_configs:
            session.log("configuration changed; linting the open models again")
            session.configuration_changed(*changed_configs)
            continue
        for path, tracked in list(session.tracked.items()):
            if tracked.stat is not None and stat_key(path) != tracked.stat:
                tracked.stat = stat_key(path)
                session.model_changed(path)


def changed_on_disk(session: Session, changes: list[lsp.FileEvent]) -> None:
    """What the client reported: models are linted again; a configuration file is resolved again first."""
    configs = []
    for change in changes:
        path = file_path(change.uri)
        if path is None:
            continue
        if is_config_file(path):
            configs.append(path)
        else:
            session.model_changed(path)
    if configs:
        session.log("configuration changed; linting the open models again")
        session.configuration_changed(*configs)


def register(server: OnnxLintServer) -> None:
    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: OnnxLintServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        changed_on_disk(ls.session, list(params.changes))
