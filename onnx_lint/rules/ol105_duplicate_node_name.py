"""## duplicate-node-name (OL105)

### What it does
Notes node names used by more than one node of the model (across the main
graph and its subgraphs). Empty node names are allowed by ONNX and common; they
are not flagged. (An empty graph input or output name is a checker error,
reported by OL102.)

### Why does this matter?
`onnx.checker` accepts duplicate node names, yet names are how tools address nodes:
`onnx-lint quantize --exclude-nodes`, ONNX Runtime's `nodes_to_exclude` and
TensorRT's layer precision settings pick nodes by name, so with two nodes of
one name a user cannot keep one in FP32 without the other, and quantizers that
derive new tensor names from node names can emit clashing names. ONNX Runtime
itself runs such models, so this is an info note, not a warning.

### Example
```
node[3] 'conv' (Conv), node[9] 'conv' (Conv)
```
gives `graph/node[9] 'conv' (Conv): node name 'conv' is also used by graph/node[3]`.

### Fix safety
No fix: renaming a node changes the file's node content, and a renamed node
may be referenced by name in the user's own tooling.
"""

from __future__ import annotations

from collections.abc import Iterable

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity
from onnx_lint.lint.rule_api import Rule


class DuplicateNodeName(Rule):
    code = "OL105"
    name = "duplicate-node-name"
    severity = Severity.INFO
    summary = "Two nodes share a name (tools address nodes by name)"
    needs_inference = False
    reads_annotations = False

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        # op_type, domain, name per node, from the one pass over each graph: the names are every third
        named = [name for scope in ctx.scopes for name in scope.scan().texts[2::3] if name]
        if len(set(named)) == len(named):
            return  # the common case, settled without a loop over nodes
        first: dict[str, str] = {}
        for scope in ctx.scopes:
            texts = scope.scan().texts
            for i in range(len(scope.graph.node)):
                name = texts[3 * i + 2]
                if not name:
                    continue
                here = f"{scope.path}/node[{i}]"
                if name in first:
                    yield self.report(
                        ctx, f"node name '{name}' is also used by {first[name]}; tools that select nodes by "
                        "name (quantize --exclude-nodes, nodes_to_exclude) cannot tell them apart",
                        Location(here, node=name, op_type=texts[3 * i]))
                else:
                    first[name] = here
