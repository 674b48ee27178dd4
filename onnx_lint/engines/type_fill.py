"""Schema-based element-type propagation (docs/design.md).

ONNX's shape inference gives up on a node as soon as anything about it looks
wrong (a ``K`` larger than the axis, an unknown dim it needs), and every tensor
downstream is left untyped. Element types rarely depend on what made it give
up: the op schemas say which inputs share a type parameter and which outputs
have a fixed type. This module replays only that part, so the linter can tell
"untyped because inference stopped" from "untyped because nobody can know".

It never guesses: a tensor whose element type does not follow from schemas,
attributes or seeds is left out of the result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import onnx
from onnx import AttributeProto, TensorProto
from onnx.defs import OpSchema

from onnx_lint.model.graphs import (
    ONNX_DOMAINS,
    ROOT,
    GraphScope,
    iter_scopes,
    onnx_domain,
    subgraph_attributes,
    topological_order,
)

Key = tuple[str, str]  # (graph path, tensor name)

_TENSOR_TYPE = re.compile(r"tensor\((\w+)\)")
_DTYPE_BY_NAME = {name.lower(): value for name, value in TensorProto.DataType.items() if value}
_VALID_DTYPES = frozenset(_DTYPE_BY_NAME.values())
# Attributes that name an output's element type; ``output_datatype`` is the window ops'
# and MelWeightMatrix's spelling, ``stash_type`` types LayerNormalization's Mean/InvStdDev.
_DTYPE_ATTRIBUTES = ("dtype", "to", "output_dtype", "output_datatype", "stash_type")


def elem_type_of(type_str: str) -> int | None:
    """``tensor(float16)`` -> FLOAT16; ``None`` for anything that is not a plain tensor type."""
    match = _TENSOR_TYPE.fullmatch(type_str)
    return _DTYPE_BY_NAME.get(match.group(1)) if match else None


# -- schema signatures -------------------------------------------------------------------


@dataclass(frozen=True)
class _Formal:
    """One formal input or output, reduced to what type binding needs."""

    type_str: str
    variadic: bool
    homogeneous: bool


@dataclass(frozen=True)
class _Signature:
    """A schema's typing rules, precomputed once per (domain, op, version)."""

    since_version: int
    inputs: tuple[_Formal, ...]
    outputs: tuple[_Formal, ...]
    params: frozenset[str]
    tensor_types: Mapping[str, frozenset[int]]  # element types each param allows as plain tensors
    single: Mapping[str, int]  # params whose constraint allows exactly one type, a tensor type
    dtype_defaults: Mapping[str, int]  # schema defaults of the dtype-like attributes
    input_params: frozenset[str]  # params some formal input carries: only inputs decide those


def _formals(params: Iterable[OpSchema.FormalParameter]) -> tuple[_Formal, ...]:
    variadic = OpSchema.FormalParameterOption.Variadic
    return tuple(_Formal(p.type_str, p.option == variadic, p.is_homogeneous) for p in params)


def _signature(schema: OpSchema) -> _Signature:
    tensor_types: dict[str, frozenset[int]] = {}
    single: dict[str, int] = {}
    for constraint in schema.type_constraints:
        allowed = list(constraint.allowed_type_strs)
        elems = frozenset(e for e in map(elem_type_of, allowed) if e is not None)
        tensor_types[constraint.type_param_str] = elems
        if len(allowed) == 1 and elems:
            single[constraint.type_param_str] = next(iter(elems))
    return _Signature(
        since_version=schema.since_version,
        inputs=_formals(schema.inputs),
        outputs=_formals(schema.outputs),
        params=frozenset(tensor_types),
        tensor_types=tensor_types,
        single=single,
        dtype_defaults=_dtype_defaults(schema),
        input_params=frozenset(p.type_str for p in schema.inputs),
    )


