"""What the server's worker processes run: lint, fix, view and quantize one file.

Each job takes and returns plain data (diagnostic records, JSON-ready dicts)
so that nothing but builtins crosses the process boundary. ``emit`` sends an
event (quantize progress) to the server; ``cancelled`` says whether the user
asked to stop.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from onnx_lint.base.progress import Progress
from onnx_lint.fixes.session import FixSession
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Location
from onnx_lint.lint.linter import lint_file
from onnx_lint.model.graphs import ROOT
from onnx_lint.model.load import read_model
from onnx_lint.model.provenance import read_record
from onnx_lint.model.shapes import format_info, value_tensor_info
from onnx_lint.model.tensors import qdq_nodes
from onnx_lint.rules import ALL_RULES
from onnx_lint.server.text_view import render_view

Emit = Callable[[Any], None]
Check = Callable[[], bool]


def model_summary(ctx: LintContext) -> dict:
    """What the editor's model view shows: identity, opsets, and each input and output, declared and derived."""
    model = ctx.loaded.model
    outputs = {d.name: d for d in ctx.declarations if d.graph == ROOT and d.kind == "output"}
    return {
        "producer": model.producer_name, "producerVersion": model.producer_version,
        "provenance": provenance_line(ctx),
        "irVersion": model.ir_version, "graph": model.graph.name,
        "opsets": [{"domain": o.domain or "ai.onnx", "version": o.version} for o in model.opset_import],
        "nodes": sum(len(scope.graph.node) for scope in ctx.scopes),
        "inputs": [{"name": v.name, "declared": format_info(value_tensor_info(v))}
                   for v in model.graph.input],
        "outputs": [{"name": v.name,
                     "declared": format_info(outputs[v.name].declared) if v.name in outputs else "<no type>",
                     "derived": format_info(outputs[v.name].derived) if v.name in outputs else "<no type>",
                     "engine": outputs[v.name].engine if v.name in outputs else None}
                    for v in model.graph.output],
    }


def provenance_line(ctx: LintContext) -> str | None:
    """"Quantized by onnx-lint 0.1.0 from model.onnx, ..." for a model quantize wrote, saying so when its Q/DQ
    were edited since (then OL202/OL205 report it as any Q/DQ model); None for any other model."""
    record = read_record(ctx.model)
    if record is None:
        return None
    count = sum(1 for _ in qdq_nodes(ctx.scopes))
    edited = "" if count == record.qdq_nodes else (f"; its Q/DQ were edited since ({record.qdq_nodes} recorded, "
                                                   f"{count} now)")
    return record.describe() + edited


# The last linted model's context (and the graph indexes its drawings built), so that drawing its
# findings after the lint (the model view's usual next requests) needs no second inference and no
# second pass over the graph. One entry: bounded memory.
_recent: tuple[tuple, LintContext, dict] | None = None


def _file_key(path: str) -> tuple | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None  # the lint itself says what is wrong with the file
    return (path, stat.st_size, stat.st_mtime_ns, stat.st_ino)


def lint_job(path: str, enabled: list[str], runtime_probe: bool, inference_budget: float | None = None, *,
             emit: Emit, cancelled: Check) -> dict:
    """Diagnostics of one file (an unreadable file gives its single OL000 diagnostic) and its summary.

    ``runtime_probe`` and ``inference_budget`` are the configuration file's ``runtime-probe`` and
    ``inference-budget``, resolved by the server's settings index.
    """
    global _recent
    key = _file_key(path)
    result, ctx = lint_file(Path(path), path, ALL_RULES, set(enabled).__contains__,
                            runtime_probe=runtime_probe, inference_budget=inference_budget)
    _recent = (key, ctx, {}) if ctx is not None and key is not None else None
    summary = None
    if ctx is not None:
        try:
            summary = model_summary(ctx)
        except Exception as exc:  # the diagnostics matter more than the summary
            result.internal_errors.append(f"{path}: no model summary: {type(exc).__name__}: {exc}")
    return {"diagnostics": [d.to_record() for d in result.diagnostics], "errors": result.internal_errors,
            "notes": result.notes, "summary": summary}


