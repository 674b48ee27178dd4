"""``GraphValues``: what inference derived for each tensor of a graph, looked up by name through a table
of positions (no wrapper per entry kept alive) - and always the answer a plain dict would give."""

from __future__ import annotations

import onnx
from onnx import TensorProto as T
from onnx import helper as h

from onnx_lint.engines.onnx_inference import GraphValues, run_onnx_inference


def _inferred() -> onnx.GraphProto:
    nodes = [h.make_node("Relu", ["X"], ["a"]), h.make_node("Neg", ["a"], ["b"]), h.make_node("Abs", ["b"], ["Y"])]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("X", T.FLOAT, ["batch", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, None)])
    inferred = run_onnx_inference(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])).graph
    inferred.value_info.append(h.make_tensor_value_info("a", T.DOUBLE, [1]))  # a second entry: the last wins
    inferred.value_info.append(h.make_tensor_value_info("X", T.INT64, [9]))  # an input's own entry wins
    return inferred


def test_lookups_answer_as_a_dict_built_in_order_does():
    graph = _inferred()
    truth = {v.name: v for v in graph.value_info}
    truth.update((v.name, v) for v in graph.input)
    truth.update((v.name, v) for v in graph.output if v.HasField("type"))
    values = GraphValues(graph)
    assert values.get("a") == truth["a"] and values.get("X") == truth["X"]
    assert truth["a"].type.tensor_type.elem_type == T.DOUBLE and truth["X"].type.tensor_type.elem_type == T.FLOAT
    assert all(values.get(name) == value for name, value in truth.items())
    assert values.get("missing") is None and "missing" not in values and "b" in values
    assert set(values) == set(truth) and len(values) == len(truth)
