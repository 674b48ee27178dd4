"""Why ONNX's inference left one node's outputs untyped, in the engine's own words.

Whole-model strict inference reports its failures as text that names a node
only by op type and (optional) name, so two unnamed nodes of one op type cannot
be told apart; and it reports nothing at all once the model holds one operator
it has no schema for. Instead, each *frontier* node (typed inputs, untyped
outputs) is inferred again on its own, with ``onnx.shape_inference.infer_node_outputs``
and the input types and constant values the whole-model run knew: the exception
it raises is that node's message, exactly. A call of a model-local function runs
as a one-node model instead (onnx's per-function API takes no values). What
neither can reproduce (a failure on values data propagation computed upstream)
is left to the caller's fallback, strict whole-model inference. Only frontier
nodes pay; a model whose every output is typed never gets here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache

import onnx
import onnx.defs
import onnx.shape_inference

from onnx_lint.base.errors import first_line, inner_message, untagged
from onnx_lint.engines.onnx_inference import run_onnx_inference
from onnx_lint.model.graphs import onnx_domain, outer_reads, subgraph_attributes

TypeOf = Callable[[str], "onnx.TypeProto | None"]
DataOf = Callable[[str], "onnx.TensorProto | None"]



@dataclass(frozen=True)
class ModelFacts:
    """The model-level facts per-node inference needs: opset imports, IR version, local functions."""

    opsets: Mapping[str, int]
    opset_imports: tuple[onnx.OperatorSetIdProto, ...]
    ir_version: int
    functions: Mapping[tuple[str, str], onnx.FunctionProto]

    @classmethod
    def of(cls, model: onnx.ModelProto) -> ModelFacts:
        opsets = {_domain(o.domain): o.version for o in model.opset_import}
        functions = {(_domain(f.domain), f.name): f for f in model.functions}
        return cls(opsets, tuple(model.opset_import), model.ir_version, functions)


# When neither inferring the node alone nor strict whole-model inference says anything.
NO_TYPE = "ONNX shape inference derived no type for its outputs"


@dataclass(frozen=True)
class NodeFailure:
    """What inferring one node on its own said.

    ``message`` is the node's own failure (or a schema fact), exact. It is None when the node
    inferred without error: the whole-model run then failed on values data propagation computed
    upstream, which one node's inference cannot be given, and strict whole-model inference is
    the one to ask; ``otherwise`` is what to say if that has nothing either.
    """

    message: str | None
    otherwise: str = NO_TYPE


def explain_untyped(node: onnx.NodeProto, facts: ModelFacts, type_of: TypeOf, data_of: DataOf) -> NodeFailure:
    """Infer ``node`` alone from the types (``type_of``) and constant values (``data_of``) in its scope.

    ``type_of`` answers for the node's outputs too: None for those the whole-model run left untyped.
    """
    domain = _domain(node.domain)
    if (domain, node.op_type) in facts.functions and not onnx.defs.has(node.op_type, domain):
        return _explain_function(node, facts, type_of, data_of)
    version = facts.opsets.get(domain)
    if version is None:
        return NodeFailure(f"its domain '{_shown(domain)}' is not among the model's opset imports")
    try:
        schema = onnx.defs.get_schema(node.op_type, version, domain)
    except onnx.defs.SchemaError:
        return NodeFailure(_no_schema(node.op_type, domain, version))
    left = [o for o in node.output if o and type_of(o) is None]
    where = f"{node.op_type} ({_shown(domain)} opset {version})"
    if not schema.has_type_and_shape_inference_function:
        fixed = _fixed(schema, node, left)
        hint = f"; it fixes {fixed}, which only infer_shapes(check_type=True) applies" if fixed else ""
        return NodeFailure(f"ONNX's schema for {where} defines no shape inference{hint}")
    types, missing = _input_types(node, type_of)
    if missing:
        return NodeFailure(f"its input '{missing}' has no type")
    data = {name: tensor for name in node.input if name and (tensor := data_of(name)) is not None}
    try:
        outputs = onnx.shape_inference.infer_node_outputs(
            schema, node, types, input_data=data, opset_imports=list(facts.opset_imports),
            ir_version=facts.ir_version)
    except Exception as exc:  # onnx raises InferenceError, and plain errors for malformed nodes
        return NodeFailure(_clean(exc))
    still = [o for o in left if not has_elem_type(outputs.get(o))]
    if still:
        return NodeFailure(None, f"ONNX's inference for {where} gives '{still[0]}' no type")
    fixed = _fixed(schema, node, left)
    if fixed:  # typed alone only by the schema's type constraints, which inference applies with check_type
        return NodeFailure(None, f"ONNX's shape inference for {where} does not type {fixed} (its schema fixes "
                                 "that; only infer_shapes(check_type=True) applies it)")
    return NodeFailure(None)


def _fixed(schema: onnx.defs.OpSchema, node: onnx.NodeProto, outputs: list[str]) -> str:
    """"'y' as tensor(float)" for each of ``outputs`` whose type the schema alone decides ('' for none)."""
    outs = list(node.output)
    fixed = [(name, _allowed_types(schema, outs.index(name))) for name in outputs]
    return ", ".join(f"'{name}' as {allowed[0]}" for name, allowed in fixed if len(allowed) == 1)


def _allowed_types(schema: onnx.defs.OpSchema, index: int) -> list[str]:
    formals = schema.outputs
    if not formals:
        return []
    formal = formals[min(index, len(formals) - 1)]
    if index >= len(formals) and formal.option != onnx.defs.OpSchema.FormalParameterOption.Variadic:
        return []
    for constraint in schema.type_constraints:
        if constraint.type_param_str == formal.type_str:
            return list(constraint.allowed_type_strs)
    return [formal.type_str]


def _explain_function(node: onnx.NodeProto, facts: ModelFacts, type_of: TypeOf, data_of: DataOf) -> NodeFailure:
    """A call of a model-local function, inferred alone: onnx's per-function API
    (``infer_function_output_types``) takes no constant values, so the call runs as the one node of a
    model of its own (its constant inputs as initializers, the model's functions and opset imports)
    under strict inference, which can only be reporting that node."""
    inputs: list[onnx.ValueInfoProto] = []
    initializers: list[onnx.TensorProto] = []
    for name in dict.fromkeys(n for n in node.input if n):
        tensor = data_of(name)
        if tensor is not None:
            named = onnx.TensorProto()
            named.CopyFrom(tensor)
            named.name = name
            initializers.append(named)
            continue
        found = type_of(name)
        if found is None:
            return NodeFailure(f"its input '{name}' has no type")
        inputs.append(onnx.helper.make_value_info(name, found))
    outputs = [onnx.ValueInfoProto(name=name) for name in node.output if name]
    graph = onnx.helper.make_graph([node], "call", inputs, outputs, initializers)
    model = onnx.helper.make_model(graph, opset_imports=list(facts.opset_imports), ir_version=facts.ir_version,
                                   functions=list(facts.functions.values()))
    try:
        inferred = run_onnx_inference(model, strict=True)  # under the engines' memory ceiling
    except Exception as exc:
        return NodeFailure(inner_message(first_line(exc)) or type(exc).__name__)
    typed = {v.name for v in list(inferred.graph.value_info) + list(inferred.graph.output) if has_elem_type(v.type)}
    if all(name in typed for name in node.output if name):
        return NodeFailure(None)
    return NodeFailure(None, f"ONNX's inference of function '{node.op_type}' gives its outputs no type")


def _input_types(node: onnx.NodeProto, type_of: TypeOf) -> tuple[dict[str, onnx.TypeProto], str | None]:
    """Types of the node's inputs and of what its subgraphs read from outside (onnx takes both in one
    table), or the first input without one."""
    types: dict[str, onnx.TypeProto] = {}
    for name in node.input:
        if not name or name in types:
            continue
        found = type_of(name)
        if found is None:
            return types, name
        types[name] = found
    if next(subgraph_attributes(node), None) is not None:
        for name in sorted(outer_reads(node)):
            found = type_of(name)
            if found is not None and name not in types:
                types[name] = found
    return types, None


def _no_schema(op_type: str, domain: str, version: int) -> str:
    if domain not in _known_domains():
        return f"no schema for operator '{op_type}' of domain '{domain}' (custom operator)"
    if onnx.defs.has(op_type, domain):
        since = min(s.since_version for s in _history(op_type, domain))
        return (f"operator '{op_type}' does not exist at opset {version} of domain '{_shown(domain)}' "
                f"(it was introduced in opset {since})")
    return f"no schema for operator '{op_type}' in domain '{_shown(domain)}' (not an operator of that domain)"


def _history(op_type: str, domain: str) -> list[onnx.defs.OpSchema]:
    return [s for s in onnx.defs.get_all_schemas_with_history() if s.name == op_type and s.domain == domain]


@cache
def _known_domains() -> frozenset[str]:
    """Domains onnx has schemas for (ai.onnx, ai.onnx.ml, ai.onnx.preview.training, ...); ~30 ms, once."""
    return frozenset(_domain(s.domain) for s in onnx.defs.get_all_schemas())


def _domain(domain: str) -> str:
    return onnx_domain(domain)


def _shown(domain: str) -> str:
    return domain or "ai.onnx"


def _clean(exc: BaseException) -> str:
    return untagged(first_line(exc)) or type(exc).__name__


def has_elem_type(value: onnx.TypeProto | None) -> bool:
    """Whether a type says its element type (a tensor of UNDEFINED says nothing)."""
    if value is None:
        return False
    which = value.WhichOneof("value")
    if which == "tensor_type":
        return value.tensor_type.elem_type != 0
    return which is not None
