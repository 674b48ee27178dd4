"""Who would break on a missing element type (docs/design.md, "Severity follows consequences").

A tensor that only ONNX's static inference leaves untyped hurts a user only where
a tool of the pipeline needs its type: the INT8 quantizer and the FP16
converters both rewrite standard-domain operators, and neither touches the
``ai.onnx.ml`` operators of a classic-ML export (scikit-learn, LightGBM, XGBoost),
which ONNX's inference does not type. These facts let a rule tell the two apart.
"""

from __future__ import annotations

import onnx

from onnx_lint.checker_errors import full_checker_error
from onnx_lint.graphs import GraphScope
from onnx_lint.model_io import LoadedModel

# Operators the quantizer and the FP16 converters never rewrite: they run as they are.
_UNTOUCHED_DOMAINS = frozenset({"ai.onnx.ml"})


def typing_consumers(scope: GraphScope, tensors: list[str]) -> list[str]:
    """Operators downstream of ``tensors`` that a quantizer or FP16 converter would rewrite.

    Follows the untyped tensors through the ``ai.onnx.ml`` operators they feed (their
    outputs are untyped too); returns ``op_type`` of each rewritable consumer, once each.
    """
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in scope.graph.node:
        for name in node.input:
            if name:
                consumers.setdefault(name, []).append(node)
    found: list[str] = []
    seen = set(tensors)
    queue = list(tensors)
    while queue:
        name = queue.pop()
        for node in consumers.get(name, []):
            if node.domain in _UNTOUCHED_DOMAINS:
                for out in node.output:
                    if out and out not in seen:
                        seen.add(out)
                        queue.append(out)
            elif node.op_type not in found:
                found.append(node.op_type)
    return found


def model_accepted(loaded: LoadedModel) -> tuple[bool, str]:
    """Do the checker (full: strict inference) and ONNX Runtime accept the model? And what said so.

    ONNX Runtime is asked in a child process (a crash is an answer, not our crash); without
    onnxruntime installed, the checker's word is all there is.
    """
    from onnx_lint.runtime_check import runtime_available, runtime_load_error

    external = loaded.has_external_data
    checker = full_checker_error(loaded.path, loaded.scope_paths) if external else full_checker_error(loaded.data)
    if checker is not None:
        return False, f"onnx.checker fails: {checker}"
    if external or not runtime_available():
        return True, "onnx.checker (full) accepts it"
    error = runtime_load_error(loaded.path)
    if error is not None:
        return False, f"ONNX Runtime does not load it: {error}"
    return True, "onnx.checker (full) and ONNX Runtime accept it"