def graph_job(path: str, location: dict, *, emit: Emit, cancelled: Check) -> dict:
    """The drawing of one finding's neighbourhood (see ``onnx_lint.lint.neighbourhood``)."""
    from onnx_lint.lint.neighbourhood import (
        finding_graph,  # here, not at the top: the server process imports this module
    )

    global _recent
    key = _file_key(path)
    if _recent is not None and key is not None and _recent[0] == key:
        _key, ctx, indexes = _recent
    else:
        ctx, indexes = LintContext(read_model(Path(path)), path), {}
        _recent = (key, ctx, indexes) if key is not None else None
    return finding_graph(ctx, Location(**location), indexes=indexes)


def _context(path: str) -> LintContext:
    """The last lint's context when it is of this file as it is now, else a fresh one (kept for next time)."""
    global _recent
    key = _file_key(path)
    if _recent is not None and key is not None and _recent[0] == key:
        return _recent[1]
    ctx = LintContext(read_model(Path(path)), path)
    _recent = (key, ctx, {}) if key is not None else None
    return ctx


def model_graph_job(path: str, *, emit: Emit, cancelled: Check) -> dict:
    """Every graph of the model, compactly, for the whole-graph view (see ``onnx_lint.server.graph_data``)."""
    from onnx_lint.server.graph_data import model_graph

    ctx = _context(path)
    graph = model_graph(ctx.scopes, ctx)  # with the lint's inference: each edge's shape
    errors = int8_errors(ctx)
    if errors:
        graph["int8Error"] = errors
    return graph


def int8_errors(ctx: LintContext) -> dict[str, list[float]] | None:
    """Per INT8 node of a model quantize wrote: its share of the error and its worst-output cosine when alone in
    INT8, as its record holds them; None when there is no record, or its Q/DQ were edited since (the figures
    would describe another model)."""
    record = read_record(ctx.model)
    if record is None or not record.sensitivity or sum(1 for _ in qdq_nodes(ctx.scopes)) != record.qdq_nodes:
        return None
    return record.sensitivity


def graph_node_job(path: str, graph: str, index: int, *, emit: Emit, cancelled: Check) -> dict:
    """One node of the whole-graph view in detail: attributes, inputs and outputs declared and derived."""
    from onnx_lint.server.graph_data import node_details

    ctx = _context(path)
    details = node_details(ctx, graph, index)
    found = (int8_errors(ctx) or {}).get(details["name"]) if graph == ctx.scopes[0].path else None
    if found is not None:
        details["int8Error"] = {"share": found[0], "cosineAlone": found[1]}
    return details


def compare_job(path: str, other: str, *, emit: Emit, cancelled: Check) -> dict:
    """The model compared with another (``onnx_lint.lint.compare``): which is the original is decided from
    the files (``order_twins``); ``viewed`` says whether this view's model is the ``before`` or the ``after``."""
    from onnx_lint.lint.compare import compare_models, order_twins

    ctx = _context(path)
    twin = LintContext(read_model(Path(other)), other)
    before, after, why = order_twins(ctx, twin)
    result = compare_models(before, after).to_json()
    result["viewed"] = "after" if after is ctx else "before"
    result["why"] = why
    return result


def view_job(path: str, *, emit: Emit, cancelled: Check) -> dict:
    """The textual view with its anchors (the model must be readable)."""
    return render_view(read_model(Path(path)).model).to_json()


def fix_job(path: str, enabled: list[str], only: list[list] | None, runtime_check: bool, runtime_probe: bool,
            inference_budget: float | None = None, *, emit: Emit, cancelled: Check) -> dict:
    """Fix all (``only`` is None) or the listed findings under the fix contract (docs/design.md, "The fix contract")."""
    allowed = set(enabled).__contains__
    session = FixSession.lint(Path(path), path, ALL_RULES, allowed, runtime_probe=runtime_probe,
                              inference_budget=inference_budget)
    session.linted()  # FixError, naming the problem, when the model cannot be linted
    result = session.result
    keys = None if only is None else {tuple(k) for k in only}
    lint_notes = len(result.notes)  # the reply's notes are the fix's own
    plan = session.fix(runtime_check=runtime_check, only=keys)
    return {"written": result.written, "fixed": [d.to_record() for d in result.fixed],
            "notes": result.notes[lint_notes:],
            "diagnostics": [d.to_record() for d in (plan.relint if plan else result.diagnostics)]}


