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

from onnx_lint.engines.checker import checker_verdict
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity
from onnx_lint.lint.rule_api import Rule
from onnx_lint.model.graphs import defined_outside
from onnx_lint.rules.helpers import node_label


class UndefinedTensor(Rule):
    code = "OL104"
    name = "undefined-tensor"
    severity = Severity.ERROR
    summary = "A graph output or node input names a tensor nothing defines"
    needs_inference = False

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        if checker_verdict(ctx.loaded) is None:
            return  # the checker verifies this in every graph: one C++ call instead of a Python pass
        for scope in ctx.scopes:
            unresolved, defined = scope.unresolved_reads()
            if unresolved:
                produced = scope.producers()
                missing_by_node: dict[int, list[str]] = {}
                for i, name in unresolved:
                    if name not in produced and not defined_outside(scope, name):
                        missing_by_node.setdefault(i, []).append(name)
                for i, missing in missing_by_node.items():
                    node = scope.graph.node[i]
                    yield self.report(
                        ctx,
                        f"node '{node_label(node)}' reads {', '.join(repr(m) for m in missing)}, which no node "
                        "produces and is not an input or initializer",
                        Location.at_node(scope.path, i, node, tensor=missing[0]))
            for i, value in enumerate(scope.graph.output):
                if (scope.path, value.name) in ctx.undefined_outputs:
                    yield self.report(
                        ctx,
                        f"graph output '{value.name}' is not produced by any node, and is not an input or "
                        "initializer; ONNX Runtime refuses the model",
                        Location.at_entry(scope.path, "output", i, tensor=value.name))