def _dtype_defaults(schema: OpSchema) -> dict[str, int]:
    """Defaults such as RandomNormal's ``dtype=FLOAT``: an absent attribute still decides."""
    defaults = {}
    for name in _DTYPE_ATTRIBUTES:
        attr = schema.attributes.get(name)
        if attr is None or not attr.default_value.name:
            continue
        value = attr.default_value
        if value.type == AttributeProto.INT and value.i in _VALID_DTYPES:
            defaults[name] = value.i
    return defaults


def _formal_at(formals: tuple[_Formal, ...], index: int) -> _Formal | None:
    """The formal covering actual position ``index``; a trailing variadic covers the rest."""
    if index < len(formals):
        return formals[index]
    if formals and formals[-1].variadic:
        return formals[-1]
    return None


def _binds(formal: _Formal, params: frozenset[str]) -> bool:
    """Whether actuals of this formal share one type parameter (heterogeneous variadics do not)."""
    return formal.type_str in params and (formal.homogeneous or not formal.variadic)


# -- attributes --------------------------------------------------------------------------


def _attribute(node: onnx.NodeProto, name: str) -> AttributeProto | None:
    for attr in node.attribute:
        if attr.name == name:
            return attr
    return None


def _dtype_attribute(node: onnx.NodeProto, name: str) -> int | None:
    """A valid, non-zero int attribute naming an element type."""
    attr = _attribute(node, name)
    if attr is None or attr.type != AttributeProto.INT:
        return None
    return attr.i if attr.i in _VALID_DTYPES else None


def _fallback_dtype(node: onnx.NodeProto, sig: _Signature, param: str) -> int | None:
    """For an output whose type parameter nothing bound: the op's dtype-like attribute.

    Only for parameters no input carries. The attribute (or its schema default)
    must name a tensor type the parameter allows; SequenceEmpty's ``dtype`` names the element type of a sequence, not
    a tensor's.
    """
    if param in sig.input_params:
        return None  # Range's T with untyped inputs is unknown, whatever its stash_type says
    allowed = sig.tensor_types.get(param, frozenset())
    for name in _DTYPE_ATTRIBUTES:
        found = _dtype_attribute(node, name)
        if found is None:
            found = sig.dtype_defaults.get(name)
        if found is not None:
            return found if found in allowed else None
    return None


def _tensor_dtype(tensor: TensorProto) -> int | None:
    return tensor.data_type if tensor.data_type in _VALID_DTYPES else None


_CONSTANT_FORMS: dict[str, int] = {
    "value_float": TensorProto.FLOAT,
    "value_floats": TensorProto.FLOAT,
    "value_int": TensorProto.INT64,
    "value_ints": TensorProto.INT64,
    "value_string": TensorProto.STRING,
    "value_strings": TensorProto.STRING,
}


def _constant_dtype(node: onnx.NodeProto) -> int | None:
    """Constant's type lives in whichever of its mutually exclusive attributes is set."""
    for attr in node.attribute:
        if attr.name == "value" and attr.type == AttributeProto.TENSOR:
            return _tensor_dtype(attr.t)
        if attr.name == "sparse_value" and attr.type == AttributeProto.SPARSE_TENSOR:
            return _tensor_dtype(attr.sparse_tensor.values)
        if attr.name in _CONSTANT_FORMS:
            return _CONSTANT_FORMS[attr.name]
    return None


# -- the propagator ----------------------------------------------------------------------

Special = Callable[["_Propagator", GraphScope, onnx.NodeProto], "int | None"]


