"""## negative-dim-value (OL101)

### What it does
Flags a declared dim with a negative `dim_value` on a graph input, output or
`value_info` entry (at any graph level). Exporters such as paddle2onnx write
`-1` where they mean "dynamic".

### Why does this matter?
The ONNX IR defines a dynamic dim as a `dim_param` or an empty dim; `-1`
is a concrete value that happens to be impossible. `onnx.checker` lets it
pass and ONNX Runtime reads it as "unknown", but ONNX's own shape inference
propagates `-1` as if it were a size, and tools that allocate or build
engines from declared shapes (random calibration inputs, TensorRT profiles)
trip over it.

### Example
```
graph input x: float[-1,3,48,192]
```
becomes `x: float[?,3,48,192]` (an empty, dynamic dim) after `--fix`.

### Fix safety
Safe: the negative dims become empty (dynamic) dims, which is what the
exporter meant. Every other dim of a graph input stays as declared (the
input's dims are the model's contract with its caller); on an output or a
`value_info` entry, a declared number stays only where an engine proves it,
like every number a fix writes, and becomes an empty dim otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.declarations import Declaration
from onnx_lint.lint.diagnostics import Diagnostic, FixAvailability, Location, Severity
from onnx_lint.lint.rule_api import Rule, the_edit
from onnx_lint.model.edits import Edit, Kind, SetType
from onnx_lint.model.shapes import TensorInfo, format_dims, tensor_info

_WHAT = {"input": "graph input", "output": "graph output", "value_info": "value_info"}


class NegativeDimValue(Rule):
    code = "OL101"
    name = "negative-dim-value"
    severity = Severity.WARNING
    fix_availability = FixAvailability.ALWAYS
    summary = "A declared dim_value is negative (exporters write -1 for a dynamic dim)"

    def fix_title(self, edits: Sequence[Edit]) -> str:
        edit = the_edit(edits, SetType)
        return f"Make the negative dims of '{edit.tensor}' dynamic: {format_dims(edit.dims)}"

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        # value_info entries identical to what inference derives cannot hold a negative dim,
        # so the declarations the context already compares are the only ones to scan.
        compared = {(d.graph, d.index) for d in ctx.declarations if d.kind == "input"}  # a body's state inputs
        candidates: list[tuple[str, Kind, int, str, TensorInfo | None, Declaration | None]] = [
            (scope.path, "input", i, v.name, tensor_info(v.type), None)
            for scope in ctx.scopes for i, v in enumerate(scope.graph.input) if (scope.path, i) not in compared]
        candidates += [(d.graph, d.kind, d.index, d.name, d.declared, d) for d in ctx.declarations]
        for graph, kind, index, name, info, decl in candidates:
            if info is None or not info.dims or not any(isinstance(d, int) and d < 0 for d in info.dims):
                continue
            dims = tuple(None if isinstance(d, int) and d < 0 else d for d in info.dims)
            # An input's numbers are its contract with the caller; an output's or value_info's are claims
            # that stay only where an engine proves them.
            dims, proofs = ctx.proven_declared(decl, dims) if decl is not None else (dims, None)
            bad = [str(i) for i, d in enumerate(info.dims) if isinstance(d, int) and d < 0]
            yield self.report(
                ctx,
                f"{_WHAT[kind]} '{name}' is declared {format_dims(info.dims)}: dim {', '.join(bad)} is negative; "
                "ONNX requires dim_value >= 0 (a dynamic dim is an empty dim or a dim_param)",
                Location.at_entry(graph, kind, index, tensor=name),
                edits=[SetType(graph, kind, name, dims=dims, proofs=proofs)],
            )
