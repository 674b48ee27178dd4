"""What the FP32 model's activations hold on the validation samples: the largest magnitude and the shape of
every float tensor a node computes, from one run with every such tensor exposed.

Two decisions read these facts instead of guessing them from static shapes and types:
- **FP16 placement.** A node whose output reaches more than ``FP16_DATA_MAX`` stays in FP32: FP16 holds
  up to 65504, and a tensor that large feeds sums and products that overflow (ModelOpt's AutoCast keeps
  such nodes in high precision with the same default threshold, ``data_max`` 512).
- **INT8 coverage.** The multiply-accumulates of a compute node need its shapes; where ONNX shape
  inference cannot size a node (magika, basic-pitch), the shape the run saw is the shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx

from onnx_lint.model.graphs import iter_scopes
from onnx_lint.model.tensors import constants
from onnx_lint.quantization.build import save
from onnx_lint.quantization.calibration import Sample
from onnx_lint.quantization.measure_runs import activation_stats
from onnx_lint.quantization.validation import RuntimeFailure
from onnx_lint.rules.ol201_fp16_overflow import FP16_MAX  # FP16's largest finite value, as OL201 reads it

# Above this magnitude a node's output stays FP32 (ModelOpt AutoCast's default ``data_max``).
FP16_DATA_MAX = 512.0
SAMPLES = 2  # a tensor's range and shape; each sample is one run of the model with every tensor exposed
_FLOATS = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE, onnx.TensorProto.BFLOAT16)


@dataclass
class ActivationStats:
    """Per tensor name: the largest finite magnitude seen, and its shape on the first sample."""

    max_abs: dict[str, float] = field(default_factory=dict)
    shapes: dict[str, list[int]] = field(default_factory=dict)
    note: str | None = None  # why nothing was observed, when nothing was


def observe(fp32: onnx.ModelProto, samples: list[Sample], work: Path) -> ActivationStats:
    """Run ``fp32`` on up to ``SAMPLES`` samples with every node output exposed; its statistics. A model that
    cannot run so gives empty stats with a note, never an error: placement and coverage then fall back to what
    static shapes say."""
    exposed = onnx.ModelProto()
    exposed.CopyFrom(fp32)
    present = {o.name for o in exposed.graph.output}
    declared = {v.name: v.type.tensor_type.elem_type for v in [*fp32.graph.value_info, *fp32.graph.output]}
    names = [o for n in fp32.graph.node for o in n.output
             if o and o not in present and declared.get(o, onnx.TensorProto.FLOAT) in _FLOATS]
    exposed.graph.output.extend(onnx.ValueInfoProto(name=n) for n in dict.fromkeys(names))
    path = work / "observe.onnx"
    save(exposed, path)
    try:
        found = activation_stats(path, samples[:SAMPLES])
    except RuntimeFailure as exc:
        return ActivationStats(note=str(exc))
    finally:
        path.unlink(missing_ok=True)
        path.with_name(path.name + ".data").unlink(missing_ok=True)
    return ActivationStats({name: peak for name, (peak, _) in found.items()},
                           {name: shape for name, (_, shape) in found.items()})


def beyond_fp16(fp32: onnx.ModelProto, stats: ActivationStats, candidates: set[str],
                limit: float = FP16_DATA_MAX) -> list[dict]:
    """The nodes among ``candidates`` whose output exceeds ``limit``: ``{"node", "op_type", "max_abs"}``,
    largest first."""
    found = []
    for node in fp32.graph.node:
        if node.name not in candidates:
            continue
        peak = max((stats.max_abs.get(o, 0.0) for o in node.output if o), default=0.0)
        if peak > limit and math.isfinite(peak):
            found.append({"node": node.name, "op_type": node.op_type, "max_abs": peak})
    return sorted(found, key=lambda entry: -entry["max_abs"])


def with_observed_shapes(static: dict[str, list[int]], stats: ActivationStats) -> dict[str, list[int]]:
    """``static`` shapes, where a shape is missing or not fully known filled with the one the run saw."""
    merged = dict(stats.shapes)
    merged.update({name: shape for name, shape in static.items() if shape and all(d > 0 for d in shape)})
    return merged


def constants_beyond_fp16(model: onnx.ModelProto, candidates: set[str]) -> list[dict]:
    """The nodes among ``candidates`` that read a float constant (an initializer or a Constant node's value)
    beyond FP16's largest value, which FP16 conversion would clamp to 65504 (OL201 reports them): a
    BatchNormalization whose running variance is 1e8 then normalizes by the wrong number. Each entry:
    ``{"node", "op_type", "max_abs", "constant", "constant_node"}`` (the Constant node's name, or None for an
    initializer), largest first. Unnamed Constant nodes get a name, so that FP16 conversion can leave them out."""
    known = constants(next(iter_scopes(model)))
    peaks: dict[str, float] = {}

    def peak(name: str) -> float:
        if name not in peaks:
            const = known.get(name)
            array = const.value() if const is not None and const.tensor.data_type in _FLOATS else None
            finite = array[np.isfinite(array)] if array is not None and array.size else None
            peaks[name] = float(np.abs(finite).max()) if finite is not None and finite.size else 0.0
        return peaks[name]

    found = []
    for index, node in enumerate(model.graph.node):
        if node.name not in candidates:
            continue
        for name in node.input:
            if not name or peak(name) <= FP16_MAX:
                continue
            const = known[name]
            constant = model.graph.node[const.node_index] if const.node_index is not None else None
            if constant is not None and not constant.name:
                constant.name = f"onnx_lint_fp32_constant_{index}_{name}"
            found.append({"node": node.name, "op_type": node.op_type, "max_abs": peaks[name], "constant": name,
                          "constant_node": constant.name if constant is not None else None})
    return sorted(found, key=lambda entry: -entry["max_abs"])
