"""## batch-baked-into-constant (OL108)

### What it does
Warns about a Reshape or Expand whose target shape is a constant of the file
(initializer or Constant) with a fixed leading size, while the tensor it
reshapes carries the model's dynamic batch dim: a graph input's first dim is a
named `dim_param` (`batch`, `N`, ...) and ONNX's inference shows that name as
the first dim of the Reshape/Expand data input. A Reshape target of `0` (copy)
or `-1` (infer) is dynamic and stays silent, and so is an Expand to 1 (which
broadcasts).

It also follows *computed* Reshape targets (a Concat of `Shape` slices and
constants, as dynamo exports write `x.view(T, 1, 3, 192)`): with each dynamic
input dim pinned to a prime of its own, twice, data propagation gives the
target's value; where the Reshape's input then holds exactly `batch` times the
elements of its target, the target drops the batch, wherever in the shape the
baked 1 sits. What such a Reshape feeds runs only at batch 1, so OL002 does
not propose a dynamic dim where an output declares 1 there.

Only named batch dims are followed: an input declared with an empty first dim
gives inference nothing to trace. Expand with a computed target is not
followed. Tile is not checked: its repeats multiply the batch legitimately as
often as they bake it in.

### Why does this matter?
Tracing exporters record the shape they saw: `x.view(1, -1, 256)` or
`x.reshape(B, ...)` with `B` taken from the example input become a constant
`[1, -1, 256]`, while the input keeps its dynamic batch (rf-detr #949,
TensorRT #2046). At batch 1 everything agrees; at batch 8 the Reshape either
fails (`Reshape ... input shape is not compatible`) or, with a `-1` elsewhere,
silently folds the batch into another dim and mixes samples; Expand fails to
broadcast. TensorRT optimization profiles with a batch range fail to build.

### Example
```
graph input x: float[batch, 4, 8]
Reshape(x, shape=[1, -1])        # batch baked in as 1
```

### Fix safety
No fix: the right target (`0`, `-1`, or a Shape→Gather→Concat chain) depends
on what the reshape means. Re-export with the batch dim marked dynamic in the
code (e.g. `x.view(x.size(0), -1)`) or rewrite the constant by hand.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from onnx_lint.engines.engine import Engine
from onnx_lint.lint.baked_batch import BakedReshape
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.graphs import ROOT
from onnx_lint.model.shapes import format_dims
from onnx_lint.rules.helpers import node_label


class BatchBakedIntoConstant(Rule):
    code = "OL108"
    name = "batch-baked-into-constant"
    severity = Severity.WARNING
    summary = "A Reshape/Expand constant, or a computed Reshape target, fixes the batch while it is dynamic"

    def prepare(self, ctx: LintContext) -> None:
        if ctx.batch_names:
            ctx.reshape_targets  # noqa: B018 -- computed now, while inference runs

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        batch = ctx.batch_names
        if not batch:
            return
        for baked in ctx.baked_reshapes:
            yield self._computed(ctx, baked)
        for found, lead, batch_dim in ctx.batch_fixing_constants:
            node = found.node
            yield self.report(
                ctx,
                f"{node.op_type} '{node_label(node)}' has the constant target shape '{node.input[1]}' = "
                f"{found.target.tolist()}, which fixes dim 0 to {lead}, while its input '{node.input[0]}' has the "
                f"dynamic batch dim '{batch_dim}'; at any other batch size the {node.op_type} fails or mixes "
                "samples",
                Location.at_node(ROOT, found.index, node, tensor=node.input[1]),
                engine=Engine.ONNX,
            )

    def _computed(self, ctx: LintContext, baked: BakedReshape) -> Diagnostic:
        node = baked.node
        pins = "; ".join(f"at {baked.batch}={size} it holds {format_dims(data)} = {math.prod(data)} elements "
                         f"and the target says {format_dims(target)} = {math.prod(target)}"
                         for size, data, target in baked.runs)
        return self.report(
            ctx,
            f"Reshape '{node_label(node)}' computes its target shape '{node.input[1]}' from the input's dims and "
            f"constants, but the target leaves out the dynamic batch dim '{baked.batch}' of its input "
            f"'{node.input[0]}' ({pins}): it runs only at {baked.batch}=1, and at any other batch size the "
            "Reshape fails",
            Location.at_node(ROOT, baked.index, node, tensor=node.input[1]),
            engine=Engine.ONNX_INPUT_DIMS_PINNED,
        )
