"""## stale-output-rank (OL004)

### What it does
Flags a graph output declared with rank r >= 1 when the graph computes a
different rank (at any graph level: subgraph outputs too).

### Why does this matter?
Downstream tools trust the declared rank: TensorRT builds its bindings from
it, FP16 converters and ONNX Runtime's quantizer copy it, and strict shape
inference rejects the model (`Inferred shape and existing shape differ in
rank`).

### Example
```
Y = Flatten(X[batch,3,4])       # computes [batch, 12]
graph output Y: float[batch,3,4]
```
becomes `Y: float[batch,12]` after `--fix`.

### Fix safety
Safe: the output's declared shape is replaced by the derived rank and concrete
dims; symbolic dims the producer named on the inputs are kept. Nothing else
changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, FixAvailability, Severity
from onnx_lint.lint.rule_api import Rule, computed_dims_title
from onnx_lint.model.edits import Edit
from onnx_lint.model.shapes import format_dims, format_info


class StaleOutputRank(Rule):
    code = "OL004"
    name = "stale-output-rank"
    severity = Severity.ERROR
    fix_availability = FixAvailability.ALWAYS
    summary = "Graph output declares a rank >= 1 that differs from the computed rank"

    def fix_title(self, edits: Sequence[Edit]) -> str:
        return computed_dims_title(edits)

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        for decl in ctx.declarations:
            if decl.kind != "output" or not decl.rank_mismatch or decl.declared_info.rank == 0:
                continue
            yield self.report(
                ctx,
                f"graph output '{decl.name}' is declared with rank {decl.declared_info.rank} "
                f"{format_dims(decl.declared_info.dims)}, but the graph computes rank "
                f"{decl.derived_info.rank} {format_info(decl.derived_info)}",
                decl.location,
                engine=decl.engine,
                edits=[ctx.reconcile_edit(decl)],
            )