class _Propagator:
    """Types one model; holds the per-graph tables and the schema cache."""

    def __init__(self, model: onnx.ModelProto, known: Mapping[Key, int] | None) -> None:
        self.opsets = _opsets(model)
        self.scopes = {scope.path: scope for scope in iter_scopes(model)}
        self.types: dict[str, dict[str, int]] = {}
        self.defined: dict[str, set[str]] = {}
        self._signatures: dict[tuple[str, str, int], _Signature | None] = {}
        for scope in self.scopes.values():
            self._seed(scope)
        for (path, name), elem in (known or {}).items():
            if name and elem in _VALID_DTYPES:
                self.types.setdefault(path, {}).setdefault(name, elem)

    def run(self, root: str) -> dict[Key, int]:
        """Type the root graph (subgraphs follow their owners) and flatten the tables."""
        self._run_graph(self.scopes[root])
        return {(path, name): elem for path, table in self.types.items() for name, elem in table.items()}

    # seeds and lookups

    def _seed(self, scope: GraphScope) -> None:
        """Initializers, inputs and any annotation already carrying an element type."""
        graph = scope.graph
        table = self.types.setdefault(scope.path, {})
        for init in graph.initializer:
            if (elem := _tensor_dtype(init)) is not None:
                table.setdefault(init.name, elem)
        for sparse in graph.sparse_initializer:
            if (elem := _tensor_dtype(sparse.values)) is not None:
                table.setdefault(sparse.values.name, elem)
        for value in (*graph.input, *graph.value_info, *graph.output):
            if value.type.HasField("tensor_type") and value.type.tensor_type.elem_type in _VALID_DTYPES:
                table.setdefault(value.name, value.type.tensor_type.elem_type)
        defined = {v.name for v in graph.input}
        defined.update(t.name for t in graph.initializer)
        defined.update(t.values.name for t in graph.sparse_initializer)
        defined.update(out for node in graph.node for out in node.output)
        defined.discard("")
        self.defined[scope.path] = defined

    def lookup(self, scope: GraphScope, name: str) -> int | None:
        """A name's type as seen from ``scope``: the innermost graph defining it decides."""
        for current in scope.outward():
            found = self.types[current.path].get(name)
            if found is not None:
                return found
            if name in self.defined[current.path]:
                return None
        return None

    def input_type(self, scope: GraphScope, node: onnx.NodeProto, index: int) -> int | None:
        """Type of a node's ``index``-th input; ``None`` when omitted or unknown."""
        if index >= len(node.input) or not node.input[index]:
            return None
        return self.lookup(scope, node.input[index])

    def _assign(self, scope: GraphScope, name: str, elem: int | None) -> None:
        """Record a derived type; seeds (what the model or caller said) always win."""
        if name and elem is not None:
            self.types[scope.path].setdefault(name, elem)

    # schemas

    def signature(self, node: onnx.NodeProto) -> _Signature | None:
        """The schema for the model's opset of the node's domain; cached, lookups are slow."""
        domain = onnx_domain(node.domain)
        version = self.opsets.get(domain)
        if version is None:
            return None
        key = (domain, node.op_type, version)
        if key not in self._signatures:
            self._signatures[key] = _lookup_signature(node.op_type, version, domain)
        return self._signatures[key]

    # graphs and nodes

    def _run_graph(self, scope: GraphScope) -> None:
        for index in topological_order(scope.graph):
            self._visit(scope, index)

    def _visit(self, scope: GraphScope, index: int) -> None:
        node = scope.graph.node[index]
        sig = self.signature(node)
        outputs: list[int | None] = self._schema_outputs(scope, node, sig) if sig else [None] * len(node.output)
        control = self._run_subgraphs(scope, index, node, sig)
        for i, elem in enumerate(control[: len(outputs)]):
            if elem is not None:
                outputs[i] = elem
        if sig and node.domain in ONNX_DOMAINS and node.op_type in _SPECIALS and outputs:
            special = _SPECIALS[node.op_type](self, scope, node)
            if special is not None:
                outputs[0] = special
        for name, elem in zip(node.output, outputs):
            self._assign(scope, name, elem)

    def _schema_outputs(self, scope: GraphScope, node: onnx.NodeProto, sig: _Signature) -> list[int | None]:
        """Output types from the type parameters the typed inputs bind."""
        bound: dict[str, int] = {}
        conflicting: set[str] = set()
        for i, name in enumerate(node.input):
            formal = _formal_at(sig.inputs, i)
            if not name or formal is None or not _binds(formal, sig.params):
                continue
            elem = self.lookup(scope, name)
            if elem is None:
                continue
            if bound.setdefault(formal.type_str, elem) != elem:
                conflicting.add(formal.type_str)
        return [
            self._output_type(node, _formal_at(sig.outputs, i), sig, bound, conflicting) if name else None
            for i, name in enumerate(node.output)
        ]

    @staticmethod
    def _output_type(
        node: onnx.NodeProto,
        formal: _Formal | None,
        sig: _Signature,
        bound: Mapping[str, int],
        conflicting: set[str],
    ) -> int | None:
        if formal is None:
            return None
        param = formal.type_str
        if param not in sig.params:
            return elem_type_of(param)
        if not _binds(formal, sig.params) or param in conflicting or not sig.tensor_types[param]:
            return None  # heterogeneous, contradictory, or never a plain tensor (seq, map, optional)
        if param in bound:
            return bound[param]
        if param in sig.single:
            return sig.single[param]
        return _fallback_dtype(node, sig, param)

    def _run_subgraphs(
        self, scope: GraphScope, index: int, node: onnx.NodeProto, sig: _Signature | None
    ) -> list[int | None]:
        """Type every subgraph of a node; for If/Loop/Scan also the node's outputs."""
        subs = {
            segment: self.scopes[path]
            for segment, _ in subgraph_attributes(node)
            if (path := f"{scope.path}/node[{index}]/{segment}") in self.scopes
        }
        if not subs:
            return []
        control = _CONTROL.get(node.op_type) if sig and node.domain in ONNX_DOMAINS else None
        if control is not None and sig is not None:
            control.bind_inputs(self, scope, node, sig, subs)
        for sub in subs.values():
            self._run_graph(sub)
        return control.outputs(self, node, subs) if control is not None else []

    def bind_body_inputs(self, body: GraphScope, elems: Iterable[int | None]) -> None:
        """Body inputs from the owner's inputs; types the body declares itself win."""
        for value, elem in zip(body.graph.input, elems):
            self._assign(body, value.name, elem)

    def body_outputs(self, body: GraphScope | None) -> list[int | None]:
        """A subgraph's output types; an output may be an outer-scope name."""
        if body is None:
            return []
        return [self.lookup(body, value.name) if value.name else None for value in body.graph.output]


