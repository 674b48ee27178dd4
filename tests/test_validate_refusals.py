"""The tensor, name and external-data refusals of loading, word for word.

Validation does as little Python work per tensor as it can (a 100k-node model has 50k
initializers); these cases pin every refusal it makes, and which one it names when a model has
several defects, so that a faster pass can never refuse less or say something else.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from onnx_lint.base.errors import ModelLoadError
from onnx_lint.model.load import read_model


def _raw(name: str, dims: list[int], data_type: int = T.FLOAT, size: int | None = None) -> onnx.TensorProto:
    """A tensor with ``size`` bytes of raw data (by default as many as its dims need at 4 bytes each)."""
    count = int(np.prod(dims)) if dims else 1
    return T(name=name, dims=dims, data_type=data_type, raw_data=b"\0" * (4 * count if size is None else size))


def _model(*initializers: onnx.TensorProto, nodes: list[onnx.NodeProto] | None = None,
           sparse: list[onnx.SparseTensorProto] | None = None) -> onnx.ModelProto:
    """X -> Identity -> Y, carrying ``initializers`` (and any extra nodes) that nothing reads."""
    graph = h.make_graph([h.make_node("Identity", ["X"], ["Y"], name="id"), *(nodes or [])], "g",
                         [h.make_tensor_value_info("X", T.FLOAT, [2])],
                         [h.make_tensor_value_info("Y", T.FLOAT, [2])], list(initializers),
                         sparse_initializer=sparse or [])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _constant(name: str, tensor: onnx.TensorProto) -> onnx.NodeProto:
    return h.make_node("Constant", [], [name], name=f"make_{name}", value=tensor)


def _external(name: str, dims: list[int], **entries: str) -> onnx.TensorProto:
    tensor = T(name=name, dims=dims, data_type=T.FLOAT, data_location=T.EXTERNAL)
    for key, value in entries.items():
        tensor.external_data.add(key=key, value=value)
    return tensor


def _with_segment(tensor: onnx.TensorProto) -> onnx.TensorProto:
    tensor.segment.begin, tensor.segment.end = 0, 1
    return tensor


def _empty_raw(name: str, dims: list[int]) -> onnx.TensorProto:
    """raw_data present but empty: still the raw-data case, not the typed fields'."""
    tensor = T(name=name, dims=dims, data_type=T.FLOAT)
    tensor.raw_data = b""
    return tensor


def _with_input_default() -> onnx.ModelProto:
    model = _model(_raw("w", [2]))
    model.graph.input.append(h.make_tensor_value_info("w", T.FLOAT, [2]))
    return model


