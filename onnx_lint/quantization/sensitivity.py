"""Which INT8 nodes hurt accuracy most: FP32 and quantized activations side by side.

Both models run on a few validation samples with every node output of the
FP32 graph exposed as a graph output (the quantizer keeps those tensor names).
A node's damage is how much relative error it *adds*: the error of its output
minus the largest error among its inputs, so a node downstream of a bad one is
not blamed for what it inherited. One pair of runs ranks every node, in the
child process that also guards validation against runtime crashes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

from onnx_lint.quantization.calibration import Sample
from onnx_lint.quantization.validation import run_models

SAMPLES = 4  # enough to rank nodes; every exposed tensor of every sample crosses a process boundary


def _expose(model: onnx.ModelProto, names: list[str], path: Path) -> None:
    exposed = onnx.ModelProto()
    exposed.CopyFrom(model)
    present = {o.name for o in exposed.graph.output}
    exposed.graph.output.extend(onnx.ValueInfoProto(name=n) for n in names if n not in present)
    onnx.save_model(exposed, path)


def relative_error(reference: list[np.ndarray], candidate: list[np.ndarray]) -> float:
    """||a - b|| / ||a|| over all samples (0 when both are zero)."""
    a = np.concatenate([np.asarray(v, np.float64).ravel() for v in reference])
    b = np.concatenate([np.asarray(v, np.float64).ravel() for v in candidate])
    if a.shape != b.shape:
        return float("inf")
    norm = np.linalg.norm(a)
    diff = np.linalg.norm(a - b)
    return float(diff / norm) if norm > 0 else (0.0 if diff == 0 else float("inf"))


def rank_nodes(fp32: onnx.ModelProto, quantized: onnx.ModelProto, candidates: list[str], samples: list[Sample],
               work: Path) -> list[tuple[str, float]]:
    """``candidates`` (INT8 node names) ordered from most to least damaging, with the error each adds."""
    wanted = set(candidates)
    nodes = [n for n in fp32.graph.node if n.name in wanted]
    float_tensors = _float_tensors(fp32)
    tensors = sorted({t for n in nodes for t in [*n.input, *n.output] if t in float_tensors})
    produced = {o for n in quantized.graph.node for o in n.output}
    tensors = [t for t in tensors if t in produced or t in {i.name for i in quantized.graph.input}]
    if not tensors:
        return []
    a, b = work / "sens-fp32.onnx", work / "sens-int8.onnx"
    _expose(fp32, tensors, a)
    _expose(quantized, tensors, b)
    subset = samples[:SAMPLES]
    reference, candidate = run_models([(a, "FP32 model (sensitivity)"), (b, "quantized model (sensitivity)")],
                                      subset)
    error = {t: relative_error(reference.outputs[t], candidate.outputs[t])
             for t in tensors if t in reference.outputs and t in candidate.outputs}
    scores = []
    for node in nodes:
        out = max((error.get(o, 0.0) for o in node.output if o), default=0.0)
        inherited = max((error.get(i, 0.0) for i in node.input if i), default=0.0)
        scores.append((node.name, out - inherited if np.isfinite(out - inherited) else float("inf")))
    return sorted(scores, key=lambda item: -item[1])


def _float_tensors(model: onnx.ModelProto) -> set[str]:
    """Names of float activations (not weights), from shape inference where it can tell."""
    floats = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE)
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:
        inferred = model
    initializers = {i.name for i in model.graph.initializer}
    found = {v.name for v in [*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output]
             if v.type.tensor_type.elem_type in floats and v.name not in initializers}
    return found
