"""Who would break on a missing element type (SPEC 3, "Severity follows consequences").

A tensor that only ONNX's static inference leaves untyped hurts a user only where
a tool of the pipeline needs its type: the INT8 quantizer and the FP16
converters both rewrite standard-domain operators, and neither touches the
``ai.onnx.ml`` operators of a classic-ML export (scikit-learn, LightGBM, XGBoost),
which ONNX's inference does not type. These facts let a rule tell the two apart.
"""

from __future__ import annotations

from pathlib import Path

import onnx

from onnx_lint.errors import first_line
from onnx_lint.graphs import GraphScope

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


def model_accepted(path: Path, data: bytes, has_external_data: bool) -> tuple[bool, str]:
    """Do the checker (full: strict inference) and ONNX Runtime accept the model? And what said so.

    ONNX Runtime is asked in a child process (a crash is an answer, not our crash); without
    onnxruntime installed, the checker's word is all there is.
    """
    from onnx_lint.runtime_check import runtime_available, runtime_load_error

    try:
        if has_external_data:
            onnx.checker.check_model(str(path), full_check=True)
        else:
            onnx.checker.check_model(onnx.ModelProto.FromString(data), full_check=True)
    except Exception as exc:
        return False, f"onnx.checker fails: {first_line(exc, 200)}"
    if has_external_data or not runtime_available():
        return True, "onnx.checker (full) accepts it"
    error = runtime_load_error(path)
    if error is not None:
        return False, f"ONNX Runtime does not load it: {error}"
    return True, "onnx.checker (full) and ONNX Runtime accept it"
