"""## unsorted-nodes (OL103)

### What it does
Flags a graph (the main graph or any subgraph) whose nodes are not in
topological order: a node reads a tensor that a node *later* in the list
produces (directly, or from inside one of its subgraphs).

### Why does this matter?
ONNX requires nodes in topological order. `onnx.checker` rejects such a graph
(`Nodes in a graph must be topologically sorted`), ONNX's shape inference
walks nodes in file order and leaves everything behind the misplaced node
untyped, and tools that walk the list once (quantizers, converters) read a
tensor before it exists. FP16 converters are a common source: ONNX Runtime's
float16 converter and onnxconverter-common can leave inserted Cast nodes out of
order (onnx/onnx#4480), and so do hand edits that append nodes.

### Example
```
node[0] Relu(a) -> y      # reads 'a' ...
node[1] Neg(x)  -> a      # ... which is produced here
```
becomes `Neg` then `Relu` after `--fix`.

### Fix safety
Safe: the fix reorders nodes only. Every node keeps its inputs, outputs,
attributes and name byte for byte, so the model computes exactly what it
computed before; nodes already in a valid position keep their relative order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from onnx_lint.engines.checker import checker_verdict
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, FixAvailability, Location, Severity
from onnx_lint.lint.rule_api import Rule, the_edit
from onnx_lint.model.edits import Edit, SortNodes
from onnx_lint.model.graphs import out_of_order_nodes
from onnx_lint.rules.helpers import node_label


class UnsortedNodes(Rule):
    code = "OL103"
    name = "unsorted-nodes"
    severity = Severity.ERROR
    fix_availability = FixAvailability.ALWAYS
    summary = "Nodes are not in topological order (the checker rejects it; the fix reorders them only)"
    needs_inference = False

    def fix_title(self, edits: Sequence[Edit]) -> str:
        edit = the_edit(edits, SortNodes)
        return f"Sort the nodes of {edit.graph} in topological order"

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        if checker_verdict(ctx.loaded) is None:
            return  # the checker verifies this in every graph: one C++ call instead of a Python pass
        for scope in ctx.scopes:
            late = out_of_order_nodes(scope)
            if not late:
                continue
            index, tensor, producer = late[0]
            node = scope.graph.node[index]
            more = f" ({len(late) - 1} more node(s) read tensors produced after them)" if len(late) > 1 else ""
            yield self.report(
                ctx,
                f"{scope.path}: node '{node_label(node)}' reads '{tensor}', which node[{producer}] "
                f"'{node_label(scope.graph.node[producer])}' produces later in the list{more}; "
                "ONNX requires nodes in topological order",
                Location.at_node(scope.path, index, node, tensor=tensor),
                edits=[SortNodes(scope.path)],
            )
