"""Who would break on a missing element type (docs/design.md, "Severity follows consequences").

A tensor that only ONNX's static inference leaves untyped hurts a user only where
a tool of the pipeline needs its type. Neither the INT8 quantizer nor the FP16
converters touch the ``ai.onnx.ml`` operators of a classic-ML export
(scikit-learn, LightGBM, XGBoost), which ONNX's inference does not type. Among
standard operators, what decides is the operator's schema: where the input's type
parameter is shared with another input or an output (Identity, Concat, Add, Less),
the FP16 converter must know the input is float to keep them equal, and a model it
converts without that knowledge does not load (``Type parameter (T) of Optype
(Concat) bound to different types``). Where the input's type parameter is its own
(Cast, CastLike's input, Shape, Size, NonZero, Gather's indices), the operator
accepts whatever arrives: the converted model loads and runs, and the quantizer
does not rewrite it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import onnx

from onnx_lint.engines.checker import full_checker_error
from onnx_lint.model.graphs import GraphScope, onnx_domain
from onnx_lint.model.load import LoadedModel

# Operators the quantizer and the FP16 converters never rewrite: they run as they are.
_UNTOUCHED_DOMAINS = frozenset({"ai.onnx.ml"})


def model_opsets(model: onnx.ModelProto) -> dict[str, int]:
    """Opset version per domain (``""`` for the standard one)."""
    return {onnx_domain(entry.domain): entry.version for entry in model.opset_import}


@lru_cache(maxsize=2048)
def _free_inputs(op_type: str, domain: str, version: int) -> tuple[tuple[bool, ...], bool] | None:
    """Per formal input of the schema: does its type parameter appear nowhere else in the schema?

    The second item says whether the last formal is variadic with one shared type. ``None``
    where there is no schema (a custom operator or a model-local function: assume the worst).
    """
    try:
        schema = onnx.defs.get_schema(op_type, max_inclusive_version=version, domain=domain)
    except onnx.defs.SchemaError:
        return None
    params = {c.type_param_str for c in schema.type_constraints}
    formals = [*schema.inputs, *schema.outputs]
    uses: dict[str, int] = {}
    for formal in formals:
        uses[formal.type_str] = uses.get(formal.type_str, 0) + 1
    free = tuple(f.type_str not in params or uses[f.type_str] == 1 for f in schema.inputs)
    last = schema.inputs[-1] if schema.inputs else None
    homogeneous = bool(last is not None and last.option == onnx.defs.OpSchema.FormalParameterOption.Variadic
                       and last.is_homogeneous and last.type_str in params)
    return free, homogeneous


def needs_input_type(node: onnx.NodeProto, index: int, opsets: Mapping[str, int]) -> bool:
    """Must a converter know the element type of ``node.input[index]`` to rewrite the node?

    No where the schema gives that input a type parameter of its own (fixed or used once):
    whatever type arrives, the operator's other inputs and outputs need not match it.
    """
    domain = onnx_domain(node.domain)
    version = opsets.get(domain)
    found = _free_inputs(node.op_type, domain, version) if version is not None else None
    if found is None:
        return True
    free, homogeneous = found
    if not free:
        return True
    formal = min(index, len(free) - 1)
    if homogeneous and index >= len(free) - 1 and len(node.input) > len(free):
        return True  # several actual inputs share the variadic formal's one type (Sum, Concat)
    return not free[formal]


def typing_consumers(scope: GraphScope, tensors: list[str],
                     opsets: Mapping[str, int]) -> tuple[list[str], list[str]]:
    """Operators downstream of ``tensors`` that a quantizer or FP16 converter would rewrite.

    Follows the untyped tensors through the ``ai.onnx.ml`` operators they feed (their
    outputs are untyped too). Returns the ``op_type`` of each consumer that needs the type
    (:func:`needs_input_type`) and of each that accepts any type, once each.
    """
    consumers: dict[str, list[tuple[onnx.NodeProto, int]]] = {}
    for node in scope.graph.node:
        for index, name in enumerate(node.input):
            if name:
                consumers.setdefault(name, []).append((node, index))
    needing: list[str] = []
    accepting: list[str] = []
    seen = set(tensors)
    queue = list(tensors)
    while queue:
        name = queue.pop()
        for node, index in consumers.get(name, []):
            if node.domain in _UNTOUCHED_DOMAINS:
                for out in node.output:
                    if out and out not in seen:
                        seen.add(out)
                        queue.append(out)
                continue
            found = needing if needs_input_type(node, index, opsets) else accepting
            if node.op_type not in found:
                found.append(node.op_type)
    return needing, accepting


def model_accepted(loaded: LoadedModel) -> tuple[bool, str]:
    """Do the checker (full: strict inference) and ONNX Runtime accept the model? And what said so.

    ONNX Runtime is asked in a child process (a crash is an answer, not our crash); without
    onnxruntime installed, the checker's word is all there is.
    """
    from onnx_lint.engines.ort_load_check import runtime_available, runtime_checkable, runtime_load_error

    external = loaded.has_external_data
    checker = full_checker_error(loaded.path, loaded.scope_paths) if external else full_checker_error(loaded.data)
    if checker is not None:
        return False, f"onnx.checker fails: {checker}"
    if external or not runtime_available() or not runtime_checkable(loaded.path):
        return True, "onnx.checker (full) accepts it"
    error = runtime_load_error(loaded.path)
    if error is not None:
        return False, f"ONNX Runtime does not load it: {error}"
    return True, "onnx.checker (full) and ONNX Runtime accept it"
