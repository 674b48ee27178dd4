"""What the client can do, resolved once at ``initialize`` (as ruff_server's ``ResolvedClientCapabilities``).

Handlers ask these flags instead of walking the optional tree of
``ClientCapabilities`` each time, so every answer to "does this client pull
diagnostics?" is the same for the whole session.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types as lsp


@dataclass(frozen=True)
class ResolvedClientCapabilities:
    """The client's capabilities that change what the server does."""

    pull_diagnostics: bool = False
    diagnostic_refresh: bool = False
    watch_files: bool = False
    workspace_configuration: bool = False
    work_done_progress: bool = False
    utf16: bool = True
    related_information: bool = False

    @classmethod
    def resolve(cls, client: lsp.ClientCapabilities,
                encoding: lsp.PositionEncodingKind | str | None) -> ResolvedClientCapabilities:
        """Read the flags from the client's capabilities and the position encoding the server chose."""
        text, workspace, window = client.text_document, client.workspace, client.window
        return cls(
            pull_diagnostics=bool(text and text.diagnostic),
            diagnostic_refresh=bool(workspace and workspace.diagnostics and workspace.diagnostics.refresh_support),
            watch_files=bool(workspace and workspace.did_change_watched_files
                             and workspace.did_change_watched_files.dynamic_registration),
            workspace_configuration=bool(workspace and workspace.configuration),
            work_done_progress=bool(window and window.work_done_progress),
            utf16=encoding in (None, lsp.PositionEncodingKind.Utf16),
            related_information=bool(text and (
                (text.publish_diagnostics and text.publish_diagnostics.related_information)
                or (text.diagnostic and text.diagnostic.related_information))),
        )
