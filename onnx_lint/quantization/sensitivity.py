"""Which INT8 nodes hurt accuracy most: FP32 and quantized activations side by side.

Both models run on a few validation samples with the outputs of every node
they share (matched by node name and output position: ORT's quantizer renames
tensors when it folds a Relu into a QuantizeLinear, but keeps node names) made
graph outputs. A node's damage is the relative error it *adds*: the error of
its output minus the largest error of what feeds it, so a node downstream of a
bad one is not blamed for what it inherited. One pair of runs ranks every node,
in the child process that also guards validation against runtime crashes.
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
    floats = _float_tensors(fp32)
    q_nodes = {n.name: n for n in quantized.graph.node if n.name}
    pairs: dict[str, list[tuple[str, str]]] = {}  # node -> [(FP32 tensor, quantized tensor)]
    for node in fp32.graph.node:
        twin = q_nodes.get(node.name)
        if twin is None or not node.name or node.op_type != twin.op_type:
            continue
        pairs[node.name] = [(a, b) for a, b in zip(node.output, twin.output) if a and b and a in floats]
    if not any(pairs.values()):
        return []
    a, b = work / "sens-fp32.onnx", work / "sens-int8.onnx"
    _expose(fp32, sorted({t for p in pairs.values() for t, _ in p}), a)
    _expose(quantized, sorted({t for p in pairs.values() for _, t in p}), b)
    reference, candidate = run_models([(a, "FP32 model (sensitivity)"), (b, "quantized model (sensitivity)")],
                                      samples[:SAMPLES])
    error = {name: max((relative_error(reference.outputs[x], candidate.outputs[y]) for x, y in p
                        if x in reference.outputs and y in candidate.outputs), default=0.0)
             for name, p in pairs.items()}
    producer = {o: n for n in fp32.graph.node for o in n.output if o}
    memo: dict[str, float] = {}

    def reaching(node: onnx.NodeProto) -> float:
        """Error of the node's output: measured, or (a node the quantizer removed) what reaches it."""
        if node.name in error:
            return error[node.name]
        if node.name not in memo:
            memo[node.name] = 0.0  # cycles cannot occur in a valid graph; this guards recursion anyway
            memo[node.name] = inherited(node)
        return memo[node.name]

    def inherited(node: onnx.NodeProto) -> float:
        return max((reaching(producer[i]) for i in node.input if i in producer), default=0.0)

    nodes = {n.name: n for n in fp32.graph.node if n.name}
    scores = []
    for name in candidates:
        if name in nodes and name in error:
            added = error[name] - inherited(nodes[name])
            scores.append((name, added if np.isfinite(added) else float("inf")))
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


def unit_of(fp32: onnx.ModelProto, name: str) -> list[str]:
    """The nodes that must leave INT8 together for ``name`` to compute in float.

    ORT's QDQ quantizer puts one Q/DQ pair on a tensor for its quantized producer
    and every consumer reads it: leaving only the consumer out of INT8 still feeds
    it the quantized tensor. So a node goes with the producers and the other
    consumers of its inputs.
    """
    nodes = [n for n in fp32.graph.node if n.name]
    target = next((n for n in nodes if n.name == name), None)
    if target is None:
        return [name]
    inputs = {i for i in target.input if i} - {i.name for i in fp32.graph.initializer}
    related = [n.name for n in nodes if n.name != name and (set(n.output) & inputs or set(n.input) & inputs)]
    return [name, *related]


def order_by_error_per_mac(ranked: list[tuple[str, float]], macs_lost: dict[str, int]) -> list[tuple[str, float]]:
    """``ranked`` reordered so each move buys the most accuracy for the least INT8 lost: by the error a node
    adds over the multiply-accumulates that leave INT8 with it (``macs_lost``; a node costing none, a pooling
    or a node without a known shape, counts as costing one). Nodes that add no error keep their order, last.

    The error-only order would move one large layer with a little more error before a small layer with
    almost as much, giving up far more INT8 work for about the same accuracy.
    """
    helpful = [(name, error) for name, error in ranked if error > 0]
    rest = [(name, error) for name, error in ranked if not error > 0]
    helpful.sort(key=lambda item: -item[1] / max(1, macs_lost.get(item[0], 0)))
    return helpful + rest
