"""A model in ONNX text syntax with its weights shown by size, and diffs between two such texts.

One printer for everything a person reads: ``--diff`` and the language server's
textual view. Weight values are replaced by a size note before printing: a real
CNN's weights would otherwise make the text hundreds of megabytes of numbers
(a TorchScript resnet18 printed 146 MB, most of it on one line).
"""

from __future__ import annotations

import difflib
import math

import onnx
import onnx.printer

# Tensors with more elements than this are shown by their size, not their values.
SHOWN_ELEMENTS = 16
_DATA_FIELDS = ("raw_data", "float_data", "int32_data", "int64_data", "double_data", "uint64_data",
                "string_data")


def _elide(tensor: onnx.TensorProto) -> None:
    """Replace a large tensor's values by a note of their size, in place (the printer shows the note)."""
    if tensor.data_location == onnx.TensorProto.EXTERNAL or math.prod(tensor.dims) <= SHOWN_ELEMENTS:
        return
    raw = tensor.HasField("raw_data")
    size = len(tensor.raw_data) if raw else math.prod(tensor.dims)
    for name in _DATA_FIELDS:
        tensor.ClearField(name)
    tensor.data_location = onnx.TensorProto.EXTERNAL
    note = tensor.external_data.add()
    note.key, note.value = "not shown", f"{size:,} {'bytes' if raw else 'values'}"


def without_weights(model: onnx.ModelProto, in_place: bool = False) -> onnx.ModelProto:
    """A copy (or ``model`` itself) whose large initializers and constant values print as a size note."""
    view = model
    if not in_place:
        view = onnx.ModelProto()
        view.CopyFrom(model)
    graphs = [view.graph]
    while graphs:
        graph = graphs.pop()
        for tensor in graph.initializer:
            _elide(tensor)
        for sparse in graph.sparse_initializer:
            _elide(sparse.values)
            _elide(sparse.indices)
        for node in graph.node:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    graphs.append(attr.g)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    graphs.extend(attr.graphs)
                elif attr.type == onnx.AttributeProto.TENSOR:
                    _elide(attr.t)
                elif attr.type == onnx.AttributeProto.TENSORS:
                    for tensor in attr.tensors:
                        _elide(tensor)
    return view


def model_text(model: onnx.ModelProto) -> str:
    """The model in ONNX text syntax, weights by size (no final newline, as the printer writes it)."""
    return onnx.printer.to_text(without_weights(model))


def text_diff(before: onnx.ModelProto, after: bytes, label: str) -> str:
    """A unified diff of a model's text form and that of the serialized model ``after``; ``""`` when
    they print the same. (``after`` is parsed here and its weights dropped in place: one copy fewer.)

    Both texts end with a newline, so the diff does too and the next file's header
    starts on its own line; ``patch`` and ``git apply`` accept it (the labels sit
    after a tab, where a timestamp goes, so the file name stays ``label``).
    """
    old = (model_text(before) + "\n").splitlines(keepends=True)
    fixed = without_weights(onnx.ModelProto.FromString(after), in_place=True)
    new = (onnx.printer.to_text(fixed) + "\n").splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, label, label, "(declared)", "(fixed)"))
