"""Tensors a graph holds as data (initializers and Constant nodes), read without external weights.

Readiness rules need the *values* of small constants (a Reshape's shape, a
QuantizeLinear's scale) and of float weights (FP16 range). Lint never loads
external data (docs/design.md), so a tensor stored outside the model has no value
here: callers report only what the file itself proves.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import numpy_helper

from onnx_lint.model.graphs import ONNX_DOMAINS, GraphScope


@dataclass(frozen=True)
class ConstantTensor:
    """A tensor whose value is fixed by the file: an initializer or a Constant node's output."""

    name: str
    tensor: onnx.TensorProto
    kind: str  # "initializer" or "Constant"
    node_index: int | None = None  # the Constant node, for kind "Constant"

    @property
    def external(self) -> bool:
        return self.tensor.data_location == onnx.TensorProto.EXTERNAL

    def value(self) -> np.ndarray | None:
        """The tensor's values; ``None`` when they live in external data or cannot be decoded."""
        if self.external:
            return None
        try:
            return numpy_helper.to_array(self.tensor)
        except Exception:  # an odd type numpy cannot hold; the caller then says nothing
            return None


_VALUE_ATTRS = {"value_float": onnx.TensorProto.FLOAT, "value_floats": onnx.TensorProto.FLOAT,
                "value_int": onnx.TensorProto.INT64, "value_ints": onnx.TensorProto.INT64}


def constant_node_tensor(node: onnx.NodeProto) -> onnx.TensorProto | None:
    """The tensor a standard ``Constant`` node produces, as inference reads it; ``None`` for forms no
    rule or inference reads as numbers (sparse, strings)."""
    for attr in node.attribute:
        if attr.name == "value" and attr.type == onnx.AttributeProto.TENSOR:
            return attr.t
        if attr.name in _VALUE_ATTRS:
            values = list(attr.floats or attr.ints) if attr.name.endswith("s") else [attr.f if "float" in attr.name
                                                                                      else attr.i]
            dims = [len(values)] if attr.name.endswith("s") else []
            return onnx.helper.make_tensor(node.output[0], _VALUE_ATTRS[attr.name], dims, values)
    return None  # sparse_value and value_string(s) are not numbers any rule here reads


def constants(scope: GraphScope) -> dict[str, ConstantTensor]:
    """Every initializer and Constant-node output of one graph, by tensor name."""
    found = {name: ConstantTensor(name, t, "initializer") for name, t in scope.initializers().items()
             if isinstance(t, onnx.TensorProto)}  # sparse initializers are no constants read here
    found.update((c.name, c) for c in constant_nodes(scope))
    return found


def constant_nodes(scope: GraphScope) -> Iterator[ConstantTensor]:
    """The outputs of the graph's Constant nodes (found among the scan's special nodes)."""
    for index in scope.special():
        node = scope.graph.node[index]
        if node.op_type == "Constant" and node.domain in ONNX_DOMAINS and node.output:
            tensor = constant_node_tensor(node)
            if tensor is not None:
                yield ConstantTensor(node.output[0], tensor, "Constant", index)


def consumers(graph: onnx.GraphProto) -> dict[str, list[int]]:
    """Tensor name -> indices of the nodes of this graph that read it."""
    table: dict[str, list[int]] = {}
    for i, node in enumerate(graph.node):
        for name in node.input:
            if name:
                table.setdefault(name, []).append(i)
    return table


class ConstantLookup:
    """Constants visible from each graph (its own, then its enclosing graphs'), built on first use."""

    def __init__(self) -> None:
        self._tables: dict[str, dict[str, ConstantTensor]] = {}

    def table(self, scope: GraphScope) -> dict[str, ConstantTensor]:
        if scope.path not in self._tables:
            self._tables[scope.path] = constants(scope)
        return self._tables[scope.path]

    def find(self, scope: GraphScope, name: str) -> ConstantTensor | None:
        """The constant ``name`` as ``scope`` reads it: the innermost graph holding it decides."""
        return next((found for current in scope.outward() if (found := self.table(current).get(name))), None)


QDQ_OPS = frozenset({"QuantizeLinear", "DequantizeLinear"})
_QDQ_DOMAINS = ONNX_DOMAINS | {"com.microsoft"}  # ONNX Runtime's contrib Q/DQ too


def qdq_nodes(scopes: list[GraphScope]) -> Iterator[tuple[GraphScope, int, onnx.NodeProto]]:
    """Every QuantizeLinear/DequantizeLinear node (ONNX's or com.microsoft's), in every graph."""
    for scope in scopes:
        if QDQ_OPS.isdisjoint(scope.op_types()):
            continue
        texts = scope.scan().texts
        for i in range(len(scope.graph.node)):
            if texts[3 * i] in QDQ_OPS and texts[3 * i + 1] in _QDQ_DOMAINS:
                yield scope, i, scope.graph.node[i]
