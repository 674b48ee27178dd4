"""What `onnx-lint quantize` records in the model it writes, and how a later lint reads it back.

The record is one ``metadata_props`` entry, ``onnx_lint.quantized``, whose value is a small JSON
object: the onnx-lint version, the source file's name, the calibration method, the activation and
weight types and their symmetry, and the number of QuantizeLinear/DequantizeLinear nodes written.
ONNX Runtime's quantizer marks its output the same way (dotted ``metadata_props`` keys such as
``onnx.quant.pre_process``, plus ``producer_name``); a key of our own leaves theirs intact.

The Q/DQ count is what lets a lint trust the record: a model whose Q/DQ nodes were edited after
quantize (or that carries a record copied from another model) no longer matches it, and is judged
as any other Q/DQ model (docs/quantize.md, *What the written model says about itself*).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import onnx

KEY = "onnx_lint.quantized"
TARGET_NAMES = {"onnxruntime": "ONNX Runtime", "tensorrt": "TensorRT"}


@dataclass(frozen=True)
class QuantizeRecord:
    """The provenance of a model `onnx-lint quantize` wrote."""

    version: str
    source: str  # the input file's name, not its path (a path says where the user keeps files)
    calibration: str | None  # the ranges kept (minmax, entropy, percentile); None when nothing is INT8
    activations: dict  # {"type": "int8", "symmetric": False}
    weights: dict  # {"type": "int8", "symmetric": True, "per_channel": True}
    qdq_nodes: int  # QuantizeLinear + DequantizeLinear nodes written, in every graph
    target: str | None = None  # the runtime it was quantized for (onnxruntime, tensorrt); None in older records
    # per INT8 node: [its share of the error, the worst-output cosine when it alone is INT8] (for the graph view)
    sensitivity: dict[str, list[float]] | None = None

    def to_json(self) -> dict:
        record = {"tool": "onnx-lint", "version": self.version, "source": self.source,
                  "calibration": self.calibration, "activations": self.activations, "weights": self.weights,
                  "qdq_nodes": self.qdq_nodes}
        if self.target:
            record["target"] = self.target
        if self.sensitivity:
            record["sensitivity"] = self.sensitivity
        return record

    def describe(self) -> str:
        """One line for the model view: "Quantized by onnx-lint 0.1.0 from model.onnx, entropy calibration, ..."."""
        if self.calibration is None or self.qdq_nodes == 0:
            return f"Converted to FP16 by onnx-lint {self.version} from {self.source} (no INT8 layer)"
        target = f" for {TARGET_NAMES.get(self.target, self.target)}" if self.target else ""
        return (f"Quantized by onnx-lint {self.version}{target} from {self.source}, {self.calibration} calibration, "
                f"{_precision(self.activations)} activations, {_precision(self.weights)} weights, "
                f"FP16 elsewhere ({self.qdq_nodes} Q/DQ nodes)")


def _precision(kind: dict) -> str:
    parts = ["symmetric" if kind.get("symmetric") else "asymmetric"]
    if kind.get("per_channel"):
        parts.append("per-channel")
    return f"{str(kind.get('type', '?')).upper()} ({', '.join(parts)})"


def _sensitivity(value: object) -> dict[str, list[float]] | None:
    """The record's per-node figures when they are what we write (name -> two numbers), else None."""
    if not isinstance(value, dict):
        return None
    found = {}
    for name, pair in value.items():
        if not (isinstance(name, str) and isinstance(pair, list) and len(pair) == 2
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in pair)):
            return None
        found[name] = [float(pair[0]), float(pair[1])]
    return found


def stamp(model: onnx.ModelProto, record: QuantizeRecord) -> None:
    """Write the record into ``model``'s metadata, replacing an earlier one of ours (and nobody else's)."""
    kept = [(p.key, p.value) for p in model.metadata_props if p.key != KEY]
    del model.metadata_props[:]
    for key, value in kept:
        model.metadata_props.add(key=key, value=value)
    model.metadata_props.add(key=KEY, value=json.dumps(record.to_json(), sort_keys=True))


def read_record(model: onnx.ModelProto) -> QuantizeRecord | None:
    """The record, or None when the model has none or it is not one we wrote (not JSON, fields missing)."""
    value = next((p.value for p in model.metadata_props if p.key == KEY), None)
    if value is None:
        return None
    try:
        data = json.loads(value)
        record = QuantizeRecord(str(data["version"]), str(data["source"]), data.get("calibration"),
                                dict(data["activations"]), dict(data["weights"]), int(data["qdq_nodes"]),
                                str(data["target"]) if data.get("target") in TARGET_NAMES else None,
                                _sensitivity(data.get("sensitivity")))
    except (ValueError, KeyError, TypeError):
        return None
    return record if data.get("tool") == "onnx-lint" else None
