"""Which INT8 nodes cost the accuracy: each one's error at the model's outputs when it alone is INT8.

One *masked* model answers for every node. It is the FP32 model with, at each input of each INT8 node,
the value that node reads in the quantized build (its weight dequantized from the build's INT8 values;
its activation quantized and dequantized with the build's scale and zero-point) blended in by a mask
entry: ``x + m_k * (fake_quant(x) - x)``. With the mask all zeros it computes the FP32 model, with
entry k alone set it computes "only node k in INT8", and the mask is a graph input, so one ONNX Runtime
session serves every node (no build, no session, per node). Per node: the worst output's cosine with
FP32 when it alone is INT8 (its *error* is one minus that), its share of the summed error, and the
error per multiply-accumulate it keeps in INT8, which is the order in which ``--min-cosine`` moves
nodes to FP16 (the most accuracy bought for the least INT8 given up).

Measured in FP32 arithmetic, the error is INT8's alone (FP16's rounding is common to every mix); an
error is never negative, unlike a difference of two noisy measurements. Errors alone do not add up
exactly (one node's rounding can mask or amplify another's), which is why ``--min-cosine`` builds and
validates every mix it considers (the masked model only predicts them). Every node is measured on the same
samples, as many of those given as the time budget allows for every node (the per-node figure on two
samples can differ from the one on sixteen by a factor of ten on a model whose outliers few samples show);
nodes are measured largest first, and those the budget leaves are listed as not measured. With a target,
every node gets one sample at least, within a hard cap: a node not measured can only be ranked last.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from onnx_lint.quantization.build import save
from onnx_lint.quantization.calibration import Sample
from onnx_lint.quantization.measure_runs import MaskedRunner, masked_cosines

MASK = "onnx_lint_int8_mask"


@dataclass(frozen=True)
class NodeSensitivity:
    node: str
    op_type: str
    cosine_alone: float  # the worst output's cosine with FP32 when only this node is INT8
    macs: int  # its multiply-accumulates at the calibration shapes (0: a pooling, or unknown)

    @property
    def error(self) -> float:
        return max(0.0, 1.0 - self.cosine_alone)

    @property
    def error_per_mac(self) -> float:
        return self.error / max(1, self.macs)


@dataclass
class Sensitivity:
    """Every INT8 node's error alone, and what the sum of them misses (nodes' errors interact)."""

    nodes: list[NodeSensitivity] = field(default_factory=list)
    not_measured: list[str] = field(default_factory=list)
    all_int8_cosine: float | None = None  # every node INT8 at once, in FP32 arithmetic
    samples: int = 0
    stopped: str | None = None  # why some nodes were not measured
    written_int8: frozenset[str] | None = None  # the nodes INT8 in the model written, once it is known
    # the masked model's session and each node's mask entry: the accuracy target predicts mixes with them
    runner: MaskedRunner | None = field(default=None, repr=False, compare=False)
    entries: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    def predicted(self, int8: set[str]) -> float | None:
        """The worst-output cosine of the masked model with only ``int8`` (of the nodes it blends) in INT8: a
        mix's INT8 error, in FP32 arithmetic, for one session run per sample instead of a build."""
        if self.runner is None:
            return None
        values = np.zeros(len(self.entries), np.float32)
        for name, k in self.entries.items():
            if name in int8:
                values[k] = 1.0
        return self.runner.worst(values)

    @property
    def total_error(self) -> float:
        return sum(n.error for n in self.nodes)

    def share(self, entry: NodeSensitivity) -> float:
        total = self.total_error
        return entry.error / total if total > 0 else 0.0

    def ranked(self) -> list[NodeSensitivity]:
        """Largest error per multiply-accumulate first: the order in which moving nodes to FP16 buys the most
        accuracy for the least INT8 work given up."""
        return sorted(self.nodes, key=lambda n: (-n.error_per_mac, -n.error, n.node))

    def to_json(self) -> dict:
        """The report's ``sensitivity``, largest error first; each node marked as INT8 in the model written
        (``written_int8``) or moved to FP16 by the accuracy target."""
        int8 = self.written_int8
        total = self.total_error
        return {"samples": self.samples, "all_int8_cosine": self.all_int8_cosine, "stopped": self.stopped,
                "not_measured": list(self.not_measured),
                "nodes": [{"node": n.node, "op_type": n.op_type, "cosine_alone": n.cosine_alone, "error": n.error,
                           "share": n.error / total if total > 0 else 0.0, "macs": n.macs,
                           "error_per_mac": n.error_per_mac, "int8": int8 is None or n.node in int8}
                          for n in sorted(self.nodes, key=lambda n: (-n.error, n.node))]}


