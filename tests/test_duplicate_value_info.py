"""Issue 22, item 8: a tensor declared twice in value_info (onnxslim writes such copies on PP-OCRv3 det).

Before OL109, each copy was judged on its own, the fixes wrote only the first, and ``--fix`` stopped with
"the OL101 fix did not converge" and wrote nothing.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h


def slimmed_det(copies: list[list]) -> onnx.ModelProto:
    """Conv -> Relu -> Sigmoid over [batch, 3, h, w], with ``copies`` declared for the Relu's output, plus
    the -1 dims paddle2onnx leaves on every other entry (what onnxslim keeps and duplicates)."""
    weight = onnx.numpy_helper.from_array(np.ones((4, 3, 3, 3), dtype="float32") * 0.1, "w")
    nodes = [h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), h.make_node("Relu", ["c"], ["r"]),
             h.make_node("Sigmoid", ["r"], ["y"])]
    value_info = [h.make_tensor_value_info("c", T.FLOAT, [-1, 4, -1, -1])]
    value_info += [h.make_tensor_value_info("r", T.FLOAT, dims) for dims in copies]
    value_info.append(h.make_tensor_value_info("c", T.FLOAT, [-1, 4, -1, -1]))
    graph = h.make_graph(nodes, "det", [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, "h", "w"])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["batch", 4, "h", "w"])], [weight],
                         value_info=value_info)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _run(path) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": np.random.default_rng(0).standard_normal((2, 3, 9, 11)).astype("float32")})[0]


def _entries(path, name):
    return [[d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in onnx.load(path).graph.value_info if v.name == name]


def test_duplicate_entries_are_reported_and_fix_converges_keeping_the_computed_copy(cli, save):
    path = save(slimmed_det([[-1, 4, -1, -1], ["batch", 4, "h", "w"]]))
    before = _run(path)
    diags = cli("check", str(path), "--output-format", "json").json()
    dupes = [d for d in diags if d["code"] == "OL109"]
    assert [(d["location"]["tensor"], d["severity"]) for d in dupes] == [("c", "info"), ("r", "warning")]
    [r] = [d for d in dupes if d["location"]["tensor"] == "r"]
    assert "value_info declares 'r' 2 times (value_info[1], value_info[2])" in r["message"]
    assert "value_info[2] is kept (it matches what the graph computes)" in r["message"]
    assert r["fix"]["applicability"] == "safe" and "(copy 2)" in r["fix"]["title"]
    run = cli("check", str(path), "--fix")
    assert run.code == 0, run.out + run.err
    assert _entries(path, "r") == [["batch", 4, "h", "w"]]
    assert len(_entries(path, "c")) == 1
    assert cli("check", str(path), "--output-format", "json").json() == []
    np.testing.assert_array_equal(_run(path), before)  # annotations only: the same numbers
    fixed = path.read_bytes()
    assert cli("check", str(path), "--fix").code == 0 and path.read_bytes() == fixed  # idempotent


def test_disagreeing_copies_without_a_computed_one_keep_the_first_and_converge(cli, save):
    path = save(slimmed_det([[-1, 4, -1, -1], [-1, 5, -1, -1]]))
    diags = cli("check", str(path), "--output-format", "json").json()
    [r] = [d for d in diags if d["code"] == "OL109" and d["location"]["tensor"] == "r"]
    assert "value_info[1] is kept (the first)" in r["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert len(_entries(path, "r")) == 1
    assert cli("check", str(path), "--output-format", "json").json() == []


def test_one_declaration_per_tensor_is_silent(cli, save):
    path = save(slimmed_det([["batch", 4, "h", "w"]]))
    model = onnx.load(path)
    del model.graph.value_info[-1]  # the second 'c'
    onnx.save(model, path)
    assert [d["code"] for d in cli("check", str(path), "--output-format", "json").json()] == ["OL101"]
