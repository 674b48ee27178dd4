"""## checker-error (OL102)

### What it does
Runs `onnx.checker` and, when it fails, checks every node, graph input,
output, `value_info` entry and initializer on its own (in the main graph and
in every subgraph), so that *each* error is reported at its own location, in
the checker's own words: an attribute the operator does not have, an
operator the imported opset does not define, a malformed type.

### Why does this matter?
`onnx.checker.check_model` stops at the first error and does not say where it
is; a user fixes one problem, runs it again, and meets the next. ONNX
Runtime, the quantizers and the FP16 converters run the same checks (or
crash on what they would have caught).

On a model that holds both float and float16 (or bfloat16) tensors, the full
checker's type check runs too, node by node: a node whose inputs break its operator's type
constraint (a Gemm with a float `A` and a float16 `B`, as ONNX Runtime's FP16
converter with `keep_io_types` can leave one) is an error ONNX Runtime refuses
to load, and no fix of the declarations can repair it.

A node where ONNX's own inference fails (`Axis has less than the requested k
elements`) while declared `value_info` types cover the tensors it leaves
untyped is an error here too: the declarations hide the failure from OL003
(for instance after its fix filled them), not from the full checker or ONNX
Runtime. After `--fix`, a model the full checker or ONNX Runtime still rejects
always keeps an OL102 error, so it is never reported clean.

Every such claim is the tools' own verdict in this run, quoted: the full
checker on the model as it is, and ONNX Runtime asked to load it in a bounded
child process (where it can be: not for external weights or more than 20,000
nodes). onnx-lint infers on a copy without the declarations, and a failure
that exists only there (a tensor an onnxslim-inlined `If` branch leaves
untyped, a `Loop` body output named like a body input) is a limit of that
copy, not a defect: where the full checker and ONNX Runtime accept the model,
nothing is reported.

Errors that other rules report with a better location or a fix are left to
them: nodes out of topological order (OL103) and graph outputs nothing
produces (OL104). The shape-inference part of the full check is what
OL001–OL007 report. The check runs on a copy without weight bytes: external
data is never read.

### Example
```
Relu(X) with attribute foo=3
```
gives `graph/node[1] 'r1' (Relu): Unrecognized attribute: foo for operator Relu`.

### Fix safety
Safe, for one error: an IR 3 model whose initializers are not graph inputs
(`W in initializer but not in graph input`, which old exporters and ONNX
Runtime's own samples write) gets IR version 4, the version that dropped that
requirement and changed nothing else; nodes, initializers and the model's
inputs stay as they are. Every other error has no fix: it needs a decision only
the model's author can make (which attribute was meant, which opset to
target).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from onnx_lint.engines.checker import checker_errors
from onnx_lint.engines.engine import Engine
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, FixAvailability, Location, Severity
from onnx_lint.lint.rule_api import Rule, the_edit
from onnx_lint.model.edits import Edit, SetIrVersion
from onnx_lint.model.graphs import resolve_graph

# The one checker error with a safe fix: IR 3 required every initializer to be a graph input; IR 4 does not.
INITIALIZER_NOT_INPUT = "in initializer but not in graph input"


class CheckerError(Rule):
    code = "OL102"
    name = "checker-error"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SOMETIMES
    summary = "onnx.checker rejects a node or declaration (every error, each with its location)"

    def fix_title(self, edits: Sequence[Edit]) -> str:
        edit = the_edit(edits, SetIrVersion)
        return f"Raise the IR version to {edit.version} (initializers need not be graph inputs)"

    def prepare(self, ctx: LintContext) -> None:
        ctx.holds_half_and_float  # noqa: B018 -- read from the file while inference runs

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        for error in checker_errors(ctx.loaded):
            index = error.index or 0  # only a model-level finding has no index
            if error.what == "node":
                node = resolve_graph(ctx.model, error.graph).node[index]
                location = Location.at_node(error.graph, index, node)
            elif error.what == "model":
                location = Location(error.graph)
            else:
                location = Location.at_entry(error.graph, error.what, index, tensor=error.name)
            raisable = INITIALIZER_NOT_INPUT in error.message and ctx.model.ir_version == 3
            edits: list[Edit] | None = [SetIrVersion(4)] if raisable else None
            yield self.report(ctx, f"onnx.checker: {error.message}", location, engine=Engine.CHECKER, edits=edits)
        failures = ctx.covered_failures
        conflicts = ctx.oracle.type_conflicts() if ctx.holds_half_and_float else {}
        if not failures and not conflicts:
            return
        # onnx-lint's own inference of the stripped copy is only a lead: the tools' verdicts decide.
        verdicts = ctx.tool_verdicts
        if not verdicts.refused:
            return  # the full checker and ONNX Runtime accept the model: a limit of the copy, not a defect
        for scope, index, message in failures:
            node = scope.graph.node[index]
            yield self.report(
                ctx, f"ONNX inference fails at this node ({message}); the declared types of its outputs "
                     f"only hide it: {verdicts.quoted()}",
                Location.at_node(scope.path, index, node),
                engine=Engine.CHECKER_FULL)
        for (graph, index), message in sorted(conflicts.items()):
            node = resolve_graph(ctx.model, graph).node[index]
            yield self.report(
                ctx, f"the node's input types break its operator's type constraint ({message}): "
                     f"{verdicts.quoted()}",
                Location.at_node(graph, index, node),
                engine=Engine.CHECKER_FULL)
