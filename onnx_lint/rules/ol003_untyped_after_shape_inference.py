"""## untyped-after-shape-inference (UntypedAfterShapeInference, OL003)

### What it does
After ONNX shape inference, finds tensors that are consumed by a node or are
graph outputs but have no element type, and traces them back to the
*root-cause node*: the node where inference stopped. One diagnostic per root
cause, quoting the engine's own message for that node, got by inferring the
node again on its own (for example `Axis has less than the requested k
elements`), or saying why there is none (a custom operator without a schema,
an operator newer than the model's opset, a schema without shape inference),
and listing the untyped tensors downstream. Tensors whose type the model
itself declares (value_info) are not reported.

### Why does this matter?
ONNX Runtime's quantizer (`quantize_static`), FP16 converters and TensorRT
need the element type of every tensor. One operator that inference cannot
resolve leaves everything after it untyped, and those tools then fail far
from the cause with `Input 0 expected to have type but instead is null`.

Severity follows consequences, judged per operator from its schema: the finding
is a *warning* where a tool of the pipeline needs the type — a standard-domain
operator downstream whose type parameter ties the untyped input to another input
or an output (Identity, Concat, Add, Less, MatMul): ONNX Runtime's FP16 converter
then writes a model that does not load (`Type parameter (T) of Optype (Concat)
bound to different types`) and its quantizer skips the tensor (`failed to infer
the type of tensor`) — or where the checker or ONNX Runtime rejects the model. It
is only *info* (it does not fail `check`) where the inference stopped at an
`ai.onnx.ml` operator, what it left untyped reaches only `ai.onnx.ml` operators and
operators that accept any input type (Cast, CastLike's input, Shape, Size,
NonZero), and the full checker and ONNX Runtime (asked in a child process, when
installed) accept the model: a healthy scikit-learn / LightGBM / XGBoost export
(SVR, SVC, a Scaler → LogisticRegression with ZipMap) whose tree ensemble or SVM
ONNX's inference simply does not type. Such a model converts to FP16 and loads,
so `--fix` leaves it byte-identical (the info note offers no fix; `quantize`
types what it needs itself).

### Example
```
values, indices = TopK(X[1,3], K=5, axis=1)   # K larger than the axis
Y = Cast(indices, to=FLOAT)
```
ONNX inference stops at TopK: `values` and `indices` have no type.

### Fix safety
Safe: the fix adds `value_info` entries with element types propagated from the
operator schemas in topological order (values: FLOAT, indices: INT64; the root
node's unused outputs are typed too), keeping
every shape inference did derive. It never changes a node. Outputs of custom
operators without a schema stay untyped and are listed as such: never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from onnx_lint.engines.engine import Engine
from onnx_lint.lint.consequences import model_accepted, model_opsets, typing_consumers
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, FixAvailability, Location, Severity
from onnx_lint.lint.rule_api import Rule
from onnx_lint.lint.untyped import UntypedGroup
from onnx_lint.model.edits import AddValueInfo, Edit, SetType
from onnx_lint.model.graphs import ROOT, resolve_graph
from onnx_lint.model.shapes import TensorInfo, elem_type_name

_LISTED = 12


def _names(tensors: list[str]) -> str:
    shown = ", ".join(f"'{t}'" for t in tensors[:_LISTED])
    more = len(tensors) - _LISTED
    return shown + (f" and {more} more" if more > 0 else "")


class UntypedAfterShapeInference(Rule):
    code = "OL003"
    name = "untyped-after-shape-inference"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SOMETIMES
    summary = "Tensors are left without element type after ONNX shape inference"

    def fix_title(self, edits: Sequence[Edit]) -> str:
        typed = [f"'{e.tensor}' as {elem_type_name(e.elem_type or 0)}" for e in edits
                 if isinstance(e, SetType | AddValueInfo)]
        more = f" and {len(typed) - 3} more tensors" if len(typed) > 3 else ""
        return f"Declare {', '.join(typed[:3])}{more}"

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        accepted: tuple[bool, str] | None = None
        opsets = model_opsets(ctx.model)
        for group in ctx.untyped_groups:
            edits, untypable = self._fill(ctx, group)
            severity: Severity | None = None
            consequence = ""
            scope = next(s for s in ctx.scopes if s.path == group.graph)
            breaking, free = typing_consumers(scope, group.tensors, opsets)
            if breaking:
                consequence = (f"; {', '.join(breaking[:4])} downstream need{'s' if len(breaking) == 1 else ''} "
                               "the type (INT8 quantization and FP16 conversion rewrite it)")
            elif group.node is not None and group.node.domain in ("ai.onnx.ml",):
                if accepted is None:
                    accepted = model_accepted(ctx.loaded)
                if accepted[0]:
                    severity = Severity.INFO
                    accepting = (f"; {', '.join(free[:4])} accept{'s' if len(free) == 1 else ''} any input type"
                                 if free else "")
                    consequence = (f"; no operator downstream needs the type ({accepted[1]}; the quantizer "
                                   f"and FP16 converters leave ai.onnx.ml operators as they are{accepting})")
            if group.node is not None and group.node_index is not None:  # set together: the root-cause node
                location = Location.at_node(group.graph, group.node_index, group.node)
                where = "ONNX shape inference stopped at this node"
            else:
                location = Location(group.graph, tensor=group.tensors[0])
                where = "tensor has no producer and no declared type"
            count = len(group.tensors)
            message = (f"{where}: {group.message}; {count} tensor{'s' if count > 1 else ''} downstream "
                       f"{'have' if count > 1 else 'has'} no element type: {_names(group.tensors)}")
            if edits and untypable:
                message += f"; cannot type {_names(untypable)} (no operator schema)"
            elif not edits:
                message += "; no operator schema gives their types, so there is no fix"
            message += consequence
            if severity is Severity.INFO:
                edits = []  # nothing needs the types: a healthy model stays byte-identical under --fix
            yield self.report(ctx, message, location, engine=Engine.ONNX, edits=edits or None, severity=severity)

    @staticmethod
    def _fill(ctx: LintContext, group: UntypedGroup) -> tuple[list[Edit], list[str]]:
        graph = resolve_graph(ctx.model, group.graph)
        outputs = {v.name for v in graph.output}
        declared = {v.name for v in graph.value_info}
        symbolic = ctx.oracle.symbolic_types() if group.graph == ROOT else {}
        edits: list[Edit] = []
        untypable: list[str] = []
        for name in group.tensors:
            elem_type = ctx.filled_types.get((group.graph, name))
            if not elem_type:
                untypable.append(name)
                continue
            if name in outputs:
                edits.append(SetType(group.graph, "output", name, elem_type=elem_type))
            elif name in declared:
                edits.append(SetType(group.graph, "value_info", name, elem_type=elem_type))
            else:
                edits.append(_declare(ctx, group.graph, name, elem_type, symbolic))
        # The root node's unused outputs (TopK's `values` where only `indices` is read) get their
        # type too: tools that walk every node output (FP16 converters) ask for it.
        derived = ctx.oracle.values(group.graph)
        for name in group.node.output if group.node is not None and edits else ():
            if not name or name in group.tensors or name in outputs or name in declared:
                continue
            value = derived.get(name)
            elem_type = ctx.filled_types.get((group.graph, name))
            if elem_type and (value is None or not value.type.tensor_type.elem_type):
                edits.append(_declare(ctx, group.graph, name, elem_type, symbolic))
        return edits, untypable


def _declare(ctx: LintContext, graph: str, name: str, elem_type: int, symbolic: dict[str, TensorInfo]) -> AddValueInfo:
    """The new value_info of an untyped tensor: its type, and the dims ONNX Runtime's symbolic engine
    derived, each number only where the pinned inferences prove it."""
    dims, proofs = ctx.proven_public_dims(graph, name, symbolic[name].dims if name in symbolic else None)
    return AddValueInfo(graph, name, elem_type, dims, proofs)
