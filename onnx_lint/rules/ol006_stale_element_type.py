"""## stale-element-type (OL006)

### What it does
Flags a graph output or `value_info` entry whose declared element type differs
from the element type the graph computes (for example an output declared
`float` that a `Cast(to=INT64)` produces).

### Why does this matter?
ONNX Runtime refuses such a model at load time (`Type Error: Type (tensor(int64))
of output arg (Y) of node () does not match expected type (tensor(float))`),
and quantizers and FP16 converters pick their casts from the declared type.

### Example
```
Y = Cast(X, to=INT64)
graph output Y: float[3]
```
becomes `Y: int64[3]` after `--fix`.

### Fix safety
Safe: only the declared element type changes; the declared dims are left to
the shape rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, FixAvailability, Severity
from onnx_lint.lint.rule_api import Rule, the_edit
from onnx_lint.model.edits import Edit, SetType
from onnx_lint.model.shapes import elem_type_name


class StaleElementType(Rule):
    code = "OL006"
    name = "stale-element-type"
    severity = Severity.ERROR
    fix_availability = FixAvailability.ALWAYS
    summary = "A declared element type differs from the type the graph computes"

    def fix_title(self, edits: Sequence[Edit]) -> str:
        edit = the_edit(edits, SetType)
        return f"Declare the computed element type {elem_type_name(edit.elem_type or 0)} on '{edit.tensor}'"

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        for decl in ctx.declarations:
            if not decl.type_mismatch:
                continue
            yield self.report(
                ctx,
                f"{decl.what} '{decl.name}' is declared {elem_type_name(decl.declared_info.elem_type)}, "
                f"but the graph computes {elem_type_name(decl.derived_info.elem_type)}",
                decl.location,
                engine=decl.engine,
                edits=[SetType(decl.graph, decl.kind, decl.name, elem_type=decl.derived_info.elem_type)],
            )