# (case, model, the exact refusal or None for a model that loads)
REFUSALS: list[tuple[str, Callable[[], onnx.ModelProto], str | None]] = [
    ("healthy raw tensors of several types", lambda: _model(
        _raw("a", [4, 4]), _raw("b", [3], T.INT64, 24), _raw("c", [], T.DOUBLE, 8), _raw("d", [2, 3], T.FLOAT16, 12),
        _raw("e", [5], T.INT4, 3), _raw("f", [0, 7]), _raw("g", [2], T.BOOL, 2)), None),
    ("healthy typed tensors", lambda: _model(
        numpy_helper.from_array(np.ones((2, 2), np.float32), "w"),
        h.make_tensor("t", T.INT64, [3], [1, 2, 3]), h.make_tensor("s", T.STRING, [2], [b"a", b"b"]),
        T(name="no_values", dims=[0, 3], data_type=T.FLOAT)), None),
    ("a raw string tensor is not sized", lambda: _model(_raw("s", [2], T.STRING, 5)), None),
    ("a segment may hold part of the data", lambda: _model(_with_segment(_raw("w", [4, 4], size=8))), None),
    ("a typed type without a 1:1 field is not counted", lambda: _model(
        h.make_tensor("h", T.FLOAT16, [4], [1.0, 2.0, 3.0, 4.0])), None),
    ("short raw data", lambda: _model(_raw("a", [4, 4]), _raw("w", [4, 5], size=7)),
     "initializer 'w' holds 7 bytes of data but dims [4, 5] need 80"),
    ("long raw data", lambda: _model(_raw("w", [2], T.INT64, 24)),
     "initializer 'w' holds 24 bytes of data but dims [2] need 16"),
    ("empty raw data", lambda: _model(_empty_raw("w", [4, 5])),
     "initializer 'w' holds 0 bytes of data but dims [4, 5] need 80"),
    ("a scalar's raw data", lambda: _model(_raw("w", [], size=3)),
     "initializer 'w' holds 3 bytes of data but dims [] need 4"),
    ("sub-byte raw data", lambda: _model(_raw("w", [5], T.INT4, 2)),
     "initializer 'w' holds 2 bytes of data but dims [5] need 3"),
    ("a negative dim", lambda: _model(_raw("a", [4]), _raw("w", [3, -4], size=48)),
     "initializer 'w' has a negative dim [3, -4]"),
    ("two negative dims whose product fits the data", lambda: _model(_raw("w", [-2, -2], size=16)),
     "initializer 'w' has a negative dim [-2, -2]"),
    ("a negative dim of an external tensor", lambda: _model(_external("w", [-1], location="w.bin")),
     "initializer 'w' has a negative dim [-1]"),
    ("the first defect in file order is named: a size before a negative dim", lambda: _model(
        _raw("first", [2], size=1), _raw("second", [-2])),
     "initializer 'first' holds 1 bytes of data but dims [2] need 8"),
    ("the first defect in file order is named: a negative dim before a size", lambda: _model(
        _raw("first", [-2], size=8), _raw("second", [2], size=1)),
     "initializer 'first' has a negative dim [-2]"),
    ("the first defect in file order is named: an external tensor's negative dim before a size", lambda: _model(
        _external("first", [-1], location="w.bin"), _raw("second", [2], size=1)),
     "initializer 'first' has a negative dim [-1]"),
    ("the first defect in file order is named: a size before an external tensor's negative dim", lambda: _model(
        _raw("first", [2], size=1), _external("second", [-1], location="w.bin")),
     "initializer 'first' holds 1 bytes of data but dims [2] need 8"),
    ("typed values too few", lambda: _model(T(name="t", dims=[2, 2], data_type=T.INT64, int64_data=[1, 2, 3])),
     "initializer 't' holds 3 values but dims [2, 2] need 4"),
    ("no values at all", lambda: _model(T(name="t", dims=[2, 2], data_type=T.FLOAT)),
     "initializer 't' holds 0 values but dims [2, 2] need 4"),
    ("bool values in int32_data", lambda: _model(T(name="t", dims=[3], data_type=T.BOOL, int32_data=[1])),
     "initializer 't' holds 1 values but dims [3] need 3"),
    ("a Constant's tensor", lambda: _model(nodes=[_constant("k", _raw("k", [3], size=4))]),
     "constant tensor 'k' holds 4 bytes of data but dims [3] need 12"),
    ("a sparse initializer's values", lambda: _model(sparse=[onnx.SparseTensorProto(
        values=_raw("sv", [2], size=4), indices=_raw("si", [2], T.INT64, 16), dims=[8])]),
     "constant tensor 'sv' holds 4 bytes of data but dims [2] need 8"),
    ("a sparse initializer's indices", lambda: _model(sparse=[onnx.SparseTensorProto(
        values=_raw("sv", [2]), indices=_raw("si", [-2], T.INT64, 16), dims=[8])]),
     "constant tensor 'si' has a negative dim [-2]"),
    ("a name twice as an initializer", lambda: _model(_raw("w", [2]), _raw("w", [2])),
     "graph defines 'w' twice as an initializer"),
    ("a node output that is an initializer", lambda: _model(_raw("Z", [2]), nodes=[
        h.make_node("Identity", ["X"], ["Z"], name="again")]),
     "graph defines tensor 'Z' twice: as an initializer and as an output of node 'again' (ONNX requires each "
     "name once)"),
    ("an initializer that is also a graph input is its default", lambda: _with_input_default(), None),
    ("a dense and a sparse initializer of one name", lambda: _model(_raw("w", [2]), sparse=[onnx.SparseTensorProto(
        values=_raw("w", [1]), indices=_raw("i", [1], T.INT64, 8), dims=[2])]), None),
    ("a node output named like a sparse initializer", lambda: _model(nodes=[
        h.make_node("Identity", ["X"], ["sv"], name="again")], sparse=[onnx.SparseTensorProto(
            values=_raw("sv", [1]), indices=_raw("si", [1], T.INT64, 8), dims=[2])]), None),
    ("an external tensor without a file", lambda: _model(_external("w", [2])),
     "tensor 'w' uses external data but names no file"),
    ("an external file that is missing", lambda: _model(_external("w", [2], location="w.bin")),
     "tensor 'w': external data file 'w.bin' is missing"),
    ("an external location that escapes", lambda: _model(_external("w", [2], location="a/../../w.bin")),
     "refusing tensor 'w': external data location 'a/../../w.bin' escapes the model folder"),
    ("an external offset that is not a number", lambda: _model(
        _external("w", [2], location="w.bin", offset="x")),
     "tensor 'w': external data offset/length are not integers"),
    ("a negative external length", lambda: _model(_external("w", [2], location="w.bin", length="-8")),
     "tensor 'w': negative external data offset or length"),
]