class EventProgress(Progress):
    """Quantize progress as events for LSP work-done progress, at most a few per second."""

    def __init__(self, emit: Emit, cancelled: Check) -> None:
        self._emit, self._cancelled = emit, cancelled
        self._title, self._done, self._sent = "", 0, 0.0
        self._total: int | None = None

    def stage(self, title: str, total: int | None = None) -> None:
        self._title, self._total, self._done = title, total, 0
        self._send(force=True)

    def advance(self, units: int = 1) -> None:
        self._done += units
        self._send()

    def note(self, message: str) -> None:
        self._emit({"note": message})

    def cancelled(self) -> bool:
        return self._cancelled()

    def _send(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._sent > 0.2:
            self._sent = now
            self._emit({"title": self._title, "done": self._done, "total": self._total})


def quantize_job(path: str, output: str, options: dict, *, emit: Emit, cancelled: Check) -> dict:
    """The quantize pipeline with the server's options (checked by ``server/quantize_options.py``), under this
    worker's memory cap; returns the report and its text summary."""
    source, target = Path(path), Path(output)
    from onnx_lint.quantization.options import QuantizeError

    _cap_memory(source)
    try:
        return _quantize(source, target, options, emit, cancelled)
    except MemoryError:
        raise QuantizeError(f"{source}: quantize ran out of its memory cap ({_memory_cap(source) / 2**30:.0f} GiB "
                            f"of address space for this model); nothing was written") from None
    except OSError as exc:  # a full TMPDIR, a read-only output folder
        raise QuantizeError(f"{exc.filename or target}: {exc.strerror or exc}; nothing was written") from None


# A quantize worker's address-space cap: room for ONNX Runtime's calibration sessions and the copies of the
# weights the pipeline makes, with a floor for small models (a worker runs one quantize job, then goes).
QUANTIZE_MEMORY_FLOOR = 8 << 30
QUANTIZE_MEMORY_PER_MODEL_BYTE = 12


def _memory_cap(source: Path) -> int:
    try:
        size = source.stat().st_size
    except OSError:
        size = 0
    return max(QUANTIZE_MEMORY_FLOOR, QUANTIZE_MEMORY_PER_MODEL_BYTE * size)


def _cap_memory(source: Path) -> None:
    """Cap this worker's address space before any work (it serves this one job and is then stopped)."""
    try:
        import resource
    except ImportError:  # Windows: the job's time limit remains
        return
    cap = _memory_cap(source)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft > cap:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _quantize(source: Path, target: Path, options: dict, emit: Emit, cancelled: Check) -> dict:
    from onnx_lint.quantization.calibration import calibration_inputs, parse_input_shape
    from onnx_lint.quantization.from_file import RANDOM_WARNING
    from onnx_lint.quantization.pipeline import QuantizeOptions, quantize_model
    from onnx_lint.quantization.report import format_summary

    data = Path(options["calibrationData"]) if options.get("calibrationData") else None
    shapes = dict(parse_input_shape(s) for s in options.get("inputShapes", []))
    samples, calibration = calibration_inputs(read_model(source).model, data, shapes, options.get("samples", 8))
    calibration["method"] = options.get("calibrationMethod", "auto")
    settings = QuantizeOptions(calibration["method"], tuple(options["opTypes"]) if options.get("opTypes") else None,
                               tuple(options.get("excludeNodes", ())), bool(options.get("perChannel", True)),
                               bool(options.get("keepIoTypes", True)), int(options.get("validationSamples", 16)),
                               float(options["minCosine"]) if options.get("minCosine") is not None else None,
                               float(options.get("fallbackSeconds", 300.0)), bool(options.get("outputQdq", False)),
                               bool(options.get("int8OutputLayers", False)),
                               bool(options.get("int8SmallLayers", False)), force=options.get("force") is True,
                               target=options.get("target", "onnxruntime"),
                               sensitivity_seconds=float(options.get("sensitivitySeconds", 120.0)))
    report = quantize_model(source, target, samples, settings, ALL_RULES, EventProgress(emit, cancelled),
                            calibration=calibration)
    if calibration["random"]:
        report.warnings.insert(0, RANDOM_WARNING)
    # the CLI's exit-code policy as data: 0 INT8+FP16 written, 3 FP16-only written, 1 target missed (not written)
    from onnx_lint.quantization.frontier_plot import frontier_svg

    return {"output": str(target), "written": report.written, "fp16Only": report.fp16_only,
            "exitCode": report.exit_code, "report": report.to_json(), "summary": format_summary(report),
            "warnings": report.warnings, "frontierSvg": frontier_svg(report.fallback)}
