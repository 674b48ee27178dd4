"""The typed parts of a quantize report: what each stage records, and their JSON (``--report``).

Each part's ``to_json`` writes the field names the report has always had; fields are only ever added, so a
reader of an older report keeps working. A part a run did not reach is ``None`` in the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class OpsetChange:
    """The default opset before and after quantize raised it (FP16 Q/DQ scales need 19)."""

    before: int
    after: int

    def to_json(self) -> dict:
        return {"from": self.before, "to": self.after}


@dataclass
class NodeCounts:
    """The written model's nodes: in all, the Q/DQ pairs, those computing in INT8, those kept in float."""

    total: int
    quantize_linear: int
    dequantize_linear: int
    int8: int
    kept_in_float: list[str]

    def to_json(self) -> dict:
        return {"total": self.total, "QuantizeLinear": self.quantize_linear,
                "DequantizeLinear": self.dequantize_linear, "int8": self.int8, "kept_in_float": self.kept_in_float}


@dataclass
class Validation:
    """What the written model passed: the full checker, an ONNX Runtime session at its default level."""

    optimization_level: str
    fp16_initializers: int
    checker: str = "passed"
    runtime: str = "loads and runs"

    def to_json(self) -> dict:
        return {"checker": self.checker, "runtime": self.runtime, "optimization_level": self.optimization_level,
                "fp16_initializers": self.fp16_initializers}


@dataclass
class WideActivation:
    node: str
    op_type: str
    max_abs: float
    constant: str | None = None  # the constant beyond FP16's range it reads; None: its own output is wide


@dataclass
class Fp32Placement:
    """Nodes kept FP32: their measured outputs exceed what FP16 holds safely, or they read a constant FP16
    cannot hold at all."""

    threshold: float
    reason: str
    nodes: list[WideActivation]
    constants: list[WideActivation] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"threshold": self.threshold, "reason": self.reason,
                "nodes": [{"node": n.node, "op_type": n.op_type, "max_abs": n.max_abs} for n in self.nodes],
                "constants": [{"node": n.node, "op_type": n.op_type, "max_abs": n.max_abs, "constant": n.constant}
                              for n in self.constants]}


@dataclass
class FrontierPoint:
    """One build of the accuracy/coverage frontier."""

    int8_mac_share: float
    cosine: float
    build: str  # "first pass", "FP16 only", "12 node(s) in FP16"
    met: bool  # meets the accuracy target
    predicted: bool = False  # the masked model's prediction (INT8's error alone), not a build's validation

    def to_json(self) -> dict:
        return {"int8_mac_share": self.int8_mac_share, "cosine": self.cosine, "build": self.build, "met": self.met,
                "predicted": self.predicted}


@dataclass
class FallbackBuild:
    """One build the accuracy target's search tried."""

    moved_to_fp16: list[str]
    cosine_before: float
    cosine_after: float
    int8_nodes_left: int
    int8_mac_share: float
    met: bool
    calibration: str | None = None  # with ``auto``: the ranges that won this build

    def to_json(self) -> dict:
        found = {"moved_to_fp16": self.moved_to_fp16, "nodes_in_fp16": len(self.moved_to_fp16),
                 "cosine_before": self.cosine_before, "cosine_after": self.cosine_after,
                 "int8_nodes_left": self.int8_nodes_left, "int8_mac_share": self.int8_mac_share, "met": self.met}
        if self.calibration:
            found["calibration"] = self.calibration
        return found


@dataclass
class RankedNode:
    """A node of the search's order: its error alone at the outputs and the MACs it takes out of INT8."""

    node: str
    added_error: float | None  # None: not measured (it comes after every measured node)
    macs_lost: int
    error_per_mac: float | None

    def to_json(self) -> dict:
        return {"node": self.node, "added_error": self.added_error, "macs_lost": self.macs_lost,
                "error_per_mac": self.error_per_mac}


@dataclass
class FallbackSearch:
    """What ``--min-cosine`` did: the FP16-only ceiling, then (when it is above the target) the search."""

    ceiling: float
    target: float | None = None  # None: only the ceiling was measured
    start_cosine: float | None = None
    start_int8_mac_share: float | None = None
    end_cosine: float | None = None
    int8_mac_share_kept: float | None = None
    met: bool = False
    stopped: str | None = None  # why it stopped before meeting the target
    order: list[RankedNode] | None = None
    steps: list[FallbackBuild] = field(default_factory=list)
    frontier: list[FrontierPoint] = field(default_factory=list)

    @property
    def ceiling_below_target(self) -> bool:
        return self.target is not None and self.ceiling < self.target

    def to_json(self) -> dict:
        found: dict = {"ceiling": self.ceiling, "frontier": [p.to_json() for p in self.frontier]}
        if self.target is None:
            return found
        found.update(target=self.target, met=self.met, steps=[s.to_json() for s in self.steps])
        optional = {"start_cosine": self.start_cosine, "start_int8_mac_share": self.start_int8_mac_share,
                    "end_cosine": self.end_cosine, "int8_mac_share_kept": self.int8_mac_share_kept,
                    "stopped": self.stopped}
        found.update({key: value for key, value in optional.items() if value is not None})
        if self.order is not None:
            found.update(ranked=len(self.order), order=[n.to_json() for n in self.order])
        return found
