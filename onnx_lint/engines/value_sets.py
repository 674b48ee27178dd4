"""Which tensors' shapes are set by the *value* of a graph input, not only by its dims.

A Squeeze whose ``axes`` is a graph input, a Reduce whose ``axes`` is one, a Split fed its
``split`` sizes, a window op fed its ``size``, a TopK fed ``k``, a Resize fed ``sizes``: the
output's dims are whatever those values make them. A declared number there is a contract on
the values the model is fed, and neither ONNX Runtime's symbolic engine (which, lacking the
value, guesses: it squeezes every 1-dim, splits equally) nor a run on synthetic values (which
feeds values nobody promised) can contradict it. ONNX's own inference never guesses a value,
so what it derives there holds for every value and stays a fact.

The analysis is a forward pass over the graph, carrying two sets of graph inputs per tensor:
whose values its *value* depends on, and whose values its *shape* depends on. A shape follows
the shapes of a node's inputs, plus the values at the node's shape-setting inputs
(``SHAPE_SETTING_INPUTS``); a value follows every input's value, except that ``Shape`` and
``Size`` read only their input's shape. If/Loop/Scan bodies are walked with what flows in.

Left out on purpose: If's condition (``input_conditioned_ifs`` probes both branches and says which
dims follow the branch) and ops whose sizes count their data (NonZero, Unique, NonMaxSuppression,
Compress): a declared number for a count of matches is not a contract any real data keeps, and the
probe's runs with other data refute it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import onnx

from onnx_lint.model.graphs import onnx_domain

__all__ = ["SHAPE_SETTING_INPUTS", "value_set_shapes"]

_REDUCE = ("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
           "ReduceProd", "ReduceSum", "ReduceSumSquare")
# Per standard operator, the inputs whose values set the output's dims.
SHAPE_SETTING_INPUTS: Mapping[str, tuple[int, ...]] = {
    "Reshape": (1,), "Expand": (1,), "Tile": (1,), "ConstantOfShape": (0,), "Range": (0, 1, 2),
    "Slice": (1, 2, 3, 4), "Pad": (1, 3), "Squeeze": (1,), "Unsqueeze": (1,), "Split": (1,), "TopK": (1,),
    "Resize": (1, 2, 3), "Upsample": (1,), "OneHot": (1,), "CenterCropPad": (1,), "HannWindow": (0,),
    "HammingWindow": (0,), "BlackmanWindow": (0,), "MelWeightMatrix": (0, 1, 2, 3, 4), "DFT": (1, 2),
    "STFT": (1, 3), "Col2Im": (1, 2), "MaxUnpool": (2,), "AffineGrid": (1,), "Loop": (0, 1),
    "SplitToSequence": (1,), "SequenceAt": (1,), "SequenceErase": (1,), "SequenceInsert": (2,),
    **{op: (1,) for op in _REDUCE},
}
# Ops whose output *value* is a function of their input's shape alone.
_SHAPE_READERS = frozenset({"Shape", "Size"})
_EMPTY: frozenset[str] = frozenset()


def value_set_shapes(graph: onnx.GraphProto) -> dict[str, frozenset[str]]:
    """Per tensor of ``graph`` (its bodies included) whose shape a graph input's value sets: those inputs.

    Graph inputs that an initializer backs are defaults, not fed values: they count as constants.
    Tensors whose shapes no input value sets are absent (the common case: an empty dict).
    """
    backed = {t.name for t in graph.initializer} | {t.values.name for t in graph.sparse_initializer}
    values = {v.name: frozenset({v.name}) for v in graph.input if v.name not in backed}
    if not values:
        return {}
    shapes: dict[str, frozenset[str]] = {}
    _walk(graph, values, shapes)
    return {name: inputs for name, inputs in shapes.items() if inputs}


def _walk(graph: onnx.GraphProto, values: dict[str, frozenset[str]], shapes: dict[str, frozenset[str]]) -> None:
    """Carry the two sets through ``graph``'s nodes in order (a sorted graph; OL103 sorts others)."""
    for node in graph.node:
        op = node.op_type if onnx_domain(node.domain) == "" else ""
        ins = [name for name in node.input if name]
        value_in = _union(values.get(name, _EMPTY) for name in ins)
        shape_in = _union(shapes.get(name, _EMPTY) for name in ins)
        setting = _union(values.get(node.input[i], _EMPTY) for i in SHAPE_SETTING_INPUTS.get(op, ())
                         if i < len(node.input) and node.input[i])
        body_values, body_shapes = _bodies(node, values, shapes, value_in, shape_in)
        shape_out = shape_in | setting | body_shapes
        value_out = shape_in if op in _SHAPE_READERS else value_in | shape_out | body_values
        for name in node.output:
            if name:
                if value_out:
                    values[name] = value_out
                if shape_out:
                    shapes[name] = shape_out


def _bodies(node: onnx.NodeProto, values: dict[str, frozenset[str]], shapes: dict[str, frozenset[str]],
            value_in: frozenset[str], shape_in: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """What a node's bodies add to its outputs: the sets of their outputs, with the node's inputs handed to
    every body input (a conservative reading of which loop input feeds which body input)."""
    body_values: frozenset[str] = _EMPTY
    body_shapes: frozenset[str] = _EMPTY
    for attribute in node.attribute:
        graphs = [attribute.g] if attribute.type == onnx.AttributeProto.GRAPH else list(attribute.graphs)
        for body in graphs:
            inner_values = dict(values)
            inner_shapes = dict(shapes)
            for value in body.input:
                _set(inner_values, value.name, value_in)
                _set(inner_shapes, value.name, shape_in)
            _walk(body, inner_values, inner_shapes)
            for name, inputs in inner_shapes.items():
                if shapes.get(name) != inputs:
                    shapes[name] = inputs  # body tensors are reported too (by name; bodies keep names apart)
            body_values |= _union(inner_values.get(o.name, _EMPTY) for o in body.output)
            body_shapes |= _union(inner_shapes.get(o.name, _EMPTY) for o in body.output)
    return body_values, body_shapes


def _set(sets: dict[str, frozenset[str]], name: str, inputs: frozenset[str]) -> None:
    if inputs:
        sets[name] = inputs
    else:
        sets.pop(name, None)


def _union(sets: Iterable[frozenset[str]]) -> frozenset[str]:
    result: frozenset[str] = _EMPTY
    for found in sets:
        if found:
            result = result | found
    return result
