"""## stale-value-info (OL005)

### What it does
Flags a `value_info` entry (at any graph level) whose declared shape is stale
against the derived one: a different rank, two different concrete dims, or a
concrete dim where the graph computes a dynamic one.

### Why does this matter?
value_info is an inference *input* for many tools: ONNX Runtime's optimizer,
its quantizer, TensorRT's parser and onnx's own non-strict inference merge it
into what they compute, so one stale entry spreads wrong shapes downstream.

### Example
```
h = Relu(X[batch,4])
value_info h: float[batch,8]
```
becomes `h: float[batch,4]` after `--fix`.

### Fix safety
Safe: the entry is corrected, or removed where nothing can be derived for it.
Entries that are not stale stay byte-for-byte as they are: they can be the only
type source for the outputs of custom operators.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, FixAvailability, Severity
from onnx_lint.lint.rule_api import Rule, computed_dims_title
from onnx_lint.model.edits import Edit, RemoveValueInfo
from onnx_lint.model.shapes import format_dims, format_info
from onnx_lint.rules.helpers import describe_conflict


class StaleValueInfo(Rule):
    code = "OL005"
    name = "stale-value-info"
    severity = Severity.ERROR
    fix_availability = FixAvailability.ALWAYS
    summary = "A value_info entry contradicts the shape the graph computes"

    def fix_title(self, edits: Sequence[Edit]) -> str:
        [edit] = edits
        if isinstance(edit, RemoveValueInfo):
            return f"Remove the stale value_info '{edit.tensor}' (nothing can be derived for it)"
        return computed_dims_title(edits)

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        for decl in ctx.declarations:
            if decl.kind != "value_info" or not decl.shape_stale:
                continue
            if decl.rank_mismatch:
                why = f"the graph computes rank {decl.derived_info.rank} {format_info(decl.derived_info)}"
            else:
                why = "; ".join(describe_conflict(c) for c in decl.conflicts)
            edit = ctx.reconcile_edit(decl) if decl.derived is not None else RemoveValueInfo(decl.graph, decl.name)
            yield self.report(
                ctx,
                f"value_info '{decl.name}' is declared {format_dims(decl.declared_info.dims)}: {why}",
                decl.location,
                engine=decl.engine,
                edits=[edit],
            )
