"""Stage 1, repair: lint the model and apply every safe fix in memory, then refuse what cannot be quantized."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import onnx

from onnx_lint.base.errors import FixError
from onnx_lint.fixes.session import FixSession
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.graphs import iter_scopes
from onnx_lint.model.load import read_model
from onnx_lint.quantization.calibration import input_specs
from onnx_lint.quantization.options import QuantizeError
from onnx_lint.quantization.run_state import QuantizeRun

QUANTIZED_OPS = frozenset({
    "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul",
    "ConvInteger", "MatMulInteger", "QLinearAdd", "QLinearMul", "QGemm", "MatMulNBits",
})
# The most bytes one sparse initializer may take once dense: ORT's quantizer makes each one dense, and a
# quantized model is written in one file of at most 2 GiB.
MAX_DENSE_BYTES = 2**31


def repair(path: Path, rules: Sequence[Rule],
           notes: list[str] | None = None) -> tuple[onnx.ModelProto, list[Diagnostic], LintContext]:
    """Lint and apply every safe fix in memory; the input file is not changed.

    Repair serves quantization, it is not its precondition: when the fixes cannot
    be completed the model is quantized as it is (a note in ``notes`` says so);
    a model that then cannot run fails at calibration with the runtime's words.
    """
    loaded = read_model(path)
    session = FixSession.lint_loaded(loaded, str(path), rules, lambda code: True)
    result, ctx = session.result, session.ctx
    if ctx is None or result.unreadable:
        problem = result.diagnostics[0].message if result.diagnostics else "; ".join(result.internal_errors)
        raise QuantizeError(f"{path}: {problem}")
    try:
        plan = session.plan()
    except FixError as exc:
        if notes is not None:
            reason = str(exc).removesuffix("; nothing was written")
            notes.append(f"the safe fixes could not be applied ({reason}); quantized the model as it is")
        plan = None
    model = onnx.ModelProto.FromString(plan.data) if plan else loaded.fresh_copy()
    remaining = plan.relint if plan else result.diagnostics
    return model, (plan.applied if plan else []) + remaining, ctx


def repair_model(run: QuantizeRun) -> None:
    """Repair in memory, then refuse a model that is quantized already, exclusions that name no node, a sparse
    weight too large once dense, and calibration data without an input's array."""
    run.progress.stage("Repairing annotations", 1)
    run.model, run.diagnostics, _ = repair(run.source, run.rules, run.report.warnings)
    run.report.fixes = [d.to_json() for d in run.diagnostics if d.fix_applied]
    run.progress.advance()
    model = run.model
    already = sorted(set(Counter(n.op_type for n in model.graph.node)) & QUANTIZED_OPS)
    if already:
        raise QuantizeError(f"{run.source}: the model is already quantized (it has {', '.join(already)} nodes); "
                            "nothing was written", exit_code=1)
    names = {n.name for n in model.graph.node}
    unknown = [n for n in run.options.exclude_nodes if n not in names]
    if unknown:
        raise QuantizeError(f"--exclude-nodes names no node of the model: {', '.join(unknown)} "
                            f"(node names are listed by `onnx-lint check --output-format json` or Netron)")
    _check_sparse(model, run.source)
    for spec in input_specs(model):
        if run.samples and spec.name not in run.samples[0]:
            raise QuantizeError(f"the calibration data has no array for input '{spec.name}'")
    run.progress.check()


def _check_sparse(model: onnx.ModelProto, source: Path) -> None:
    """Refuse a sparse initializer whose dense form would not fit (2^40 elements in a few bytes of file)."""
    for scope in iter_scopes(model):
        for sparse in scope.graph.sparse_initializer:
            elements = math.prod(sparse.dims)
            try:
                itemsize = onnx.helper.tensor_dtype_to_np_dtype(sparse.values.data_type).itemsize
            except (KeyError, TypeError, ValueError):  # no numpy type (an unset or a sub-byte one): count bytes
                itemsize = 1
            if elements * itemsize > MAX_DENSE_BYTES:
                raise QuantizeError(
                    f"{source}: sparse initializer '{sparse.values.name}' declares dims {list(sparse.dims)}: "
                    f"{elements * itemsize / 2**30:.0f} GiB once dense, and quantization makes it dense (at most "
                    f"{MAX_DENSE_BYTES / 2**30:.0f} GiB); nothing was written")
