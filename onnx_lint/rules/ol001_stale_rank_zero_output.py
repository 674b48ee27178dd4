"""## stale-rank-zero-output (OL001)

### What it does
Flags a graph output declared as a scalar (a `shape` field with no dims) when
the graph computes a tensor of rank 1 or more. Subgraph outputs (If branches,
Loop and Scan bodies) are checked the same way.

### Why does this matter?
Exporters that "fix" the checker's `Field 'shape' of 'type' is required` by
writing an empty shape declare rank 0. ONNX Runtime loads such models with a
warning, but strict shape inference and `onnx.checker.check_model(full_check=True)`
fail (`Inferred shape and existing shape differ in rank: (2) vs (0)`), a
ReduceMean downstream fails with `axis must be in [-rank, rank-1]. Input rank
was 0`, and INT8 quantization keeps the stale declaration so the quantized
model fails the checker at its DequantizeLinear.

### Example
```
Y = MatMul(X[3,4], W[4,5])      # computes [3,5]
graph output Y: float[]         # declared rank 0
```
becomes `Y: float[3,5]` after `--fix`.

### Fix safety
Safe: only the output's declared shape changes, to the derived rank and
concrete dims (named dims written by the producer are kept). The output keeps
a `shape` field, as the checker requires.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, FixAvailability, Severity
from onnx_lint.lint.rule_api import Rule, computed_dims_title
from onnx_lint.model.edits import Edit
from onnx_lint.model.shapes import format_info


class StaleRankZeroOutput(Rule):
    code = "OL001"
    name = "stale-rank-zero-output"
    severity = Severity.ERROR
    fix_availability = FixAvailability.ALWAYS
    summary = "Graph output declared as a scalar (rank 0) but the graph computes rank >= 1"

    def fix_title(self, edits: Sequence[Edit]) -> str:
        return computed_dims_title(edits)

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        for decl in ctx.declarations:
            if decl.kind != "output" or not decl.rank_mismatch or decl.declared_info.rank != 0:
                continue
            yield self.report(
                ctx,
                f"graph output '{decl.name}' is declared as a scalar (rank 0), "
                f"but the graph computes {format_info(decl.derived)}",
                decl.location,
                engine=decl.engine,
                edits=[ctx.reconcile_edit(decl)],
            )
