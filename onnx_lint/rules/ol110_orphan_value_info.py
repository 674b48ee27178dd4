"""## orphan-value-info (OL110)

### What it does
Notes `value_info` entries (at any graph level) for tensors that nothing in
the model defines: no node output, graph input or initializer of any graph
carries the name, and no node reads it. One note per graph, naming the first
entries and how many there are.

### Why does this matter?
They are left behind by tools that remove or fuse nodes without cleaning up
the annotations: ONNX Runtime's `quant_pre_process` (its optimizer pass) leaves
4 on MTCNN's O-Net and 162 on a T5 encoder. Measured with onnx 1.23 and ONNX Runtime 1.32, they
break nothing: the full checker and strict inference accept the model, ONNX
Runtime loads and runs it, its FP16 converter and static quantizer write
models that load and run (they carry the entries along), and ONNX's inference
ignores a name no node computes, so they do not mislead it. They only make
the file larger and its annotations harder to read, so this is an info note,
not a warning.

### Example
```
value_info: m, gone        # no node writes 'gone' any more
Y = Relu(MatMul(X, W) -> m)
```

### Fix safety
No fix: the entries are harmless, and a healthy model stays byte-identical
under `--fix`. Remove them with your own tooling (or `onnxslim`) if the size
matters.
"""

from __future__ import annotations

from collections.abc import Iterable

from onnx_lint.engines.checker import checker_verdict
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity
from onnx_lint.lint.rule_api import Rule

_LISTED = 5


class OrphanValueInfo(Rule):
    code = "OL110"
    name = "orphan-value-info"
    severity = Severity.INFO
    summary = "value_info entries for tensors nothing in the model defines"
    needs_inference = False

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        if not any(len(scope.graph.value_info) for scope in ctx.scopes):
            return
        # When the checker passed, every node input is defined, so the node outputs the scan
        # already holds suffice; otherwise reads count too (an undefined read is OL104's business).
        # Only the declared names are looked up: no set of every tensor of a 100k-node graph.
        reads_checked = checker_verdict(ctx.loaded) is None
        pending = {v.name for scope in ctx.scopes for v in scope.graph.value_info}
        for scope in ctx.scopes:
            graph = scope.graph
            pending -= scope.initializer_names()
            pending.difference_update(v.name for v in graph.input)
            if pending:
                pending.difference_update(scope.scan().outputs)
            if pending and not reads_checked:
                for node in graph.node:
                    pending.difference_update(node.input)
        if not pending:
            return
        for scope in ctx.scopes:
            orphans = [v.name for v in scope.graph.value_info if v.name in pending]
            if not orphans:
                continue
            shown = ", ".join(f"'{n}'" for n in orphans[:_LISTED])
            more = f" and {len(orphans) - _LISTED} more" if len(orphans) > _LISTED else ""
            count = len(orphans)
            yield self.report(
                ctx,
                f"{count} value_info entr{'ies' if count > 1 else 'y'} describe{'' if count > 1 else 's'} tensors "
                f"nothing in the model defines: {shown}{more}; left behind by a tool that removed or fused nodes, "
                "they are ignored by inference, ONNX Runtime, its FP16 converter and quantizer",
                Location(scope.path, tensor=orphans[0]),
            )
