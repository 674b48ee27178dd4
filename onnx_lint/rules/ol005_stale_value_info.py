"""## stale-value-info (OL005)

### What it does
Flags a `value_info` entry (at any graph level) whose declared shape is stale
against the derived one: a different rank, two different concrete dims, or a
concrete dim where the graph computes a dynamic one. A number declared where
the engines derive an anonymous dim (a strided Conv over a dynamic length) is
checked too, by inferring with the dynamic input dims pinned to two sets of
sizes: a number the graph does not keep is stale.

It also flags the carried-state input of a `Loop` or `Scan` body whose declared
shape its initial value contradicts (a body input pinned to the export's batch,
`[2, 16]`, where the Loop starts from `[batch, 16]`): ONNX's inference types
the whole body from that input, so the pin confirms itself inside the body and
ONNX Runtime warns at every other batch size.

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
type source for the outputs of custom operators. The fix writes only numbers an
engine proved (derived for every size, or the same in both pinned inferences);
a stale number where the graph's dim is anonymous becomes the input dim or
expression two pinned inferences prove, else an unknown dim, and so does a
declared number nothing proves. A body's state input
gets a dim only where its initial and final values agree (a state that grows
each iteration keeps none of its first size); the body's own tensors are then
corrected in the next fix round, derived from the corrected input.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, FixAvailability, Severity
from onnx_lint.lint.rule_api import Rule, computed_dims_title
from onnx_lint.model.edits import Edit, RemoveValueInfo
from onnx_lint.model.shapes import format_dims, format_info
from onnx_lint.rules.helpers import describe_conflict, unproven_clause


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
            if decl.kind == "output" or not decl.shape_stale:
                continue
            if decl.rank_mismatch:
                why = f"the graph computes rank {decl.derived_info.rank} {format_info(decl.derived_info)}"
            else:
                why = "; ".join(describe_conflict(c) for c in decl.conflicts)
            why += unproven_clause(ctx, decl)
            edit = ctx.reconcile_edit(decl) if decl.derived is not None else RemoveValueInfo(decl.graph, decl.name)
            yield self.report(
                ctx,
                f"{decl.what} '{decl.name}' is declared {format_dims(decl.declared_info.dims)}: {why}",
                decl.location,
                engine=decl.engine,
                edits=[edit],
            )
