"""## inference-budget-exceeded (OL008)

### What it does
Notes, once per model, that a slow inference engine was stopped at its time
budget: ONNX Runtime's symbolic shape inference (`onnxruntime-symbolic`) or a
run of the model in ONNX Runtime (`onnxruntime run`). The note names the
engine, its budget and the tensors whose declarations therefore stay unproven.

### Why does this matter?
Some engines grow much faster than the graph on some models (sympy expressions
on the RoI heads of torchvision's R-CNN models ran for more than ten minutes).
onnx-lint never waits on them without limit: each gets a budget of 10 s plus ten
times ONNX's own inference time on the model, and the lint goes on with what the
other engines derived. Nothing that engine would have derived is claimed or
fixed; this note says so, so that a clean-looking result is not read as a proof.

### Example
```
onnx-lint check model.onnx --inference-budget 5
model.onnx: graph/output[0] 'masks': OL008 onnxruntime-symbolic was stopped at its
budget of 5 s; 1 tensor stays unproven: 'masks'
```

### Fix safety
No fix. Give the engines more time with `--inference-budget SECONDS` or
`inference-budget = SECONDS` under `[tool.onnx-lint]`.
"""

from __future__ import annotations

from collections.abc import Iterable

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.graphs import ROOT

# Tensor names listed in the message; the rest are counted.
_LISTED = 8


class InferenceBudgetExceeded(Rule):
    code = "OL008"
    name = "inference-budget-exceeded"
    severity = Severity.INFO
    summary = "An inference engine was stopped at its time budget; what it would have derived stays unproven"

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        decls = ctx.declarations  # runs the engines this model needs
        if not ctx.oracle.expired:
            return
        engines = "; ".join(f"{e.engine} was stopped at its budget of {e.budget_s:.3g} s" for e in ctx.oracle.expired)
        unproven = [d for d in ctx.unproven if d in decls]
        if unproven:
            names = ", ".join(f"'{d.name}'" for d in unproven[:_LISTED])
            more = f" and {len(unproven) - _LISTED} more" if len(unproven) > _LISTED else ""
            count = f"{len(unproven)} tensor{'s' if len(unproven) != 1 else ''}"
            verb = "stays" if len(unproven) == 1 else "stay"
            tail = f"{count} {verb} unproven: {names}{more}"
            location = unproven[0].location
        else:
            tail = "the other engines derived every tensor it was asked about"
            location = Location(ROOT)
        yield self.report(ctx, f"{engines}; {tail} (raise it with --inference-budget)", location)
