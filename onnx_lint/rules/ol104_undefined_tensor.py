"""## undefined-tensor (OL104)

### What it does
Flags a graph output, or a node input, that names a tensor nothing defines:
no node of the graph produces it, and it is neither a graph input nor an
initializer of the graph or of an enclosing graph.

### Why does this matter?
A dangling output or input is what is left after a node was deleted or
renamed by hand or by a graph surgery tool. `onnx.checker` stops at the first
one with a message that does not say where it is (or that blames the node
order), ONNX's inference cannot type anything behind it, and ONNX Runtime
refuses to load the model.

### Example
```
graph outputs: Y (produced by MatMul_0), Z (produced by nothing)
```
gives `graph/output[1] 'Z': graph output 'Z' is not produced by any node ...`.

### Fix safety
No fix: removing the output changes the model's interface and inventing a
producer changes its computation; only the author knows which was meant.
"""

from __future__ import annotations

from collections.abc import Iterable

from onnx_lint.constants import node_label
from onnx_lint.context import LintContext
from onnx_lint.diagnostics import Diagnostic, Location, Severity
from onnx_lint.graphs import GraphScope
from onnx_lint.rule_api import Rule


def _defined_here(scope: GraphScope) -> set[str]:
    graph = scope.graph
    names = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    names |= {s.values.name for s in graph.sparse_initializer}
    names.update(scope.producers())
    return names


class UndefinedTensor(Rule):
    code = "OL104"
    name = "undefined-tensor"
    severity = Severity.ERROR
    summary = "A graph output or node input names a tensor nothing defines"

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        visible: dict[str, set[str]] = {}
        for scope in ctx.scopes:  # parents come before their subgraphs
            outer = visible[scope.parent.path] if scope.parent is not None else set()
            defined = _defined_here(scope) | outer
            visible[scope.path] = defined
            for i, value in enumerate(scope.graph.output):
                if value.name not in defined:
                    yield self.report(
                        ctx,
                        f"graph output '{value.name}' is not produced by any node, and is not an input or "
                        "initializer; ONNX Runtime refuses the model",
                        Location(f"{scope.path}/output[{i}]", tensor=value.name))
            for i, node in enumerate(scope.graph.node):
                missing = [name for name in node.input if name and name not in defined]
                if missing:
                    yield self.report(
                        ctx,
                        f"node '{node_label(node)}' reads {', '.join(repr(m) for m in missing)}, which no node "
                        "produces and is not an input or initializer",
                        Location(f"{scope.path}/node[{i}]", node=node.name or None, tensor=missing[0],
                                 op_type=node.op_type))
