"""Code actions and the commands that change files: fix one, fix all, quantize.

A fix runs in a worker under the fix contract (nothing is written unless the
fixed model is proven); quantize runs in a worker of its own with work-done
progress, and the client's cancel reaches it as an event: the job is asked to
stop at its next step and killed if it has not stopped within the grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from onnx_lint.base.errors import ConfigError
from onnx_lint.base.links import rule_page_url
from onnx_lint.lint.diagnostics import Diagnostic
from onnx_lint.server import command_names as names
from onnx_lint.server.api.arguments import DEFAULTS, FindingKey, Model, QuantizeOptions, RuleCode
from onnx_lint.server.api.common import (
    OnnxLintServer,
    model_path,
    range_overlaps,
    request_cancelled,
    request_failed,
)
from onnx_lint.server.convert import model_file_uri, quick_fix_title, to_lsp
from onnx_lint.server.output_path import OutputRefused, quantize_output
from onnx_lint.server.per_file_ignores import CannotIgnore, ignore_rule
from onnx_lint.server.session import Session
from onnx_lint.server.workers import CANCEL_GRACE_S, JobFailed, Worker, WorkerCrashed
from onnx_lint.server.workers import jobs_by_name as jobs

FIX_ALL_KIND = "source.fixAll.onnx-lint"
RULE_KIND = "quickfix.onnx-lint.rule"  # fix all of a rule, ignore it for the file, its docs (in the lightbulb)
CODE_ACTION_OPTIONS = lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, RULE_KIND, FIX_ALL_KIND])


def _wants(only: list[str] | None, kind: str) -> bool:
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


async def code_actions(session: Session, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """One quick fix per fixable diagnostic in range (or asked for), and one fix-all."""
    path, is_view = model_path(params.text_document.uri)
    if path is None or not session.settings.workspace_trusted:
        return []  # an untrusted workspace is never written to
    outcome, view = await session.view(path) if is_view else (await session.outcome(path), None)
    model_uri = model_file_uri(path)
    asked = {tuple(d.data["key"]) for d in params.context.diagnostics
             if isinstance(d.data, dict) and d.source == "onnx-lint" and "key" in d.data}
    only = list(params.context.only or [])
    actions: list[lsp.CodeAction] = []
    fixable = [d for d in outcome.diagnostics if d.fixable]
    if _wants(only, lsp.CodeActionKind.QuickFix):
        for diagnostic in fixable:
            if asked and diagnostic.key() not in asked:
                continue
            lsp_diagnostic = to_lsp(diagnostic, model_uri, view, session.capabilities.utf16)
            if not asked and not range_overlaps(lsp_diagnostic.range, params.range):
                continue
            title = quick_fix_title(diagnostic)
            actions.append(lsp.CodeAction(
                title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[lsp_diagnostic], is_preferred=True,
                command=lsp.Command(title=title, command=names.FIX,
                                    arguments=[model_uri, list(diagnostic.key())])))
    if _wants(only, RULE_KIND):
        actions += _rule_actions(session, outcome.diagnostics, fixable, model_uri, view, params, asked)
    if fixable and _wants(only, FIX_ALL_KIND):
        title = f"Fix all {len(fixable)} safely fixable onnx-lint problem{'s' if len(fixable) > 1 else ''}"
        actions.append(lsp.CodeAction(title=title, kind=FIX_ALL_KIND,
                                      command=lsp.Command(title=title, command=names.FIX_ALL,
                                                          arguments=[model_uri])))
    return actions


def _rule_actions(session: Session, diagnostics: list[Diagnostic], fixable: list[Diagnostic], model_uri: str,
                  view: Any, params: lsp.CodeActionParams, asked: set) -> list[lsp.CodeAction]:
    """Per rule of the findings in range, as ruff's editors offer them: fix all of this rule, ignore
    this rule for this file (the configuration's per-file-ignores), show the rule's documentation."""
    actions: list[lsp.CodeAction] = []
    seen: set[str] = set()
    for diagnostic in diagnostics:
        if diagnostic.code in seen or not diagnostic.code.startswith("OL") or diagnostic.code == "OL000":
            continue
        lsp_diagnostic = to_lsp(diagnostic, model_uri, view, session.capabilities.utf16)
        if asked and diagnostic.key() not in asked:
            continue
        if not asked and not range_overlaps(lsp_diagnostic.range, params.range):
            continue
        seen.add(diagnostic.code)
        code = diagnostic.code
        same = [d for d in fixable if d.code == code]

        wanted = [(f"Ignore {code} for this file", names.IGNORE_RULE, [model_uri, code]),
                  (f"Show documentation for {code}", names.SHOW_RULE_DOCS, [code])]
        if len(same) > 1:
            wanted.insert(0, (f"Fix all {len(same)} {code} problems", names.FIX_RULE, [model_uri, code]))
        actions += [lsp.CodeAction(title=title, kind=RULE_KIND, diagnostics=[lsp_diagnostic],
                                   command=lsp.Command(title=title, command=command, arguments=arguments))
                    for title, command, arguments in wanted]
    return actions


def refuse_untrusted(session: Session, what: str) -> None:
    """An untrusted workspace gets a static lint only: no command that runs a model or writes a file."""
    reason = session.settings.untrusted_reason
    if reason is not None:
        session.tell(f"onnx-lint does not {what} in an untrusted workspace", lsp.MessageType.Warning)
        raise request_failed(f"cannot {what}: {reason}")


def refuse_outside(session: Session, path: Path) -> None:
    """A fix rewrites the model itself: only one the user opened, or one inside a workspace folder once every
    link and ``..`` is resolved (as quantize confines its output), may be written."""
    if path in session.tracked:
        return
    try:
        resolved = Path(os.path.realpath(path))
        folders = [Path(os.path.realpath(folder)) for folder in session.index.folders]
    except (OSError, ValueError) as exc:
        raise request_failed(f"{path}: cannot resolve the path ({exc}); nothing was written") from None
    if not any(resolved.is_relative_to(folder) for folder in folders):
        raise request_failed(f"{path} resolves to {resolved}, outside every workspace folder and not open in the "
                             "editor; the server fixes only models inside them; nothing was written")


async def fix(session: Session, path: Path, only: list[list] | None) -> dict:
    """Fix all (``only`` None) or the listed findings of a model; show the new diagnostics."""
    refuse_untrusted(session, "fix")
    refuse_outside(session, path)
    try:
        selection = session.selection(path)
        data = await session.pool.run(jobs.fix_job, str(path), list(selection.enabled), only,
                                      session.settings.runtime_check, selection.runtime_probe,
                                      selection.inference_budget,
                                      timeout=session.settings.lint_timeout * 2)
    except (ConfigError, JobFailed) as exc:
        session.tell(str(exc), lsp.MessageType.Error)
        raise request_failed(str(exc)) from None
    except WorkerCrashed as exc:
        message = f"{path}: onnx-lint's worker crashed while fixing ({exc}); nothing was written"
        session.tell(message, lsp.MessageType.Error)
        raise request_failed(message) from None
    remaining = [Diagnostic.from_record(r) for r in data["diagnostics"]]
    if data["written"]:
        session.cache.forget(path)  # the next lint reads the new bytes (and summarizes them)
        for note in data["notes"]:
            session.log(f"{path}: {note}")
    if path in session.tracked:
        await session.refresh(path)
    fixed = len(data["fixed"])
    message = (f"Fixed {fixed} problem{'s' if fixed != 1 else ''} in {path.name}" if data["written"]
               else f"Nothing to fix in {path.name}")
    session.log(f"{path}: {message}")
    return {"written": data["written"], "fixed": fixed, "remaining": len(remaining), "message": message,
            "notes": data["notes"]}


class _QuantizeProgress:
    """Work-done progress of one quantize run, and the client's cancel of it as an event."""

    def __init__(self, session: Session, title: str) -> None:
        self.session = session
        self.title = title
        self.token = str(uuid.uuid4())
        self.shown = False
        self.cancel_requested = asyncio.Event()

    async def begin(self) -> None:
        if not self.session.capabilities.work_done_progress:
            return
        progress = self.session.client.work_done_progress
        try:
            await progress.create_async(self.token)
        except Exception:
            return
        progress.begin(self.token, lsp.WorkDoneProgressBegin(title=self.title, cancellable=True,
                                                             message="starting", percentage=0))
        self.shown = True
        cancel = progress.tokens.get(self.token)  # pygls cancels this future on window/workDoneProgress/cancel
        if cancel is not None:
            loop = asyncio.get_running_loop()
            cancel.add_done_callback(
                lambda future: loop.call_soon_threadsafe(self.cancel_requested.set) if future.cancelled() else None)

    def report(self, event: dict) -> None:
        if "note" in event:
            self.session.log(event["note"])
            return
        if not self.shown:
            return
        total, done = event.get("total"), event.get("done", 0)
        percentage = int(100 * done / total) if total else None
        message = f"{event['title']} ({done}/{total})" if total else event["title"]
        self.session.client.work_done_progress.report(
            self.token, lsp.WorkDoneProgressReport(message=message, percentage=percentage))

    def end(self, message: str) -> None:
        progress = self.session.client.work_done_progress
        if self.shown:
            progress.end(self.token, lsp.WorkDoneProgressEnd(message=message))
        progress.tokens.pop(self.token, None)

    async def stop_on_cancel(self, worker: Worker, job: asyncio.Future) -> None:
        """On the client's cancel: ask the job to stop, and kill it if it does not within the grace period."""
        await self.cancel_requested.wait()
        self.session.log("quantize: cancel requested; stopping at the next step")
        worker.request_cancel()
        _done, pending = await asyncio.wait({job}, timeout=CANCEL_GRACE_S)
        if pending:
            worker.stop()


async def quantize(session: Session, path: Path, options: dict[str, Any]) -> dict:
    """Quantize a model to a new file in a worker of its own, with progress and cancel (``options`` checked by
    ``QuantizeOptions``, the settings' when they arrived)."""
    refuse_untrusted(session, "quantize")
    merged = {**session.settings.quantize, **options}
    try:
        output = quantize_output(path, merged.pop("output", None) or None, session.index.folder_of(path))
    except OutputRefused as exc:
        raise request_failed(str(exc)) from None
    merged["force"] = options.get("force") is True  # only the command itself, never a setting, may replace a file
    if not merged["force"] and os.path.lexists(output):
        raise request_failed(f"{output} already exists; quantize replaces a file only when the command says "
                             "force: true; nothing was written")
    progress = _QuantizeProgress(session, f"Quantize {path.name} to INT8+FP16")
    await progress.begin()
    worker = Worker()
    session.quantize_workers.add(worker)
    limit = session.settings.quantize_timeout
    job = asyncio.ensure_future(worker.call(jobs.quantize_job, str(path), str(output), merged,
                                            on_event=progress.report, timeout=limit))
    watcher = session.tasks.spawn(progress.stop_on_cancel(worker, job))
    try:
        result = await job
    except asyncio.TimeoutError:
        message = (f"quantize took longer than {limit:g} s and was stopped (setting quantizeTimeout); "
                   "nothing was written")
        progress.end(message)
        session.tell(message, lsp.MessageType.Error)
        raise request_failed(message) from None
    except (JobFailed, WorkerCrashed) as exc:
        cancelled = progress.cancel_requested.is_set()
        if isinstance(exc, JobFailed):
            problem = str(exc)
            cancelled = cancelled or problem.startswith("cancelled")
        else:  # killed after the cancel's grace period, or a real crash
            problem = f"{path}: ONNX Runtime crashed while quantizing ({exc}); nothing was written"
        message = "quantize cancelled; nothing was written" if cancelled else problem
        progress.end(message)
        if not cancelled:
            session.tell(message, lsp.MessageType.Error)
        raise (request_cancelled if cancelled else request_failed)(message) from None
    finally:
        watcher.cancel()
        worker.stop()
        session.quantize_workers.discard(worker)
    if not result.get("written", True):
        done = f"not written: the accuracy target was missed ({result['output']})"
    elif result.get("fp16Only"):
        done = f"nothing could be quantized to INT8: FP16-only model written to {result['output']}"
    else:
        done = f"Quantized model written to {result['output']}"
    progress.end(done)
    session.log(result["summary"])
    for warning in result["warnings"]:
        session.log(warning, lsp.MessageType.Warning)
    session.tell(done, lsp.MessageType.Info if result.get("exitCode", 0) == 0 else lsp.MessageType.Warning)
    return result


def register(server: OnnxLintServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, CODE_ACTION_OPTIONS)
    async def code_action(ls: OnnxLintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return await code_actions(ls.session, params)

    @server.command(names.FIX_ALL)
    async def fix_all(ls: OnnxLintServer, model: Model) -> dict:
        return await fix(ls.session, model.path, None)

    @server.command(names.FIX)
    async def fix_one(ls: OnnxLintServer, model: Model, key: FindingKey) -> dict:
        return await fix(ls.session, model.path, [list(key.values)])

    @server.command(names.FIX_RULE)
    async def fix_rule(ls: OnnxLintServer, model: Model, rule: RuleCode) -> dict:
        """Fix every fixable finding of one rule in a model."""
        outcome = await ls.session.outcome(model.path)
        keys = [list(d.key()) for d in outcome.diagnostics if d.fixable and d.code == rule.code]
        return await fix(ls.session, model.path, keys)

    @server.command(names.IGNORE_RULE)
    async def ignore_rule_command(ls: OnnxLintServer, model: Model, rule: RuleCode) -> dict:
        """Ignore one rule for one model: its configuration file's per-file-ignores gets the entry."""
        session, path, code = ls.session, model.path, rule.code
        refuse_untrusted(session, "change configuration files")
        try:
            config = ignore_rule(path, code, session.index.folder_of(path))
        except (CannotIgnore, ConfigError, OSError) as exc:
            session.tell(str(exc), lsp.MessageType.Error)
            raise request_failed(str(exc)) from None
        session.index.invalidate(config)
        if path in session.tracked:
            await session.refresh(path)
        message = f"{code} is ignored for {path.name} ({config.name})"
        session.log(f"{path}: {message}")
        return {"config": str(config), "message": message}

    @server.command(names.SHOW_RULE_DOCS)
    async def show_rule_docs(ls: OnnxLintServer, rule: RuleCode) -> dict:
        """Open a rule's page of the docs site in the user's browser (window/showDocument)."""
        url = rule_page_url(rule.code)
        with contextlib.suppress(Exception):  # a client without showDocument still gets the URL back
            await ls.window_show_document_async(lsp.ShowDocumentParams(uri=url, external=True))
        return {"url": url}

    @server.command(names.QUANTIZE)
    async def quantize_command(ls: OnnxLintServer, model: Model, options: QuantizeOptions = DEFAULTS) -> dict:
        return await quantize(ls.session, model.path, options.checked)
