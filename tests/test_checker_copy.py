"""The checker judges a model with external or large weights on a weight-free copy (engines/checker.py).

The copy must be what the checker would see minus the bytes: every tensor in its place, small ones as
they are, heavy ones empty tensors of their type; so the checker's verdict names the same problem it
names on the whole model.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.checker
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from onnx_lint import api
from onnx_lint.engines.checker import light_copy
from onnx_lint.model.load import read_unvalidated


def _model(broken: bool) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal((64, 64)).astype(np.float32), f"w{i}") for i in range(3)]
    bias = numpy_helper.from_array(np.ones(64, np.float32), "bias")
    nodes = [h.make_node("MatMul", ["x", "w0"], ["a"]), h.make_node("Add", ["a", "bias"], ["b"]),
             h.make_node("MatMul", ["b", "w1"], ["c"]), h.make_node("MatMul", ["c", "w2"], ["d"]),
             h.make_node("Relu", ["d"], ["y"], **({"alpha": 0.5} if broken else {}))]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["batch", 64])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["batch", 64])], [weights[0], bias, *weights[1:]])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _save(tmp_path, broken: bool):
    path = tmp_path / "model.onnx"
    onnx.save(_model(broken), path, save_as_external_data=True, all_tensors_to_one_file=True,
              location="model.data", size_threshold=1024)  # the 64-float bias stays in the file
    return path


def test_the_copy_keeps_every_tensor_in_place_and_empties_only_the_external_ones(tmp_path):
    path = _save(tmp_path, broken=False)
    original = onnx.load(path, load_external_data=False)
    copy = light_copy(read_unvalidated(path), sort=False)
    assert [t.name for t in copy.graph.initializer] == ["w0", "bias", "w1", "w2"]
    for kept, seen in zip(original.graph.initializer, copy.graph.initializer):
        if kept.data_location == T.EXTERNAL:
            assert (list(seen.dims), seen.data_type, seen.HasField("raw_data")) == ([0], T.FLOAT, False)
        else:
            assert seen == kept
    onnx.checker.check_model(copy)
    assert api.check(path).diagnostics == ()


def test_the_checker_names_the_same_problem_on_the_copy_as_on_the_whole_model(tmp_path):
    path = _save(tmp_path, broken=True)
    try:
        onnx.checker.check_model(str(path))
    except onnx.checker.ValidationError as exc:
        expected = str(exc).splitlines()[0]
    [finding] = [d for d in api.check(path).diagnostics if d.code == "OL102"]
    assert "Unrecognized attribute: alpha for operator Relu" in expected
    assert "Unrecognized attribute: alpha for operator Relu" in finding.message
