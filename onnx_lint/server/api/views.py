"""Read-only answers about a model: hover, the textual view, the model view's data, a finding's drawing.

Hover never waits for a lint (it answers from a finished one or not at all),
so a busy worker never blocks the editor's pointer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from lsprotocol.converters import get_converter

from onnx_lint.lint.file_result import is_unreadable
from onnx_lint.rules import rule_explanation, rule_url
from onnx_lint.server import command_names as names
from onnx_lint.server.api.arguments import FindingLocation, GraphPath, Model, NodeIndex
from onnx_lint.server.api.common import OnnxLintServer, model_path, range_overlaps, request_failed
from onnx_lint.server.convert import model_file_uri, to_lsp, view_uri
from onnx_lint.server.workers import JobFailed, WorkerCrashed
from onnx_lint.server.workers import jobs_by_name as jobs

_CONVERTER = get_converter()  # lsprotocol's own: LSP types to the JSON a command result carries


def _as_json(diagnostics: list[lsp.Diagnostic]) -> list[Any]:
    return [_CONVERTER.unstructure(d) for d in diagnostics]


async def _view_job(ls: OnnxLintServer, path: Path, failure: str, job: Callable[..., Any], *args: Any) -> Any:
    """Run a view's job in a worker; a failed, crashed or timed-out job becomes the request's error."""
    session = ls.session
    try:
        return await session.pool.run(job, str(path), *args, timeout=session.settings.lint_timeout)
    except (JobFailed, WorkerCrashed, asyncio.TimeoutError) as exc:
        raise request_failed(f"{path.name}: {failure}: {exc or 'timed out'}") from None


def register(server: OnnxLintServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: OnnxLintServer, params: lsp.HoverParams) -> lsp.Hover | None:
        session = ls.session
        path, is_view = model_path(params.text_document.uri)
        if path is None or path not in session.tracked:
            return None
        outcome = session.finished_outcome(path)
        if outcome is None:
            return None  # never wait for a lint in a hover
        view = outcome.view if is_view else None
        here = lsp.Range(params.position, params.position)
        parts = []
        for diagnostic in outcome.diagnostics:
            if range_overlaps(to_lsp(diagnostic, "", view, session.capabilities.utf16).range, here):
                explanation = rule_explanation(diagnostic.code) or ""
                url = rule_url(diagnostic.code)
                more = f"\n\n[{diagnostic.code} on the docs site]({url})" if url else ""
                parts.append(f"**{diagnostic.code}** {diagnostic.message}\n\n" + explanation + more)
        if not parts:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)))

    @server.command(names.SHOW_MODEL)
    async def show_model(ls: OnnxLintServer, model: Model) -> dict:
        """The textual view of a model, with its diagnostics on the view's lines."""
        session, path = ls.session, model.path
        outcome, view = await session.view(path)
        if view is None:
            problem = next((d.message for d in outcome.diagnostics if is_unreadable(d)), "it cannot be read")
            raise request_failed(f"{path}: no textual view: {problem}")
        uri = view_uri(str(path))
        diagnostics = session.diagnostics_for(outcome, uri, path, view)
        return {"uri": uri, "text": view.text, "diagnostics": _as_json(diagnostics)}

    @server.command(names.DESCRIBE_MODEL)
    async def describe_model(ls: OnnxLintServer, model: Model) -> dict:
        """The model view's data: the summary and every finding (the view lists each), and the entries for
        the binary file's Problems panel (a run of findings of one cause as one), each linked to its first
        finding in the view by index."""
        session, path = ls.session, model.path
        outcome = await session.outcome(path)
        uri = model_file_uri(path)
        problems = [{"index": index, "diagnostic": _CONVERTER.unstructure(d)}
                    for index, d in session.problems_for(outcome, path)]
        return {"uri": uri, "summary": outcome.summary,
                "diagnostics": _as_json(session.diagnostics_for(outcome, uri, path, None, each=True)),
                "problems": problems,
                "trusted": session.settings.workspace_trusted, "restricted": session.settings.untrusted_reason}

    @server.command(names.FINDING_GRAPH)
    async def finding_graph(ls: OnnxLintServer, model: Model, location: FindingLocation) -> dict:
        """The neighbourhood of one finding, for drawing."""
        return await _view_job(ls, model.path, "cannot draw this finding", jobs.graph_job, location.fields())

    @server.command(names.MODEL_GRAPH)
    async def model_graph(ls: OnnxLintServer, model: Model) -> dict:
        """The whole model as a graph (every graph, compactly), for the graph view."""
        return await _view_job(ls, model.path, "no graph", jobs.model_graph_job)

    @server.command(names.COMPARE_MODELS)
    async def compare_models(ls: OnnxLintServer, model: Model, other: Model) -> dict:
        """The model compared with its twin (a fix, a quantization, a conversion, a simplification of it)."""
        if other.path == model.path:
            raise request_failed(f"{model.path.name}: compare it with another model, not with itself")
        return await _view_job(ls, model.path, f"cannot compare it with {other.path.name}", jobs.compare_job,
                               str(other.path))

    @server.command(names.GRAPH_NODE)
    async def graph_node(ls: OnnxLintServer, model: Model, graph: GraphPath, node: NodeIndex) -> dict:
        """One node in detail for the graph view."""
        return await _view_job(ls, model.path, "no details for this node", jobs.graph_node_job, graph.path,
                               node.index)