def masked_model(fp32: onnx.ModelProto, quantized: onnx.ModelProto,
                 int8_nodes: list[str]) -> tuple[onnx.ModelProto, list[str]]:
    """The FP32 model with each INT8 node's inputs blended with what it reads in ``quantized`` by the mask
    entry of its position in the returned node list (the nodes for which a blend could be made)."""
    q_inits = {i.name: i for i in quantized.graph.initializer}
    q_producer = {o: n for n in quantized.graph.node for o in n.output if o}
    q_nodes = {n.name: n for n in quantized.graph.node if n.name}
    f_inits = {i.name: i for i in fp32.graph.initializer}
    model = onnx.ModelProto()
    model.CopyFrom(fp32)
    graph = model.graph
    added_inits: list[onnx.TensorProto] = []
    blends: dict[str, list[onnx.NodeProto]] = {}
    measured: list[str] = []
    for node in graph.node:
        twin = q_nodes.get(node.name)
        if node.name not in int8_nodes or twin is None or twin.op_type != node.op_type:
            continue
        index = len(measured)
        made: list[onnx.NodeProto] = []
        inputs = list(node.input)
        for position, (original, read) in enumerate(zip(node.input, twin.input)):
            dq = q_producer.get(read)
            if not original or dq is None or dq.op_type != "DequantizeLinear":
                continue
            tag = f"onnx_lint_sens_{index}_{position}"
            fake = _fake_quantized(tag, original, dq, q_inits, q_producer, f_inits, made, added_inits)
            if fake is None:
                continue
            made += [onnx.helper.make_node("Sub", [fake, original], [f"{tag}_diff"]),
                     onnx.helper.make_node("Mul", [f"{tag}_diff", f"{tag}_m"], [f"{tag}_scaled"]),
                     onnx.helper.make_node("Add", [original, f"{tag}_scaled"], [f"{tag}_mixed"])]
            made.insert(0, onnx.helper.make_node("Gather", [MASK, f"{tag}_k"], [f"{tag}_m"]))
            added_inits.append(numpy_helper.from_array(np.array(index, np.int64), f"{tag}_k"))
            inputs[position] = f"{tag}_mixed"
        if made:
            blends[node.name] = made
            measured.append(node.name)
            node.input[:] = inputs
    ordered: list[onnx.NodeProto] = []
    for node in graph.node:
        ordered += blends.get(node.name, [])
        ordered.append(node)
    del graph.node[:]
    graph.node.extend(ordered)
    graph.initializer.extend(added_inits)
    graph.input.append(onnx.helper.make_tensor_value_info(MASK, onnx.TensorProto.FLOAT, [len(measured)]))
    return model, measured


def _fake_quantized(tag: str, original: str, dq: onnx.NodeProto, q_inits: dict, q_producer: dict, f_inits: dict,
                    made: list[onnx.NodeProto], added: list[onnx.TensorProto]) -> str | None:
    """The name of ``original`` as the quantized node reads it: a constant for a weight, a Q/DQ pair with the
    build's scale and zero-point for an activation; None when the build's values cannot be read."""
    if len(dq.input) < 2 or dq.input[1] not in q_inits:
        return None
    scale = numpy_helper.to_array(q_inits[dq.input[1]]).astype(np.float32)
    zero = (numpy_helper.to_array(q_inits[dq.input[2]]) if len(dq.input) > 2 and dq.input[2] in q_inits
            else np.zeros_like(scale, dtype=np.int8))
    axis = next((a.i for a in dq.attribute if a.name == "axis"), 1)
    data = dq.input[0]
    if data in q_inits:  # a weight (or bias): its dequantized INT8 values, as the build holds them
        if original not in f_inits:
            return None
        values = numpy_helper.to_array(q_inits[data]).astype(np.float32)
        if scale.ndim == 1 and values.ndim > 1:
            shape = [1] * values.ndim
            shape[axis % values.ndim] = -1
            values = (values - zero.astype(np.float32).reshape(shape)) * scale.reshape(shape)
        else:
            values = (values - zero.astype(np.float32)) * scale
        if list(values.shape) != list(f_inits[original].dims):
            return None
        added.append(numpy_helper.from_array(values.astype(np.float32), f"{tag}_fq"))
        return f"{tag}_fq"
    quantize = q_producer.get(data)
    if quantize is None or quantize.op_type != "QuantizeLinear" or scale.ndim != 0:
        return None
    added += [numpy_helper.from_array(scale, f"{tag}_scale"), numpy_helper.from_array(zero, f"{tag}_zero")]
    made += [onnx.helper.make_node("QuantizeLinear", [original, f"{tag}_scale", f"{tag}_zero"], [f"{tag}_q"]),
             onnx.helper.make_node("DequantizeLinear", [f"{tag}_q", f"{tag}_scale", f"{tag}_zero"], [f"{tag}_fq"])]
    return f"{tag}_fq"


def measure_sensitivity(fp32: onnx.ModelProto, quantized: onnx.ModelProto, int8_nodes: list[str],
                        samples: list[Sample], work: Path, macs: dict[str, int], budget: float,
                        cap: float | None = None) -> Sensitivity:
    """Each INT8 node's error alone at the outputs (largest multiply-accumulates first, within ``budget``
    seconds), in this process (``measure_runs.py``). ``RuntimeFailure`` when the masked model cannot run."""
    model, nodes = masked_model(fp32, quantized, int8_nodes)
    found = Sensitivity(samples=len(samples))
    found.not_measured = [n for n in int8_nodes if n not in nodes]
    if not nodes or not samples:
        return found
    path = work / "sensitivity.onnx"
    save(model, path)
    order = sorted(range(len(nodes)), key=lambda k: (-macs.get(nodes[k], 0), k))
    outputs = [o.name for o in fp32.graph.output]
    measured = masked_cosines(path, samples, MASK, len(nodes), order, outputs, budget,
                              budget if cap is None else cap)
    found.runner, found.entries = measured.runner, {name: k for k, name in enumerate(nodes)}
    op_types = {n.name: n.op_type for n in fp32.graph.node}
    found.samples = measured.samples
    found.all_int8_cosine = _worst(measured.all_int8)
    for k, cosines in measured.per_node.items():
        found.nodes.append(NodeSensitivity(nodes[k], op_types.get(nodes[k], "?"), _worst(cosines),
                                           macs.get(nodes[k], 0)))
    missing = [n for k, n in enumerate(nodes) if k not in measured.per_node]
    found.not_measured += missing
    if missing:
        found.stopped = f"time budget of {budget:.0f} s spent"
    return found


def _worst(cosines: dict[str, float]) -> float:
    values = [float(v) if math.isfinite(float(v)) else -1.0 for v in cosines.values()]
    return min(values, default=1.0)


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
