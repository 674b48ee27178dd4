"""Dims set by the *value* of a graph input: a declared number there is a contract on those values.

Squeeze and Reduce with ``axes`` as an input, TopK with ``k`` as one, Resize with its size read from
one (real TorchScript exports, tests/exports/make_value_input_exports.py): the engines that lack the
value (ONNX Runtime's symbolic engine guesses, the probe feeds values nobody promised) must not
overrule the declaration. ONNX Runtime is the judge, at the value the model is given and at another.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import output_dims
from onnx import TensorProto, helper

from onnx_lint.engines.value_sets import value_set_shapes

ort = pytest.importorskip("onnxruntime")
EXPORTS = Path(__file__).parent / "exports"


def _run(path: Path, feeds: dict[str, np.ndarray]) -> list[tuple[int, ...]]:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return [np.asarray(r).shape for r in session.run(None, feeds)]


def _holds(path: Path, shapes: list[tuple[int, ...]]) -> bool:
    """Whether every declared output dim of the file matches the shapes ONNX Runtime returned."""
    for i, shape in enumerate(shapes):
        declared = output_dims(path, i)
        if len(declared) != len(shape) or any(isinstance(d, int) and d != s for d, s in zip(declared, shape)):
            return False
    return True


def _squeeze_model() -> onnx.ModelProto:
    """ONNX's own test_squeeze_negative_axes: the data squeezes axis -2."""
    graph = helper.make_graph(
        [helper.make_node("Squeeze", ["x", "axes"], ["y"])], "squeeze",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 1, 5]),
         helper.make_tensor_value_info("axes", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 5])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _reduce_model() -> onnx.ModelProto:
    """ONNX's own test_reduce_l1_keep_dims_example: the data reduces axis 2."""
    graph = helper.make_graph(
        [helper.make_node("ReduceL1", ["data", "axes"], ["reduced"], keepdims=1)], "reduce",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [3, 2, 2]),
         helper.make_tensor_value_info("axes", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("reduced", TensorProto.FLOAT, [3, 2, 1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize(("build", "given", "other"), [
    (_squeeze_model, {"x": np.ones((1, 3, 1, 5), np.float32), "axes": np.array([-2])}, {"axes": np.array([0])}),
    (_reduce_model, {"data": np.ones((3, 2, 2), np.float32), "axes": np.array([2])}, {"axes": np.array([0])}),
], ids=["squeeze-axes", "reduce-axes"])
def test_a_declaration_the_model_data_keeps_is_neither_an_error_nor_fixed(cli, save, build, given, other):
    path = save(build())
    before = path.read_bytes()
    [note] = cli("check", str(path), "--output-format", "json").json()
    assert note["code"] == "OL007" and note["severity"] == "info"
    assert "is set by the value of input 'axes'" in note["message"]
    assert cli("check", str(path), "--fix").code == 0 and path.read_bytes() == before
    assert _holds(path, _run(path, given))  # the value the model is given keeps it
    assert not _holds(path, _run(path, {**given, **other}))  # another value would not: a contract, not a fact


def _with_numbers(source: Path, target: Path, dims: list[list[int]]) -> Path:
    """The export with its outputs' anonymous dims replaced by the traced numbers (what a user pins)."""
    model = onnx.load(source)
    for value, numbers in zip(model.graph.output, dims):
        for dim, number in zip(value.type.tensor_type.shape.dim, numbers):
            dim.Clear()
            dim.dim_value = number
    onnx.save(model, target)
    return target


@pytest.mark.parametrize(("name", "traced", "given", "other", "value_input"), [
    ("ts_topk_k_input", [[2, 3], [2, 3]], {"x": np.random.default_rng(0).standard_normal((2, 10)).astype(np.float32),
                                           "k": np.array(3)}, {"k": np.array(5)}, "k"),
    ("ts_resize_sizes_input", [[1, 4, 6, 10]], {"x": np.ones((1, 4, 3, 5), np.float32),
                                                "hw": np.array([6, 10])}, {"hw": np.array([8, 12])}, "hw"),
], ids=["topk-k", "resize-sizes"])
def test_real_exports_with_a_value_input_are_judged_by_onnx_runtime(cli, tmp_path, name, traced, given, other,
                                                                     value_input):
    """As exported (anonymous output dims) and with the traced numbers pinned: no error either way; what a fix
    writes holds for every value ONNX Runtime is given, the pinned numbers stay untouched."""
    exported = tmp_path / f"{name}.onnx"
    shutil.copyfile(EXPORTS / f"{name}.onnx", exported)
    pinned = _with_numbers(exported, tmp_path / f"{name}_pinned.onnx", traced)
    for path in (exported, pinned):
        found = cli("check", str(path), "--output-format", "json").json()
        assert [d for d in found if d["severity"] == "error"] == []
        assert cli("check", str(path), "--fix").code == 0
    before = pinned.read_bytes()
    notes = cli("check", str(pinned), "--output-format", "json").json()
    assert notes and all(d["code"] == "OL007" and f"input '{value_input}'" in d["message"] for d in notes)
    assert pinned.read_bytes() == before
    for feeds in (given, {**given, **other}):  # whatever the fix wrote holds at both values
        assert _holds(exported, _run(exported, feeds))
    assert _holds(pinned, _run(pinned, given))


def test_only_values_set_shapes_not_dims():
    """Reshape to Shape(x) follows x's dims, not a value; Reshape to an input's value does; an input that an
    initializer backs is a default, not a fed value; a Loop's trip count sets its scan output's dims."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]), helper.make_node("Identity", ["v"], ["scan"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("scan", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Reshape", ["x", "s"], ["by_dims"]),
         helper.make_node("Reshape", ["x", "shape"], ["by_value"]),
         helper.make_node("Reshape", ["x", "default"], ["by_default"]),
         helper.make_node("Relu", ["by_value"], ["after"]),
         helper.make_node("Loop", ["trips", "", ], ["stacked"], body=body)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
         helper.make_tensor_value_info("default", TensorProto.INT64, [2]),
         helper.make_tensor_value_info("trips", TensorProto.INT64, []),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("after", TensorProto.FLOAT, None)],
        [helper.make_tensor("default", TensorProto.INT64, [2], [3, 2])])
    found = value_set_shapes(graph)
    assert found["by_value"] == found["after"] == frozenset({"shape"})
    assert "by_dims" not in found and "by_default" not in found and "s" not in found
    assert found["stacked"] == frozenset({"trips"})
