"""``GraphValues``: what inference derived for each tensor of a graph, answered without a 100k-entry
table where a rule asks for a few names (``pick``) - and always the answer the whole table gives."""

from __future__ import annotations

import onnx
from onnx import TensorProto as T
from onnx import helper as h

from onnx_lint.engines.onnx_inference import GraphValues, run_onnx_inference


def _inferred() -> onnx.GraphProto:
    nodes = [h.make_node("Relu", ["X"], ["a"]), h.make_node("Neg", ["a"], ["b"]), h.make_node("Abs", ["b"], ["Y"])]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("X", T.FLOAT, ["batch", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, None)])
    return run_onnx_inference(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])).graph


def test_pick_then_get_answers_as_the_whole_table_does_without_building_it():
    graph = _inferred()
    table = dict(GraphValues(graph).items())
    values = GraphValues(graph)
    picked = values.pick(["a", "missing", "X"])
    assert set(picked) == {"a", "X"} and picked["a"] == table["a"]
    assert values.get("a") == table["a"] and values.get("missing") is None
    assert "a" in values and "missing" not in values
    assert values._all is None  # noqa: SLF001 -- the point: no table for the picked names
    assert values.get("b") == table["b"]  # a name never picked still gets its answer (from the table)
    assert values.pick(["b", "Y"]) == {"b": table["b"], "Y": table["Y"]}
