"""Declared and derived tensor types as small immutable values, and how to compare them.

A dim is ``int`` (concrete), ``str`` (symbolic) or ``None`` (unknown). Whether a
symbolic dim carries user intent ("named") or was invented by an inference
engine ("anonymous") depends on the model: a name counts as *named* when the
producer wrote it on a graph input (docs/design.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx

Dim = int | str | None


@dataclass(frozen=True)
class TensorInfo:
    """Element type (0 = unknown) and dims (``None`` = no shape, rank unknown)."""

    elem_type: int
    dims: tuple[Dim, ...] | None

    @property
    def rank(self) -> int | None:
        return None if self.dims is None else len(self.dims)

    @property
    def type_name(self) -> str:
        return elem_type_name(self.elem_type)


def elem_type_name(elem_type: int) -> str:
    """The element type as ONNX's text syntax writes it (``float``, ``int64``, ``float16``)."""
    if not elem_type:
        return "untyped"
    try:
        return onnx.TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"type#{elem_type}"


def dim_of(dim: onnx.TensorShapeProto.Dimension) -> Dim:
    which = dim.WhichOneof("value")
    if which == "dim_value":
        return dim.dim_value
    if which == "dim_param" and dim.dim_param:
        return dim.dim_param
    return None


def tensor_info(type_proto: onnx.TypeProto) -> TensorInfo | None:
    """The tensor part of a type; ``None`` for sequences, maps, optionals and no type."""
    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        tensor = type_proto.tensor_type
    elif which == "sparse_tensor_type":
        tensor = type_proto.sparse_tensor_type
    else:
        return None
    dims = tuple(dim_of(d) for d in tensor.shape.dim) if tensor.HasField("shape") else None
    return TensorInfo(tensor.elem_type, dims)


def value_tensor_info(value: onnx.ValueInfoProto | None) -> TensorInfo | None:
    """The tensor type a graph input, output or value_info declares; ``None`` when absent or not a tensor."""
    return tensor_info(value.type) if value is not None and value.HasField("type") else None


def format_dims(dims: tuple[Dim, ...] | None) -> str:
    """Dims as in ONNX's text syntax: ``[batch, 4]``, ``?`` for an unknown dim.

    Without a type in front, rank 0 and "no shape" are spelled out (``scalar``,
    ``unknown rank``): ONNX writes them ``float`` and ``float[]``, which only read
    right after a type name (``format_info``).
    """
    if dims is None:
        return "unknown rank"
    if not dims:
        return "scalar"
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


def format_info(info: TensorInfo | None) -> str:
    """A tensor type in ONNX's text syntax, the notation of ``--diff`` and the textual view.

    ``float[3, 5]``; ``float`` is a scalar (rank 0); ``float[]`` has no shape (rank unknown).
    """
    if info is None:
        return "<no type>"
    if info.dims is None:
        return f"{info.type_name}[]"
    if not info.dims:
        return info.type_name
    return f"{info.type_name}{format_dims(info.dims)}"


def input_dim_names(graph: onnx.GraphProto) -> frozenset[str]:
    """Symbolic dim names the producer wrote on the graph inputs (user intent)."""
    names: set[str] = set()
    for value in graph.input:
        info = tensor_info(value.type)
        if info and info.dims:
            names.update(d for d in info.dims if isinstance(d, str))
    return frozenset(names)


def write_dims(tensor: onnx.TypeProto.Tensor, dims: tuple[Dim, ...]) -> None:
    """Replace a tensor type's shape by ``dims``; always leaves a shape field."""
    tensor.ClearField("shape")
    shape = tensor.shape
    shape.SetInParent()
    for dim in dims:
        entry = shape.dim.add()
        if isinstance(dim, int):
            entry.dim_value = dim
        elif isinstance(dim, str):
            entry.dim_param = dim
