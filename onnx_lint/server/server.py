"""The language server: diagnostics, quick fixes, the textual view and quantize (SPEC 7).

Model files are binary, so the text a client sends is never used: every
lint reads the file from disk. Clients that pull diagnostics
(``textDocument/diagnostic``, VS Code's custom-editor tabs among them) are
never pushed any, so that nothing shows twice; the others get
``publishDiagnostics`` on open, save and change on disk.

All onnx work runs in worker processes (``workers``); this module only
routes messages, caches outcomes and converts them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from onnx_lint import __version__
from onnx_lint.diagnostics import Diagnostic
from onnx_lint.errors import ConfigError, ModelLoadError
from onnx_lint.file_result import is_unreadable, unreadable_diagnostic
from onnx_lint.model_file import stat_model_file
from onnx_lint.rules import CODES, rule_explanation
from onnx_lint.server.convert import quick_fix_title, to_lsp, view_model_path, view_uri
from onnx_lint.server.results import Outcome, OutcomeCache, file_digest, stat_key
from onnx_lint.server.settings import SECTION, ServerSettings
from onnx_lint.server.view_model import ModelView
from onnx_lint.server.workers import CANCEL_GRACE_S, JobFailed, Worker, WorkerCrashed, WorkerPool
from onnx_lint.server.workers import jobs_by_name as jobs

FIX_ALL_KIND = "source.fixAll.onnx-lint"
REQUEST_FAILED = -32803
REQUEST_CANCELLED = -32800
POLL_INTERVAL_S = 1.0
ALL_CODES = list(CODES)


def _pool_size() -> int:
    return max(1, min(2, (os.cpu_count() or 1) - 1))


@dataclass
class Tracked:
    """A model the client shows: as a text document, as a view, or by pulling its diagnostics."""

    path: Path
    open_file: bool = False
    open_view: bool = False
    pulled: bool = False
    stat: tuple[int, int, int] | None = None


class OnnxLintServer(LanguageServer):
    """pygls server with onnx-lint's state: settings, tracked files, cache and workers."""

    def __init__(self) -> None:
        super().__init__("onnx-lint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Full)
        self.settings = ServerSettings()
        self.pool = WorkerPool(_pool_size())
        self.cache = OutcomeCache()
        self.tracked: dict[Path, Tracked] = {}
        self.lints: dict[Path, asyncio.Task] = {}
        self.quantize_workers: set[Worker] = set()
        self.pull_mode = False
        self.poll_task: asyncio.Task | None = None

    # -- logging ----------------------------------------------------------------------------
    def log(self, message: str, kind: lsp.MessageType = lsp.MessageType.Log) -> None:
        self.window_log_message(lsp.LogMessageParams(type=kind, message=message))

    def tell(self, message: str, kind: lsp.MessageType = lsp.MessageType.Info) -> None:
        self.window_show_message(lsp.ShowMessageParams(type=kind, message=message))

    # -- capabilities -----------------------------------------------------------------------
    def client_pulls(self) -> bool:
        text = self.client_capabilities.text_document
        return bool(text and text.diagnostic)

    def client_refreshes(self) -> bool:
        ws = self.client_capabilities.workspace
        return bool(ws and ws.diagnostics and ws.diagnostics.refresh_support)

    def client_watches(self) -> bool:
        ws = self.client_capabilities.workspace
        return bool(ws and ws.did_change_watched_files and ws.did_change_watched_files.dynamic_registration)

    def utf16(self) -> bool:
        caps = self.server_capabilities
        return caps.position_encoding in (None, lsp.PositionEncodingKind.Utf16)

    # -- outcomes ---------------------------------------------------------------------------
    def track(self, path: Path) -> Tracked:
        if path not in self.tracked:
            self.tracked[path] = Tracked(path)
        return self.tracked[path]

    def enabled(self, path: Path) -> tuple[str, ...]:
        return tuple(self.settings.enabled_codes(path, ALL_CODES))

    async def outcome(self, path: Path) -> Outcome:
        """The current outcome for a file: from the cache, or from a lint already running, or a new lint."""
        while True:
            task = self.lint_soon(path)
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                if task.cancelled() and self.lints.get(path) is not task:
                    continue  # superseded by a newer lint of the same file: wait for that one
                raise

    def lint_soon(self, path: Path) -> asyncio.Task:
        """The lint of a file that is running, or a new one (a finished task may hold an old outcome)."""
        task = self.lints.get(path)
        return task if task is not None and not task.done() else self.start_lint(path)

    def start_lint(self, path: Path) -> asyncio.Task:
        """Start linting a file now; a lint of it still running is stale and is stopped."""
        old = self.lints.get(path)
        if old is not None and not old.done():
            old.cancel()
        task = asyncio.ensure_future(self._lint(path))
        self.lints[path] = task
        return task

    async def _lint(self, path: Path) -> Outcome:
        try:
            enabled = self.enabled(path)
        except ConfigError as exc:
            return Outcome("config-error", (), [unreadable_diagnostic(str(path), f"configuration error: {exc}")])
        stat = stat_key(path)
        if stat is not None:
            self.track(path).stat = stat  # recorded first, so polling sees a refused file change too
        try:  # refuse what stat alone can refuse: hashing a FIFO would block, a 2 GiB file would crawl
            stat_model_file(path)
        except ModelLoadError as exc:
            problem_id = hashlib.blake2b(exc.problem.encode(), digest_size=10).hexdigest()  # a result id per problem
            return Outcome(problem_id, enabled, [unreadable_diagnostic(str(path), exc.problem)])
        if stat is None:
            return Outcome("missing", enabled, [unreadable_diagnostic(str(path), "no such file (or not readable)")])
        digest = self.cache.digest_at(path, stat)
        if digest is None:
            try:
                digest = await asyncio.to_thread(file_digest, path)
            except OSError as exc:
                problem = unreadable_diagnostic(str(path), f"cannot read: {exc.strerror}")
                return Outcome("unreadable", enabled, [problem])
            self.cache.remember_digest(path, stat, digest)
        cached = self.cache.get(digest, enabled)
        if cached is not None:
            return cached
        outcome = Outcome(digest, enabled, *await self._run_lint(path, enabled))
        self.cache.put(outcome)
        return outcome

    async def _run_lint(self, path: Path, enabled: tuple[str, ...]) -> tuple[list[Diagnostic], list[str], dict | None]:
        timeout = self.settings.lint_timeout
        try:
            data = await self.pool.run(jobs.lint_job, str(path), list(enabled), timeout=timeout)
        except WorkerCrashed as exc:
            problem = f"onnx-lint's worker crashed while reading this model ({exc}); the model is malformed"
        except asyncio.TimeoutError:
            problem = f"linting took longer than {timeout:g} s and was stopped (setting lintTimeout)"
        except JobFailed as exc:
            problem = f"internal error: {exc}"
        else:
            for error in data["errors"]:
                self.log(error, lsp.MessageType.Error)
            for note in data["notes"]:
                self.log(f"{path}: {note}")
            return [Diagnostic.from_record(r) for r in data["diagnostics"]], data["errors"], data["summary"]
        self.log(f"{path}: {problem}", lsp.MessageType.Error)
        return [unreadable_diagnostic(str(path), problem)], [problem], None

    async def view(self, path: Path) -> tuple[Outcome, ModelView | None]:
        """The outcome with its textual view (None when the model cannot be read)."""
        outcome = await self.outcome(path)
        if outcome.view is None and not any(map(is_unreadable, outcome.diagnostics)):
            try:
                data = await self.pool.run(jobs.view_job, str(path), timeout=self.settings.lint_timeout)
            except (WorkerCrashed, JobFailed, asyncio.TimeoutError) as exc:
                self.log(f"{path}: no textual view: {exc}", lsp.MessageType.Warning)
                return outcome, None
            outcome.view = ModelView.from_json(data)
        return outcome, outcome.view

    # -- publishing -------------------------------------------------------------------------
    def diagnostics_for(self, outcome: Outcome, uri: str, path: Path, view: ModelView | None) -> list[lsp.Diagnostic]:
        model_uri = from_fs_path(str(path)) or uri
        return [to_lsp(d, model_uri, view, self.utf16()) for d in outcome.diagnostics]

    async def refresh(self, path: Path) -> None:
        """Re-lint a tracked file and show the result (push, or ask pulling clients to pull)."""
        try:
            task = self.start_lint(path)
            await task
        except asyncio.CancelledError:
            return
        await self.publish(path)

    async def publish(self, path: Path) -> None:
        tracked = self.tracked.get(path)
        if tracked is None:
            return
        if self.pull_mode:
            if self.client_refreshes():
                with contextlib.suppress(Exception):
                    await self.workspace_diagnostic_refresh_async(None)
            return
        outcome = await self.outcome(path)
        file_uri = from_fs_path(str(path))
        if tracked.open_file:
            self._push(file_uri, self.diagnostics_for(outcome, file_uri, path, None))
        if tracked.open_view:
            _outcome, view = await self.view(path)
            self._push(view_uri(str(path)), self.diagnostics_for(outcome, file_uri, path, view))

    def _push(self, uri: str, diagnostics: list[lsp.Diagnostic]) -> None:
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))

    def forget_if_unused(self, tracked: Tracked, dropped_view: bool) -> None:
        """Let go of what a closed file held, so a long session's memory stays bounded.

        A closed view drops its text (the largest thing an outcome holds); a file
        nobody has open loses its entry and its lint task (a running one is
        stopped). Outcomes stay in the bounded cache for a quick re-open.
        """
        task = self.lints.get(tracked.path)
        if dropped_view and task is not None and task.done() and not task.cancelled() and not task.exception():
            task.result().view = None
        if tracked.open_file or tracked.open_view or tracked.pulled:
            return
        del self.tracked[tracked.path]
        task = self.lints.pop(tracked.path, None)
        if task is not None and not task.done():
            task.cancel()

    def clear(self, uri: str) -> None:
        if not self.pull_mode:
            self._push(uri, [])

    def relint_all(self) -> None:
        for path in list(self.tracked):
            asyncio.ensure_future(self.refresh(path))

    # -- file watching ----------------------------------------------------------------------
    async def watch(self) -> None:
        """Ask the client to report changes of models and configuration files, or poll if it cannot."""
        if self.client_watches():
            watchers = [lsp.FileSystemWatcher(glob_pattern=p)
                        for p in ("**/*.onnx", "**/onnx-lint.toml", "**/pyproject.toml")]
            options = lsp.DidChangeWatchedFilesRegistrationOptions(watchers=watchers)
            registration = lsp.Registration(id=str(uuid.uuid4()), method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                            register_options=options)
            try:
                await self.client_register_capability_async(lsp.RegistrationParams(registrations=[registration]))
                return
            except Exception as exc:
                self.log(f"file watching not available ({exc}); polling tracked models instead")
        self.poll_task = asyncio.ensure_future(self._poll())

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(POLL_INTERVAL_S)
            if not self.settings.lint_on_change:
                continue
            for path, tracked in list(self.tracked.items()):
                if tracked.stat is not None and stat_key(path) != tracked.stat:
                    tracked.stat = stat_key(path)
                    self.cache.forget(path)
                    asyncio.ensure_future(self.refresh(path))

    def changed_on_disk(self, changes: list[lsp.FileEvent]) -> None:
        config_changed = False
        for change in changes:
            path = Path(to_fs_path(change.uri) or "")
            if path.name in ("onnx-lint.toml", "pyproject.toml"):
                config_changed = True
                continue
            self.cache.forget(path)
            if path in self.tracked and self.settings.lint_on_change:
                asyncio.ensure_future(self.refresh(path))
        if config_changed:
            self.log("configuration changed; linting the open models again")
            self.relint_all()

    # -- fixes and quantize -----------------------------------------------------------------
    async def fix(self, path: Path, only: list[list] | None) -> dict:
        try:
            enabled = self.enabled(path)
            data = await self.pool.run(jobs.fix_job, str(path), list(enabled), only, self.settings.runtime_check,
                                       timeout=self.settings.lint_timeout * 2)
        except (ConfigError, JobFailed) as exc:
            self.tell(str(exc), lsp.MessageType.Error)
            raise JsonRpcException(str(exc), code=REQUEST_FAILED) from None
        except WorkerCrashed as exc:
            message = f"{path}: onnx-lint's worker crashed while fixing ({exc}); nothing was written"
            self.tell(message, lsp.MessageType.Error)
            raise JsonRpcException(message, code=REQUEST_FAILED) from None
        remaining = [Diagnostic.from_record(r) for r in data["diagnostics"]]
        if data["written"]:
            self.cache.forget(path)  # the next lint reads the new bytes (and summarizes them)
            for note in data["notes"]:
                self.log(f"{path}: {note}")
        if path in self.tracked:
            await self.refresh(path)
        fixed = len(data["fixed"])
        message = (f"Fixed {fixed} problem{'s' if fixed != 1 else ''} in {path.name}" if data["written"]
                   else f"Nothing to fix in {path.name}")
        self.log(f"{path}: {message}")
        return {"written": data["written"], "fixed": fixed, "remaining": len(remaining), "message": message,
                "notes": data["notes"]}

    async def quantize(self, path: Path, options: dict[str, Any]) -> dict:
        merged = {**self.settings.quantize, **options}
        output = Path(merged.pop("output", None) or path.with_name(f"{path.stem}.int8-fp16.onnx"))
        if not output.is_absolute():
            output = path.parent / output
        if output.resolve() == path.resolve():
            raise JsonRpcException("the output must be a new file; the model itself is never changed",
                                   code=REQUEST_FAILED)
        token = str(uuid.uuid4())
        progress = await self._begin_progress(token, f"Quantize {path.name} to INT8+FP16")
        worker = Worker()
        self.quantize_workers.add(worker)
        watcher = asyncio.ensure_future(self._watch_cancel(token, worker)) if progress else None
        try:
            result = await worker.call(jobs.quantize_job, str(path), str(output), merged,
                                       on_event=lambda e: self._report_progress(token, e) if progress else None)
        except (JobFailed, WorkerCrashed) as exc:
            if isinstance(exc, JobFailed):
                cancelled, problem = str(exc).startswith("cancelled"), str(exc)
            else:  # killed by the cancel watcher after its grace period, or a real crash
                cancelled = watcher is not None and watcher.done() and watcher.result()
                problem = f"{path}: ONNX Runtime crashed while quantizing ({exc}); nothing was written"
            message = "quantize cancelled; nothing was written" if cancelled else problem
            self._end_progress(progress, token, message)
            if not cancelled:
                self.tell(message, lsp.MessageType.Error)
            raise JsonRpcException(message, code=REQUEST_CANCELLED if cancelled else REQUEST_FAILED) from None
        finally:
            if watcher is not None:
                watcher.cancel()
            worker.stop()
            self.quantize_workers.discard(worker)
        if not result.get("written", True):
            done = f"not written: the accuracy target was missed ({result['output']})"
        elif result.get("fp16Only"):
            done = f"nothing could be quantized to INT8: FP16-only model written to {result['output']}"
        else:
            done = f"Quantized model written to {result['output']}"
        self._end_progress(progress, token, done)
        self.log(result["summary"])
        for warning in result["warnings"]:
            self.log(warning, lsp.MessageType.Warning)
        self.tell(done, lsp.MessageType.Info if result.get("exitCode", 0) == 0 else lsp.MessageType.Warning)
        return result

    async def _begin_progress(self, token: str, title: str) -> bool:
        window = self.client_capabilities.window
        if not (window and window.work_done_progress):
            return False
        try:
            await self.work_done_progress.create_async(token)
        except Exception:
            return False
        self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title=title, cancellable=True,
                                                                       message="starting", percentage=0))
        return True

    def _report_progress(self, token: str, event: dict) -> None:
        if "note" in event:
            self.log(event["note"])
            return
        total, done = event.get("total"), event.get("done", 0)
        percentage = int(100 * done / total) if total else None
        message = f"{event['title']} ({done}/{total})" if total else event["title"]
        self.work_done_progress.report(token, lsp.WorkDoneProgressReport(message=message, percentage=percentage))

    def _end_progress(self, progress: bool, token: str, message: str) -> None:
        if progress:
            self.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message=message))
        self.work_done_progress.tokens.pop(token, None)

    async def _watch_cancel(self, token: str, worker: Worker) -> bool:
        """On the client's cancel: ask the job to stop, and kill it if it does not within the grace period."""
        future = self.work_done_progress.tokens.get(token)
        while future is not None and not future.cancelled():
            await asyncio.sleep(0.1)
        if future is None:
            return False
        self.log("quantize: cancel requested; stopping at the next step")
        worker.request_cancel()
        await asyncio.sleep(CANCEL_GRACE_S)
        worker.stop()
        return True

    def shutdown_workers(self) -> None:
        for task in self.lints.values():
            task.cancel()
        if self.poll_task is not None:
            self.poll_task.cancel()
        self.pool.stop()
        for worker in list(self.quantize_workers):
            worker.stop()