def _opsets(model: onnx.ModelProto) -> dict[str, int]:
    opsets: dict[str, int] = {}
    for entry in model.opset_import:
        opsets[onnx_domain(entry.domain)] = entry.version
    return opsets


def _lookup_signature(op_type: str, version: int, domain: str) -> _Signature | None:
    try:
        schema = onnx.defs.get_schema(op_type, max_inclusive_version=version, domain=domain)
    except onnx.defs.SchemaError:
        return None
    return _signature(schema)


# -- ops whose output type an attribute or a specific input decides ------------------------


def _dtype_or_input(p: _Propagator, scope: GraphScope, node: onnx.NodeProto) -> int | None:
    found = _dtype_attribute(node, "dtype")
    return found if found is not None else p.input_type(scope, node, 0)


def _dtype_or(default: int) -> Special:
    def special(p: _Propagator, scope: GraphScope, node: onnx.NodeProto) -> int | None:
        found = _dtype_attribute(node, "dtype")
        return found if found is not None else default

    return special


def _constant_of_shape(p: _Propagator, scope: GraphScope, node: onnx.NodeProto) -> int | None:
    value = _attribute(node, "value")
    if value is None:
        return TensorProto.FLOAT
    return _tensor_dtype(value.t) if value.type == AttributeProto.TENSOR else None


def _quantize_linear(p: _Propagator, scope: GraphScope, node: onnx.NodeProto) -> int | None:
    """``output_dtype``, else the zero point's type, else the UINT8 default.

    A zero point that is given but untyped decides the type too, so no default is
    assumed then: the result stays unknown.
    """
    found = _dtype_attribute(node, "output_dtype")
    if found is not None:
        return found
    if len(node.input) > 2 and node.input[2]:
        return p.input_type(scope, node, 2)
    return TensorProto.UINT8


