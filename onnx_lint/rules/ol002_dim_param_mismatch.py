"""## dim-param-mismatch (DimParamMismatch, OL002)

### What it does
At equal rank, flags a graph output whose declared dim contradicts the dim the
graph computes:
- two different concrete values (`[batch,5]` declared, `[batch,4]` computed);
- a concrete value where the graph computes the dim from a dynamic input dim
  (the output pins `1` while the input's `batch` is free). Where inference
  only finds an anonymous dim, onnx-lint infers again with the dynamic input
  dims pinned to two different sizes: a dim that follows them depends on the
  input;
- one `dim_param` name used for dims the graph proves different.

A renamed symbolic dim (`my_batch` declared, `batch` or `unk__0` computed) is
*not* a mismatch, nor is a concrete declared dim where the computed dim is
anonymous and not shown to depend on a dynamic input.

### Why does this matter?
`Inferred shape and existing shape differ in dimension 1: (4) vs (5)` in
strict inference and the full checker; a pinned batch of `1` makes ONNX
Runtime warn at run time and TensorRT build a batch-1 engine.

### Example
```
Y = Relu(X[batch,4])
graph output Y: float[1,4]      # batch pinned to 1
```
becomes `Y: float[batch,4]` after `--fix`.

### Fix safety
Safe: only the conflicting dims of the declaration change; other dims stay as
declared (including names the producer chose).
"""

from __future__ import annotations

from collections.abc import Iterable

from onnx_lint.context import DimConflict, LintContext
from onnx_lint.diagnostics import Diagnostic, Severity
from onnx_lint.rule_api import Rule
from onnx_lint.shapes import format_dims


def describe_conflict(conflict: DimConflict) -> str:
    """One clause saying what is wrong with a dim and how we know."""
    if conflict.reason == "concrete":
        return f"dim {conflict.index} is declared {conflict.declared} but the graph computes {conflict.derived}"
    if conflict.reason in ("param-reuse", "name"):
        return f"dim {conflict.index}: {conflict.evidence}"
    return f"dim {conflict.index} is declared {conflict.declared}, but {conflict.evidence}"


class DimParamMismatch(Rule):
    code = "OL002"
    name = "dim-param-mismatch"
    severity = Severity.ERROR
    fixable = True
    summary = "A declared output dim conflicts with the dim the graph computes"

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        for decl in ctx.declarations:
            if decl.kind != "output" or decl.rank_mismatch or not decl.conflicts:
                continue
            clauses = "; ".join(describe_conflict(c) for c in decl.conflicts)
            yield self.report(
                ctx,
                f"graph output '{decl.name}' is declared {format_dims(decl.declared.dims)}: {clauses}",  # type: ignore[union-attr]
                decl.location,
                engine=decl.engine,
                edits=[ctx.reconcile_edit(decl)],
            )