def model_path(uri: str) -> tuple[Path | None, bool]:
    """The model a URI is about, and whether the URI is its textual view."""
    viewed = view_model_path(uri)
    if viewed is not None:
        return Path(viewed), True
    if not uri.startswith("file:"):
        return None, False
    path = to_fs_path(uri)
    if path is None or not path.endswith(".onnx"):
        return None, False
    return Path(path), False


def _range_overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and \
        (b.start.line, b.start.character) <= (a.end.line, a.end.character)


def _wants(only: list[str] | None, kind: str) -> bool:
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def create_server() -> OnnxLintServer:
    """The server with every feature registered."""
    server = OnnxLintServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: OnnxLintServer, params: lsp.InitializeParams) -> None:
        try:
            ls.settings = ServerSettings.from_client(params.initialization_options)
        except ConfigError as exc:
            ls.log(f"ignoring the initialization options: {exc}", lsp.MessageType.Error)
        ls.pull_mode = ls.client_pulls()

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: OnnxLintServer, params: lsp.InitializedParams) -> None:
        ls.pool.start()
        mode = "pull" if ls.pull_mode else "push"
        ls.log(f"onnx-lint {__version__} server ready ({mode} diagnostics, {ls.pool._size} workers)",
               lsp.MessageType.Info)
        await ls.watch()

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: OnnxLintServer, *args: Any) -> None:
        ls.shutdown_workers()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: OnnxLintServer, params: lsp.DidChangeConfigurationParams) -> None:
        raw = params.settings
        if not raw:
            ws = ls.client_capabilities.workspace
            if not (ws and ws.configuration):
                return
            try:
                answer = await ls.workspace_configuration_async(
                    lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section=SECTION)]))
            except Exception as exc:
                ls.log(f"cannot read the settings: {exc}", lsp.MessageType.Error)
                return
            raw = answer[0] if answer else None
        try:
            ls.settings = ServerSettings.from_client(raw, ls.settings)
        except ConfigError as exc:
            ls.tell(f"onnx-lint: {exc}; keeping the previous settings", lsp.MessageType.Error)
            return
        ls.log("settings changed; linting the open models again")
        ls.relint_all()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: OnnxLintServer, params: lsp.DidOpenTextDocumentParams) -> None:
        # Synchronous, like did_close: an async handler starts a loop turn late, so a quick
        # open-then-close would be tracked in the wrong order and leave the file marked open.
        path, is_view = model_path(params.text_document.uri)
        if path is None:
            return
        tracked = ls.track(path)
        if is_view:
            tracked.open_view = True
        else:
            tracked.open_file = True
        if ls.pull_mode:
            ls.lint_soon(path)  # the client pulls next: have the answer ready
        elif ls.settings.lint_on_open or is_view:
            asyncio.ensure_future(ls.refresh(path))

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: OnnxLintServer, params: lsp.DidSaveTextDocumentParams) -> None:
        path, _ = model_path(params.text_document.uri)
        if path is not None and path in ls.tracked and ls.settings.lint_on_save:
            ls.cache.forget(path)
            await ls.refresh(path)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: OnnxLintServer, params: lsp.DidCloseTextDocumentParams) -> None:
        path, is_view = model_path(params.text_document.uri)
        tracked = ls.tracked.get(path) if path is not None else None
        if tracked is None:
            return
        if is_view:
            tracked.open_view = False
        else:
            tracked.open_file = False
        tracked.pulled = False  # a client pulls for open documents only
        ls.clear(params.text_document.uri)
        ls.forget_if_unused(tracked, dropped_view=is_view)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: OnnxLintServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        ls.changed_on_disk(list(params.changes))

    @server.feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC,
                    lsp.DiagnosticOptions(identifier="onnx-lint", inter_file_dependencies=False,
                                          workspace_diagnostics=False))
    async def pull_diagnostics(ls: OnnxLintServer, params: lsp.DocumentDiagnosticParams):
        path, is_view = model_path(params.text_document.uri)
        if path is None:
            return lsp.RelatedFullDocumentDiagnosticReport(items=[])
        ls.track(path).pulled = True
        if is_view:
            outcome, view = await ls.view(path)
        else:
            outcome, view = await ls.outcome(path), None
        result_id = outcome.result_id + (":view" if is_view else "")
        if params.previous_result_id == result_id:
            return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        items = ls.diagnostics_for(outcome, params.text_document.uri, path, view)
        return lsp.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL_KIND]))
    async def code_action(ls: OnnxLintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        path, is_view = model_path(params.text_document.uri)
        if path is None:
            return []
        outcome, view = await ls.view(path) if is_view else (await ls.outcome(path), None)
        model_uri = from_fs_path(str(path))
        asked = {tuple(d.data["key"]) for d in params.context.diagnostics
                 if isinstance(d.data, dict) and d.source == "onnx-lint" and "key" in d.data}
        only = list(params.context.only or [])
        actions: list[lsp.CodeAction] = []
        fixable = [d for d in outcome.diagnostics if d.fixable]
        if _wants(only, lsp.CodeActionKind.QuickFix):
            for diagnostic in fixable:
                if asked and diagnostic.key() not in asked:
                    continue
                lsp_diagnostic = to_lsp(diagnostic, model_uri, view, ls.utf16())
                if not asked and not _range_overlaps(lsp_diagnostic.range, params.range):
                    continue
                title = quick_fix_title(diagnostic)
                actions.append(lsp.CodeAction(
                    title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[lsp_diagnostic], is_preferred=True,
                    command=lsp.Command(title=title, command="onnx-lint.fix",
                                        arguments=[model_uri, list(diagnostic.key())])))
        if fixable and _wants(only, FIX_ALL_KIND):
            title = f"Fix all {len(fixable)} safely fixable onnx-lint problem{'s' if len(fixable) > 1 else ''}"
            actions.append(lsp.CodeAction(title=title, kind=FIX_ALL_KIND,
                                          command=lsp.Command(title=title, command="onnx-lint.fixAll",
                                                              arguments=[model_uri])))
        return actions

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(ls: OnnxLintServer, params: lsp.HoverParams) -> lsp.Hover | None:
        path, is_view = model_path(params.text_document.uri)
        if path is None or path not in ls.tracked:
            return None
        task = ls.lints.get(path)
        if task is None or not task.done() or task.cancelled() or task.exception():
            return None  # never wait for a lint in a hover
        outcome = task.result()
        view = outcome.view if is_view else None
        here = lsp.Range(params.position, params.position)
        parts = []
        for diagnostic in outcome.diagnostics:
            if _range_overlaps(to_lsp(diagnostic, "", view, ls.utf16()).range, here):
                explanation = rule_explanation(diagnostic.code) or ""
                parts.append(f"**{diagnostic.code}** {diagnostic.message}\n\n" + explanation)
        if not parts:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)))

    def _path_argument(arguments: tuple) -> Path:
        if not arguments or not isinstance(arguments[0], str):
            raise JsonRpcException("expected the model's URI as the first argument", code=-32602)
        path, _ = model_path(arguments[0])
        if path is None:
            raise JsonRpcException(f"not an ONNX model URI: {arguments[0]}", code=-32602)
        return path

    @server.command("onnx-lint.fixAll")
    async def fix_all(ls: OnnxLintServer, *arguments: Any) -> dict:
        return await ls.fix(_path_argument(arguments), None)

    @server.command("onnx-lint.fix")
    async def fix_one(ls: OnnxLintServer, *arguments: Any) -> dict:
        path = _path_argument(arguments)
        if len(arguments) < 2 or not isinstance(arguments[1], list):
            raise JsonRpcException("expected the diagnostic's data.key as the second argument", code=-32602)
        return await ls.fix(path, [arguments[1]])

    @server.command("onnx-lint.showModel")
    async def show_model(ls: OnnxLintServer, *arguments: Any) -> dict:
        path = _path_argument(arguments)
        outcome, view = await ls.view(path)
        if view is None:
            problem = next((d.message for d in outcome.diagnostics if is_unreadable(d)), "it cannot be read")
            raise JsonRpcException(f"{path}: no textual view: {problem}", code=REQUEST_FAILED)
        return {"uri": view_uri(str(path)), "text": view.text,
                "diagnostics": [ls.protocol._converter.unstructure(d) for d in
                                ls.diagnostics_for(outcome, view_uri(str(path)), path, view)]}

    @server.command("onnx-lint.describeModel")
    async def describe_model(ls: OnnxLintServer, *arguments: Any) -> dict:
        """The model view's data: the summary and the diagnostics, as the Problems panel has them."""
        path = _path_argument(arguments)
        outcome = await ls.outcome(path)
        uri = from_fs_path(str(path))
        return {"uri": uri, "summary": outcome.summary,
                "diagnostics": [ls.protocol._converter.unstructure(d)
                                for d in ls.diagnostics_for(outcome, uri, path, None)]}

    @server.command("onnx-lint.findingGraph")
    async def finding_graph(ls: OnnxLintServer, *arguments: Any) -> dict:
        """The neighbourhood of one finding, for drawing: (model URI, the diagnostic's data.location)."""
        path = _path_argument(arguments)
        location = arguments[1] if len(arguments) > 1 else None
        if not isinstance(location, dict) or not isinstance(location.get("path"), str):
            raise JsonRpcException("expected the diagnostic's data.location as the second argument", code=-32602)
        fields = {k: location.get(k) for k in ("path", "tensor", "node", "op_type")}
        try:
            return await ls.pool.run(jobs.graph_job, str(path), fields, timeout=ls.settings.lint_timeout)
        except (JobFailed, WorkerCrashed, asyncio.TimeoutError) as exc:
            raise JsonRpcException(f"{path.name}: cannot draw this finding: {exc or 'timed out'}",
                                   code=REQUEST_FAILED) from None

    @server.command("onnx-lint.quantize")
    async def quantize(ls: OnnxLintServer, *arguments: Any) -> dict:
        path = _path_argument(arguments)
        options = arguments[1] if len(arguments) > 1 and isinstance(arguments[1], dict) else {}
        return await ls.quantize(path, options)

    return server