def _dequantize_linear(p: _Propagator, scope: GraphScope, node: onnx.NodeProto) -> int | None:
    found = _dtype_attribute(node, "output_dtype")
    return found if found is not None else p.input_type(scope, node, 1)


_SPECIALS: dict[str, Special] = {
    "Cast": lambda p, scope, node: _dtype_attribute(node, "to"),
    "CastLike": lambda p, scope, node: p.input_type(scope, node, 1),
    "Constant": lambda p, scope, node: _constant_dtype(node),
    "ConstantOfShape": _constant_of_shape,
    "EyeLike": _dtype_or_input,
    "RandomNormal": _dtype_or(TensorProto.FLOAT),
    "RandomUniform": _dtype_or(TensorProto.FLOAT),
    "RandomNormalLike": _dtype_or_input,
    "RandomUniformLike": _dtype_or_input,
    "Bernoulli": _dtype_or_input,
    "Multinomial": _dtype_or(TensorProto.INT32),
    "QuantizeLinear": _quantize_linear,
    "DequantizeLinear": _dequantize_linear,
}


# -- control flow --------------------------------------------------------------------------

Subgraphs = Mapping[str, GraphScope]


class _If:
    """Outputs follow then_branch, or else_branch where then_branch's is unknown."""

    @staticmethod
    def bind_inputs(p: _Propagator, scope: GraphScope, node: onnx.NodeProto, sig: _Signature,
                    subs: Subgraphs) -> None:
        return None  # branches take no inputs; outer names are visible through lookup

    @staticmethod
    def outputs(p: _Propagator, node: onnx.NodeProto, subs: Subgraphs) -> list[int | None]:
        then = p.body_outputs(subs.get("then_branch"))
        other = p.body_outputs(subs.get("else_branch"))
        count = max(len(then), len(other))
        then += [None] * (count - len(then))
        other += [None] * (count - len(other))
        return [a if a is not None else b for a, b in zip(then, other)]


class _Loop:
    """Body inputs (iteration_num, cond, carried...); body outputs (cond, carried..., scans...)."""

    @staticmethod
    def bind_inputs(p: _Propagator, scope: GraphScope, node: onnx.NodeProto, sig: _Signature,
                    subs: Subgraphs) -> None:
        if (body := subs.get("body")) is None:
            return
        carried = [p.input_type(scope, node, i) for i in range(2, len(node.input))]
        p.bind_body_inputs(body, [TensorProto.INT64, TensorProto.BOOL, *carried])

    @staticmethod
    def outputs(p: _Propagator, node: onnx.NodeProto, subs: Subgraphs) -> list[int | None]:
        return p.body_outputs(subs.get("body"))[1:]  # Loop output k is body output 1 + k


class _Scan:
    """Body inputs mirror the Scan inputs (states, then scan slices); outputs mirror the body's.

    Scan-8 has an extra leading ``sequence_lens`` input that the body does not see.
    """

    @staticmethod
    def bind_inputs(p: _Propagator, scope: GraphScope, node: onnx.NodeProto, sig: _Signature,
                    subs: Subgraphs) -> None:
        if (body := subs.get("body")) is None:
            return
        first = 1 if sig.since_version < 9 else 0
        p.bind_body_inputs(body, [p.input_type(scope, node, i) for i in range(first, len(node.input))])

    @staticmethod
    def outputs(p: _Propagator, node: onnx.NodeProto, subs: Subgraphs) -> list[int | None]:
        return p.body_outputs(subs.get("body"))


_CONTROL: dict[str, type[_If | _Loop | _Scan]] = {"If": _If, "Loop": _Loop, "Scan": _Scan}


def propagate_types(model: onnx.ModelProto, known: Mapping[Key, int] | None = None) -> dict[Key, int]:
    """Element types (TensorProto.DataType ints) for every tensor it can type, keyed by (graph path, tensor name).

    Seeds are the model's inputs, initializers and typed annotations in every
    graph plus ``known``; they are returned too and never overridden. A tensor
    whose type does not follow from the schemas is absent.
    """
    return _Propagator(model, known).run(ROOT)
