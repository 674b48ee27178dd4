"""## qdq-zero-point-type (OL205)

### What it does
Notes Q/DQ nodes whose zero-point TensorRT's explicit quantization does not
accept: any zero-point type other than INT8 (UINT8, the default of ONNX
Runtime's `quantize_static` for activations, included; also INT16, INT4 or
FP8 where TensorRT's version lacks them) or an INT8 zero-point that is not 0.

### Why does this matter?
TensorRT supports only symmetric signed quantization in Q/DQ networks: it
refuses to build an engine from UINT8 or nonzero zero-points
(`Assertion failed: ... zero point must be 0`). ONNX Runtime runs these models
fine, so this is an info note for models headed to TensorRT: quantize with
`QInt8` activations and weights and symmetric ranges (ONNX Runtime's
`quantize_static` with `extra_options={"ActivationSymmetric": True,
"WeightSymmetric": True}`).

`onnx-lint quantize --target tensorrt` writes only int8 zero-points equal to
0, and checks its output with this rule before writing it; its record says
so, and such a model is still checked (the record is a claim, the zero-points
are the fact). The default target, ONNX Runtime, writes asymmetric
activations; its report states this caveat where you decide (the "target
runtime" line), so a model it wrote, recognised by its `onnx_lint.quantized`
record in `metadata_props`, is not noted again. Once its Q/DQ nodes no longer
number what the record says (edited after quantize), it is noted like any
Q/DQ model.

### Example
```
QuantizeLinear(x, scale, zero_point: uint8 = 128)
```

### Fix safety
No fix: changing the zero-point type requires re-quantizing.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.graphs import GraphScope
from onnx_lint.model.provenance import read_record
from onnx_lint.model.tensors import ConstantLookup, qdq_nodes
from onnx_lint.rules.helpers import quantize_record_note


def zero_point_problems(scopes: list[GraphScope]) -> tuple[dict[str, list[str]], tuple | None]:
    """Per problem ("uint8 zero-points", "nonzero int8 zero-points"), the Q/DQ nodes that have it, and the
    first such node as ``(scope path, index, node)``; shared with `onnx-lint quantize --target tensorrt`,
    which refuses to write a model this finds anything in."""
    lookup = ConstantLookup()
    kinds: dict[str, list[str]] = {}
    first = None
    for scope, index, node in qdq_nodes(scopes):
        if len(node.input) < 3 or not node.input[2]:
            continue  # omitted: a 0 of the output type (uint8 unless output_dtype says otherwise)
        const = lookup.find(scope, node.input[2])
        values = const.value() if const is not None else None
        if values is None:
            continue
        if values.dtype != np.int8:
            problem = f"{values.dtype} zero-points"
        elif np.any(values != 0):
            problem = "nonzero int8 zero-points"
        else:
            continue
        kinds.setdefault(problem, []).append(node.name or node.op_type)
        if first is None:
            first = (scope.path, index, node)
    return kinds, first


class QdqZeroPointType(Rule):
    code = "OL205"
    name = "qdq-zero-point-type"
    severity = Severity.INFO
    summary = "Q/DQ zero-points TensorRT rejects (not INT8, or not 0)"
    needs_inference = False
    reads_annotations = False

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        found = sum(1 for _ in qdq_nodes(ctx.scopes))
        edited = quantize_record_note(ctx.model, found) if found else ""
        if edited is None:
            record = read_record(ctx.model)
            if record is None or record.target != "tensorrt":
                return  # onnx-lint quantize wrote these zero-points and its report stated the TensorRT caveat
            edited = f" (its {record.describe()!r} record claims TensorRT's form)"
        kinds, first = zero_point_problems(ctx.scopes)
        if first is None:
            return
        path, index, node = first
        counts = "; ".join(f"{len(names)} node(s) with {problem}" for problem, names in kinds.items())
        yield self.report(
            ctx, f"{counts}{edited}: TensorRT accepts only int8 zero-points equal to 0 (symmetric signed "
            "quantization); ONNX Runtime runs the model as it is",
            Location.at_node(path, index, node))