@pytest.mark.parametrize(("case", "build", "refusal"), REFUSALS, ids=[case for case, _, _ in REFUSALS])
def test_each_refusal_names_the_first_defect_in_the_same_words(tmp_path: Path, case: str,
                                                               build: Callable[[], onnx.ModelProto],
                                                               refusal: str | None) -> None:
    path = tmp_path / "model.onnx"
    path.write_bytes(build().SerializeToString())
    if refusal is None:
        read_model(path)
        return
    with pytest.raises(ModelLoadError) as caught:
        read_model(path)
    assert str(caught.value) == f"{path}: {refusal}"


def test_external_data_too_short_names_the_tensor_that_reaches_furthest(tmp_path: Path) -> None:
    """Many tensors share one file: the one needing the most bytes is named, with its byte range."""
    tensors = [_external(f"w{i}", [4], location="w.bin", offset=str(16 * i), length="16") for i in range(8)]
    tensors.insert(3, _external("far", [4], location="w.bin", offset="4096"))
    path = tmp_path / "model.onnx"
    path.write_bytes(_model(*tensors).SerializeToString())
    (tmp_path / "w.bin").write_bytes(b"\0" * 128)
    with pytest.raises(ModelLoadError) as caught:
        read_model(path)
    assert str(caught.value) == (f"{path}: tensor 'far': external data file 'w.bin' has 128 bytes but the tensor "
                                 "needs bytes 4096..4112")
    (tmp_path / "w.bin").write_bytes(b"\0" * 4112)
    assert read_model(path).external_locations == ["w.bin"]


def test_of_several_initializer_names_that_are_not_utf8_the_first_in_the_file_is_named(tmp_path: Path) -> None:
    """Protobuf gives such a name back as bytes; the refusal quotes the first one in file order."""
    data = _model(_raw("aaaa1", [2]), _raw("ok", [2]), _raw("aaaa2", [2]), _raw("aaaa3", [2])).SerializeToString()
    path = tmp_path / "model.onnx"
    path.write_bytes(data.replace(b"aaaa3", b"\xfdaaa3").replace(b"aaaa2", b"\xfeaaa2").replace(b"aaaa1", b"\xffaaa1"))
    with pytest.raises(ModelLoadError) as caught:
        read_model(path)
    assert str(caught.value) == f"{path}: graph has a name that is not valid UTF-8: b'\\xffaaa1'"
