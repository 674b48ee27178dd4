"""Reshapes whose *computed* target bakes the batch in (a Concat of Shape slices and constants).

Dynamo exports build a Reshape target from ``Shape`` slices of the input and constants:
``[seq, 1, 3, 192]`` where the traced batch was 1. No constant shows the 1, so the
constant-target check cannot see it; data propagation can. With each dynamic input dim
pinned to a prime of its own (two runs, other primes the second time), such a Reshape's
input holds exactly ``batch`` times the elements of its target: the target drops the batch.
ONNX Runtime then fails at every batch but 1 (``Reshape ... input shape is not compatible``).
The same fact tells the pinned-dims proof that what follows the Reshape cannot grow with the
batch, however the dims look when every input dim is pinned to one size.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import onnx

from onnx_lint.engines.oracle import ShapeOracle
from onnx_lint.model.graphs import ONNX_DOMAINS, ROOT, GraphScope
from onnx_lint.model.shapes import value_tensor_info
from onnx_lint.model.tensors import ConstantLookup


@dataclass(frozen=True)
class BakedReshape:
    """A Reshape in the main graph whose computed target drops the dynamic batch."""

    index: int
    node: onnx.NodeProto
    batch: str
    # Per pinned run: the batch size, the input's dims and the (data-propagated) target's dims.
    runs: tuple[tuple[int, tuple[int, ...], tuple[int, ...]], ...]


def batch_names(scope: GraphScope) -> frozenset[str]:
    """Named first dims of the main graph's inputs (initializers with a default value excluded)."""
    initializers = scope.initializer_names()
    names = set()
    for value in scope.graph.input:
        if value.name in initializers:
            continue
        info = value_tensor_info(value)
        if info and info.dims and isinstance(info.dims[0], str):
            names.add(info.dims[0])
    return frozenset(names)


@dataclass(frozen=True)
class ConstantTarget:
    """A main-graph Reshape or Expand whose target shape is a constant of the file."""

    index: int
    node: onnx.NodeProto
    target: np.ndarray


@dataclass(frozen=True)
class ReshapeTargets:
    """The main graph's standard Reshape/Expand nodes by where their target comes from: read from the
    file alone, so it is computed while a large model's inference still runs (``Rule.prepare``)."""

    computed: list[int]  # Reshapes whose target is no constant of the file
    constant: list[ConstantTarget]  # Reshapes and Expands whose target is one
    # The output of each ``computed`` Reshape, read here: after inference 18k node reads cost ~20 ms.
    computed_outputs: list[str]

    @classmethod
    def of(cls, scope: GraphScope) -> ReshapeTargets:
        if _TARGETED.isdisjoint(scope.op_types()):
            return cls([], [], [])
        texts, nodes = scope.scan().texts, scope.graph.node
        lookup = ConstantLookup()
        computed: list[int] = []
        outputs: list[str] = []
        constant: list[ConstantTarget] = []
        for i in [i for i in range(len(nodes)) if texts[3 * i] in _TARGETED and texts[3 * i + 1] in ONNX_DOMAINS]:
            node = nodes[i]
            if len(node.input) < 2:
                continue
            const = lookup.find(scope, node.input[1])
            if const is None:
                if texts[3 * i] == "Reshape" and node.output:
                    computed.append(i)
                    outputs.append(node.output[0])
                continue
            target = const.value()
            if target is not None:
                constant.append(ConstantTarget(i, node, target))
        return cls(computed, constant, outputs)


_TARGETED = frozenset({"Reshape", "Expand"})


def _dims(values, name: str) -> tuple[int, ...] | None:
    """A pinned run's dims of a tensor, when every one is a known size (so their product means something)."""
    value = values.get(name)
    info = value_tensor_info(value)
    if info is None or info.dims is None or not all(isinstance(d, int) and d > 0 for d in info.dims):
        return None
    return tuple(d for d in info.dims if isinstance(d, int))


def _keeping_batch(values: Mapping[str, onnx.ValueInfoProto], names: list[str],
                   batches: frozenset[str]) -> list[bool]:
    """Per tensor, whether inference derived it with a batch name among its dims (read straight from the
    protos: ``tensor_info`` per Reshape costs a tenth of a second on a 100k-node transformer)."""
    kept: list[bool] = []
    get, keep = values.get, kept.append
    for name in names:
        value = get(name)
        keep(value is not None and value.type.WhichOneof("value") == "tensor_type"
             and any(dim.dim_param in batches for dim in value.type.tensor_type.shape.dim))
    return kept


def baked_reshapes(scope: GraphScope, targets: ReshapeTargets, oracle: ShapeOracle,
                   names: frozenset[str]) -> list[BakedReshape]:
    """Reshapes of the main graph that, in both pinned runs, drop exactly one batch dim's worth of
    elements; ``names`` are the batch names (``batch_names``)."""
    candidates = targets.computed if names else []
    if candidates:
        # A target whose dims data propagation already derives with the batch's own name keeps the
        # batch; only the others need the two pinned runs (which cost two more inferences).
        keeps = _keeping_batch(oracle.values(ROOT), targets.computed_outputs, names)
        candidates = [i for i, keeping in zip(candidates, keeps) if not keeping]
    if not candidates:
        return []
    runs = [oracle.named_pins(run) for run in (0, 1)]
    found: list[BakedReshape] = []
    for i in candidates:
        node = scope.graph.node[i]
        seen: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
        batch = None
        for sizes, values in runs:
            data, target = _dims(values, node.input[0]), _dims(values, node.output[0])
            if data is None or target is None:
                break
            held, kept = math.prod(data), math.prod(target)
            match = next((n for n in sorted(names) if n in sizes and held == kept * sizes[n]
                          and sizes[n] > 1), None)
            if match is None or (batch is not None and match != batch):
                break
            batch = match
            seen.append((sizes[match], data, target))
        if batch is not None and len(seen) == len(runs):
            found.append(BakedReshape(i, node, batch, tuple(seen)))
    return found


def batch_fixing_constants(targets: ReshapeTargets, values: Mapping[str, onnx.ValueInfoProto],
                           batch: frozenset[str]) -> list[tuple[ConstantTarget, int, str]]:
    """Reshapes and Expands whose constant target fixes dim 0 while their input's dim 0 is the dynamic batch:
    each with the size it fixes and the batch dim's name (OL108's constant finding)."""
    found: list[tuple[ConstantTarget, int, str]] = []
    for constant in targets.constant:
        target = constant.target
        if target.ndim != 1 or target.size == 0 or target.dtype.kind not in "iu":
            continue
        lead = int(target[0])
        if lead <= 0 or (constant.node.op_type == "Expand" and lead == 1):
            continue  # 0 copies the dim, -1 infers it, Expand to 1 broadcasts
        info = value_tensor_info(values.get(constant.node.input[0]))
        if info is None or not info.dims or info.dims[0] not in batch:
            continue
        found.append((constant, lead, str(info.dims[0])))
    return found


def downstream_tensors(graph: onnx.GraphProto, starts: list[int]) -> set[str]:
    """Every tensor the given nodes' outputs reach in the graph (node order need not be sorted)."""
    readers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in set(node.input):
            if name:
                readers.setdefault(name, []).append(node)
    queue = [out for i in starts for out in graph.node[i].output if out]
    reached = set(queue)
    while queue:
        for node in readers.get(queue.pop(), []):
            for out in node.output:
                if out and out not in reached:
                    reached.add(out)
                    queue.append(out)
    return reached
