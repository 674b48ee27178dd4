"""## qdq-pair-mismatch (OL204)

### What it does
Flags a DequantizeLinear that reads a QuantizeLinear's output directly but
with a different scale, zero-point, zero-point type or axis, where both are
held in the file (initializers or Constants).

### Why does this matter?
A Q→DQ pair stands for "this tensor is quantized here": the DQ must undo
exactly what the Q did. With different parameters the pair silently rescales
the tensor (every value multiplied by the ratio of the scales, or shifted by
the zero-point difference). It is the typical result of hand edits, of
merging two quantized models, or of a tool that re-calibrated one side.
ONNX Runtime's and TensorRT's Q/DQ fusions also only fuse matching pairs.

### Example
```
q = QuantizeLinear(x, 0.02, 0)
y = DequantizeLinear(q, 0.04, 0)      # y == 2 * x, roughly
```

### Fix safety
No fix: which of the two scales is right is not in the file.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.tensors import ConstantLookup, qdq_nodes
from onnx_lint.rules.helpers import node_label


def _axis(node) -> int:
    return next((a.i for a in node.attribute if a.name == "axis"), 1)


class QdqPairMismatch(Rule):
    code = "OL204"
    name = "qdq-pair-mismatch"
    severity = Severity.WARNING
    summary = "A DequantizeLinear undoes its QuantizeLinear with a different scale or zero-point"
    needs_inference = False
    reads_annotations = False

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        lookup = ConstantLookup()
        quantizers = {}
        for scope, _index, node in qdq_nodes(ctx.scopes):
            if node.op_type == "QuantizeLinear" and node.output:
                quantizers[(scope.path, node.output[0])] = node
        if not quantizers:
            return
        for scope, index, node in qdq_nodes(ctx.scopes):
            if node.op_type != "DequantizeLinear" or not node.input:
                continue
            q = quantizers.get((scope.path, node.input[0]))
            if q is None:
                continue
            differences = []
            for position, what in ((1, "scale"), (2, "zero-point")):
                mine = _param(lookup, scope, node, position)
                theirs = _param(lookup, scope, q, position)
                if mine is None or theirs is None:
                    continue  # not held in the file (or omitted on both): nothing proven
                if mine.dtype != theirs.dtype:
                    differences.append(f"{what} type {theirs.dtype} vs {mine.dtype}")
                elif mine.shape != theirs.shape or not np.array_equal(mine, theirs, equal_nan=True):
                    differences.append(f"{what} {_show(theirs)} vs {_show(mine)}")
            scale = _param(lookup, scope, node, 1)
            if scale is not None and scale.size > 1 and _axis(node) != _axis(q):
                differences.append(f"axis {_axis(q)} vs {_axis(node)}")
            if differences:
                yield self.report(
                    ctx, f"DequantizeLinear '{node_label(node)}' reads QuantizeLinear '{node_label(q)}' directly "
                    f"but with different parameters ({'; '.join(differences)}): the pair rescales the tensor "
                    "instead of round-tripping it",
                    Location.at_node(scope.path, index, node, tensor=node.input[0]))


def _param(lookup: ConstantLookup, scope, node, position: int) -> np.ndarray | None:
    if len(node.input) <= position or not node.input[position]:
        return None  # omitted: its default type depends on attributes; nothing is compared
    const = lookup.find(scope, node.input[position])
    return const.value() if const is not None else None


def _show(values: np.ndarray) -> str:
    flat = values.ravel()
    text = ", ".join(f"{v:.6g}" if values.dtype.kind == "f" else str(v) for v in flat[:4])
    return f"[{text}{', ...' if flat.size > 4 else ''}]" if values.ndim else text
