"""## qdq-invalid-scale (OL203)

### What it does
Flags a QuantizeLinear or DequantizeLinear whose scale, held in the file as an
initializer or Constant, contains zero, a negative value, infinity or NaN.

### Why does this matter?
QuantizeLinear divides by the scale: a zero scale gives ±inf (saturated to
the type's limits) or NaN, and DequantizeLinear with such a scale outputs
zeros, inf or NaN. Calibration over data that never reached a tensor (or a
constant tensor) is the usual origin. ONNX Runtime runs the model without a
word and computes garbage; TensorRT refuses non-positive scales.

### Example
```
QuantizeLinear(x, scale=0.0, zero_point=0)
```

### Fix safety
No fix: the right scale comes from calibration data the file does not hold.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.tensors import ConstantLookup, qdq_nodes
from onnx_lint.rules.helpers import node_label


def scale_problem(values: np.ndarray) -> str | None:
    """What is wrong with a scale tensor's values, or ``None``."""
    flat = values.astype(np.float64, copy=False).ravel()
    bad = []
    if np.isnan(flat).any():
        bad.append("NaN")
    if np.isinf(flat).any():
        bad.append("infinity")
    if (flat == 0).any():
        bad.append("zero")
    if (flat < 0).any():
        bad.append("a negative value")
    return " and ".join(bad) if bad else None


class QdqInvalidScale(Rule):
    code = "OL203"
    name = "qdq-invalid-scale"
    severity = Severity.ERROR
    summary = "A Q/DQ scale is zero, negative, infinite or NaN"
    needs_inference = False
    reads_annotations = False

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        lookup = ConstantLookup()
        for scope, index, node in qdq_nodes(ctx.scopes):
            if len(node.input) < 2 or not node.input[1]:
                continue
            const = lookup.find(scope, node.input[1])
            values = const.value() if const is not None else None
            if values is None or values.dtype.kind != "f":
                continue
            problem = scale_problem(values)
            if problem:
                yield self.report(
                    ctx, f"{node.op_type} '{node_label(node)}' has scale '{node.input[1]}' holding {problem}; "
                    "quantized values become saturated, zero or NaN",
                    Location.at_node(scope.path, index, node, tensor=node.input[1]))
