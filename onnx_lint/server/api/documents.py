"""Document notifications and diagnostics: didOpen / didSave / didClose, and pull diagnostics.

didOpen and didClose are synchronous: an async handler starts a loop turn
late, so a quick open-then-close would be tracked in the wrong order and
leave the file marked open.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from onnx_lint.server.api.common import OnnxLintServer, file_path, model_path
from onnx_lint.server.settings_index import is_config_file

Report = lsp.RelatedFullDocumentDiagnosticReport | lsp.RelatedUnchangedDocumentDiagnosticReport
DIAGNOSTIC_OPTIONS = lsp.DiagnosticOptions(identifier="onnx-lint", inter_file_dependencies=False,
                                           workspace_diagnostics=False)


def register(server: OnnxLintServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: OnnxLintServer, params: lsp.DidOpenTextDocumentParams) -> None:
        session = ls.session
        path, is_view = model_path(params.text_document.uri)
        if path is None:
            return
        tracked = session.track(path)
        if is_view:
            tracked.open_view = True
        else:
            tracked.open_file = True
        if session.pull_mode:
            session.lint_soon(path)  # the client pulls next: have the answer ready
        elif session.settings.lint_on_open or is_view:
            session.refresh_soon(path)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: OnnxLintServer, params: lsp.DidSaveTextDocumentParams) -> None:
        session = ls.session
        saved = file_path(params.text_document.uri)
        if saved is not None and is_config_file(saved):
            session.log(f"{saved.name} saved; linting the open models again")
            session.configuration_changed(saved)
            return
        path, _ = model_path(params.text_document.uri)
        if path is not None and path in session.tracked and session.settings.lint_on_save:
            session.cache.forget(path)
            await session.refresh(path)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: OnnxLintServer, params: lsp.DidCloseTextDocumentParams) -> None:
        session = ls.session
        path, is_view = model_path(params.text_document.uri)
        tracked = session.tracked.get(path) if path is not None else None
        if tracked is None:
            return
        if is_view:
            tracked.open_view = False
        else:
            tracked.open_file = False
        tracked.pulled = False  # a client pulls for open documents only
        session.clear(params.text_document.uri)
        session.forget_if_unused(tracked, dropped_view=is_view)

    @server.feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC, DIAGNOSTIC_OPTIONS)
    async def pull_diagnostics(ls: OnnxLintServer, params: lsp.DocumentDiagnosticParams) -> Report:
        session = ls.session
        path, is_view = model_path(params.text_document.uri)
        if path is None:
            return lsp.RelatedFullDocumentDiagnosticReport(items=[])
        session.track(path).pulled = True
        if is_view:
            outcome, view = await session.view(path)
        else:
            outcome, view = await session.outcome(path), None
        result_id = outcome.result_id + (":view" if is_view else "")
        if params.previous_result_id == result_id:
            return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        items = session.diagnostics_for(outcome, params.text_document.uri, path, view)
        return lsp.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)
