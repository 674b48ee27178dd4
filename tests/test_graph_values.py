"""``GraphValues``: what inference derived for each tensor of a graph, looked up by name through a table
of positions (no wrapper per entry kept alive) - and always the answer a plain dict would give."""

from __future__ import annotations

import onnx
from onnx import TensorProto as T
from onnx import helper as h

from onnx_lint.engines.onnx_inference import GraphValues, listing_order, run_onnx_inference


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


def _chain_with_untyped_middle() -> tuple[onnx.ModelProto, list[str]]:
    """Relu chain with an operator of an unknown domain in the middle: inference types nothing after it
    can be listed, and the names after it lose their guessed place."""
    nodes = [h.make_node("Relu", ["X"], ["r0"]), h.make_node("Neg", ["r0"], ["r1"]),
             h.make_node("Mystery", ["r1"], ["m"], domain="com.example"), h.make_node("Relu", ["m"], ["r2"]),
             h.make_node("Shape", ["r1"], ["s"]), h.make_node("Relu", ["r1"], ["r3"]),
             h.make_node("Add", ["r3", "r2"], ["Y"])]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("X", T.FLOAT, ["batch", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.example", 1)])
    return model, [out for node in nodes for out in node.output]


def test_guessed_places_answer_as_the_table_does_even_where_inference_left_a_gap():
    model, outputs = _chain_with_untyped_middle()
    graph = run_onnx_inference(model).graph
    order = listing_order(outputs)
    assert order == {"r0": 0, "r1": 1, "m": 2, "r2": 3, "s": 4, "r3": 5, "Y": 6}
    assert [v.name for v in graph.value_info] != list(order)  # inference did leave a gap
    names = [*outputs, "X", "missing"]
    plain, guessed = GraphValues(graph), GraphValues(graph, order)
    assert [guessed.get(n) for n in names] == [plain.get(n) for n in names]
    assert [n in guessed for n in names] == [n in plain for n in names]
    right = GraphValues(graph, {v.name: i for i, v in enumerate(graph.value_info)})
    assert [right.get(n) for n in names] == [plain.get(n) for n in names]


def test_no_places_are_guessed_where_a_name_is_produced_twice_or_entries_outnumber_names():
    model, outputs = _chain_with_untyped_middle()
    assert listing_order([*outputs, "r1"]) is None
    graph = _inferred()  # "a" listed twice: the last entry wins, as the table has it
    assert GraphValues(graph, {"a": 0, "b": 1}).get("a") == GraphValues(graph).get("a")
