"""The server's state and the lints it runs (as ruff_server's ``Session``).

Model files are binary, so the text a client sends is never used: every
lint reads the file from disk. Clients that pull diagnostics
(``textDocument/diagnostic``, VS Code's custom-editor tabs among them) are
never pushed any, so that nothing shows twice; the others get
``publishDiagnostics`` on open, save and change on disk.

The handler modules of ``onnx_lint.server.api`` route messages here; all onnx
work runs in worker processes (``workers``), so this module only schedules
lints, caches their outcomes and converts them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path

from onnx_lint.base.errors import ConfigError, ModelLoadError
from onnx_lint.formats.repeats import Repeat, said_once
from onnx_lint.lint.diagnostics import Diagnostic
from onnx_lint.lint.file_result import is_unreadable, unreadable_diagnostic
from onnx_lint.model.file_checks import check_wire, stat_model_file
from onnx_lint.rules import CODES
from onnx_lint.server.capabilities import ResolvedClientCapabilities
from onnx_lint.server.convert import model_file_uri, repeat_to_lsp, to_lsp, view_uri
from onnx_lint.server.results import Outcome, OutcomeCache, file_digest, stat_key
from onnx_lint.server.settings import ServerSettings
from onnx_lint.server.settings_index import RuleSelection, SettingsIndex
from onnx_lint.server.tasks import BackgroundTasks
from onnx_lint.server.view_model import ModelView
from onnx_lint.server.workers import JobFailed, Worker, WorkerCrashed, WorkerPool
from onnx_lint.server.workers import jobs_by_name as jobs

ALL_CODES = list(CODES)


def _pool_size() -> int:
    """Two workers, even on one or two cores: a long lint of one model (its slow engines bounded by the
    inference budget) must not hold up the diagnostics of another."""
    return 2


@dataclass
class Tracked:
    """A model the client shows: as a text document, as a view, or by pulling its diagnostics."""

    path: Path
    open_file: bool = False
    open_view: bool = False
    pulled: bool = False
    stat: tuple[int, int, int] | None = None


class Session:
    """Everything one client session holds: capabilities, settings, tracked files, cache, workers, tasks."""

    def __init__(self, client: LanguageServer) -> None:
        self.client = client
        self.capabilities = ResolvedClientCapabilities()
        self.settings = ServerSettings()
        self.index = SettingsIndex()
        self.pool = WorkerPool(_pool_size())
        self.cache = OutcomeCache()
        self.tracked: dict[Path, Tracked] = {}
        self.lints: dict[Path, asyncio.Task[Outcome]] = {}
        self.tasks = BackgroundTasks()
        self.quantize_workers: set[Worker] = set()

    # -- messages to the user --------------------------------------------------------------
    def log(self, message: str, kind: lsp.MessageType = lsp.MessageType.Log) -> None:
        self.client.window_log_message(lsp.LogMessageParams(type=kind, message=message))

    def tell(self, message: str, kind: lsp.MessageType = lsp.MessageType.Info) -> None:
        self.client.window_show_message(lsp.ShowMessageParams(type=kind, message=message))

    @property
    def pull_mode(self) -> bool:
        """Whether the client pulls diagnostics (and is never pushed any)."""
        return self.capabilities.pull_diagnostics

    # -- outcomes ---------------------------------------------------------------------------
    def track(self, path: Path) -> Tracked:
        if path not in self.tracked:
            self.tracked[path] = Tracked(path)
        return self.tracked[path]

    def selection(self, path: Path) -> RuleSelection:
        """The rules for ``path`` from the settings index (no configuration file is read when it is known)."""
        selection = self.index.selection(path, self.settings, ALL_CODES)
        # An untrusted model is never run; the editor can forbid the runtime probe too (the file can only allow it).
        if not self.settings.workspace_trusted or not self.settings.runtime_probe:
            selection = replace(selection, runtime_probe=False)
        return selection

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

    def lint_soon(self, path: Path) -> asyncio.Task[Outcome]:
        """The lint of a file that is running, or a new one (a finished task may hold an old outcome)."""
        task = self.lints.get(path)
        return task if task is not None and not task.done() else self.start_lint(path)

    def start_lint(self, path: Path) -> asyncio.Task[Outcome]:
        """Start linting a file now; a lint of it still running is stale and is cancelled (which kills its job)."""
        old = self.lints.get(path)
        if old is not None and not old.done():
            old.cancel()
        task = self.tasks.spawn(self._lint(path))  # held until done, even once a newer lint replaces it here
        self.lints[path] = task
        return task

    async def _lint(self, path: Path) -> Outcome:
        try:
            selection = self.selection(path)
        except ConfigError as exc:
            return Outcome("config-error", (), [unreadable_diagnostic(str(path), f"configuration error: {exc}")])
        enabled, probe = selection.enabled, selection.runtime_probe
        stat = stat_key(path)
        if stat is not None:
            self.track(path).stat = stat  # recorded first, so polling sees a refused file change too
        try:  # refuse what stat alone can refuse: hashing a FIFO would block, a 2 GiB file would crawl
            stat_model_file(path)
            check_wire(path)  # and what a few bytes refuse: 2 GiB of zeros is not hashed either
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
        cached = self.cache.get(digest, enabled, probe, selection.inference_budget)
        if cached is not None:
            return cached
        diagnostics, errors, summary = await self._run_lint(path, selection)
        outcome = Outcome(digest, enabled, diagnostics, errors, summary, runtime_probe=probe,
                          inference_budget=selection.inference_budget)
        self.cache.put(outcome)
        return outcome

    async def _run_lint(self, path: Path, selection: RuleSelection) -> tuple[list[Diagnostic], list[str], dict | None]:
        timeout = self.settings.lint_timeout
        try:
            data = await self.pool.run(jobs.lint_job, str(path), list(selection.enabled), selection.runtime_probe,
                                       selection.inference_budget, timeout=timeout)
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

    def finished_outcome(self, path: Path) -> Outcome | None:
        """The outcome of the last lint of ``path`` if it has finished (for answers that must not wait)."""
        task = self.lints.get(path)
        if task is None or not task.done() or task.cancelled() or task.exception():
            return None
        return task.result()

    # -- publishing -------------------------------------------------------------------------
    def diagnostics_for(self, outcome: Outcome, uri: str, path: Path, view: ModelView | None, *,
                        each: bool = False) -> list[lsp.Diagnostic]:
        """The outcome's LSP diagnostics, a run of findings of one cause as one entry (``formats.repeats``);
        ``each``: one per finding, as the model view lists them (its entries are linked by index)."""
        model_uri = from_fs_path(str(path)) or uri
        utf16 = self.capabilities.utf16
        if each:
            return [to_lsp(d, model_uri, view, utf16) for d in outcome.diagnostics]
        shown_uri = view_uri(str(path)) if view is not None else model_uri
        return [repeat_to_lsp(d, model_uri, shown_uri, view, utf16, self.capabilities.related_information)
                if isinstance(d, Repeat) else to_lsp(d, model_uri, view, utf16)
                for d in said_once(outcome.diagnostics)]

    def problems_for(self, outcome: Outcome, path: Path) -> list[tuple[int, lsp.Diagnostic]]:
        """The binary model's entries for the editor's Problems panel, a run of findings of one cause as one
        entry, each with the index of its (first) finding in the model view's list of every finding."""
        model_uri = from_fs_path(str(path)) or model_file_uri(path)
        utf16 = self.capabilities.utf16
        index = {id(d): i for i, d in enumerate(outcome.diagnostics)}
        entries: list[tuple[int, lsp.Diagnostic]] = []
        for item in said_once(outcome.diagnostics):
            if isinstance(item, Repeat):
                entries.append((index[id(item.first)], repeat_to_lsp(
                    item, model_uri, model_uri, None, utf16, self.capabilities.related_information)))
            else:
                entries.append((index[id(item)], to_lsp(item, model_uri, None, utf16)))
        return entries

    async def refresh(self, path: Path) -> None:
        """Re-lint a tracked file and show the result (push, or ask pulling clients to pull)."""
        try:
            await self.start_lint(path)
        except asyncio.CancelledError:
            return
        await self.publish(path)

    def refresh_soon(self, path: Path) -> None:
        """``refresh`` in the background (the task is kept until it ends)."""
        self.tasks.spawn(self.refresh(path))

    async def publish(self, path: Path) -> None:
        tracked = self.tracked.get(path)
        if tracked is None:
            return
        if self.pull_mode:
            if self.capabilities.diagnostic_refresh:
                with contextlib.suppress(Exception):
                    await self.client.workspace_diagnostic_refresh_async(None)
            return
        outcome = await self.outcome(path)
        file_uri = model_file_uri(path)
        if tracked.open_file:
            self.push(file_uri, self.diagnostics_for(outcome, file_uri, path, None))
        if tracked.open_view:
            _outcome, view = await self.view(path)
            self.push(view_uri(str(path)), self.diagnostics_for(outcome, file_uri, path, view))

    def push(self, uri: str, diagnostics: list[lsp.Diagnostic]) -> None:
        self.client.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))

    def clear(self, uri: str) -> None:
        if not self.pull_mode:
            self.push(uri, [])

    def forget_if_unused(self, tracked: Tracked, dropped_view: bool) -> None:
        """Let go of what a closed file held, so a long session's memory stays bounded.

        A closed view drops its text (the largest thing an outcome holds); a file
        nobody has open loses its entry and its lint task (a running one is
        stopped). Outcomes stay in the bounded cache for a quick re-open.
        """
        outcome = self.finished_outcome(tracked.path)
        if dropped_view and outcome is not None:
            outcome.view = None
        if tracked.open_file or tracked.open_view or tracked.pulled:
            return
        del self.tracked[tracked.path]
        task = self.lints.pop(tracked.path, None)
        if task is not None and not task.done():
            task.cancel()

    def relint_all(self) -> None:
        for path in list(self.tracked):
            self.refresh_soon(path)

    def configuration_changed(self, *changed: Path) -> None:
        """Configuration files (the editor's settings, when none is named) changed: resolve again, lint
        the open models again (once)."""
        for config in changed or (None,):
            self.index.invalidate(config)
        self.relint_all()

    def model_changed(self, path: Path) -> None:
        """A model changed on disk: its digest is stale; lint it again if it is shown and the user wants that."""
        self.cache.forget(path)
        if path in self.tracked and self.settings.lint_on_change:
            self.refresh_soon(path)

    # -- the end ----------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop every lint, background task and worker (``shutdown``, or the end of the stream)."""
        self.tasks.cancel_all()  # lints and the file poll among them
        self.pool.stop()
        for worker in list(self.quantize_workers):
            worker.stop()
