"""The whole model as a graph for the editor: every graph compactly, one node in detail, over the server."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
import pytest_lsp
from lsp_support import SERVER, execute, push_capabilities, start
from pytest_lsp import LanguageClient

from benchmarks import models as bench
from examples import defects
from onnx_lint.lint.context import LintContext
from onnx_lint.lint.linter import lint_file
from onnx_lint.model.graphs import iter_scopes
from onnx_lint.model.load import read_model
from onnx_lint.rules import ALL_RULES
from onnx_lint.server.graph_data import model_graph, node_details


def _nodes(graph: dict) -> list[tuple[str, str, list[str], list[str]]]:
    """(op, name, inputs, outputs) of every node, decoded from the columns the view receives."""
    tensors = graph["tensors"]
    rows = []
    for i, op in enumerate(graph["nodeOp"]):
        start_in = graph["inputEnd"][i - 1] if i else 0
        start_out = graph["outputEnd"][i - 1] if i else 0
        rows.append((graph["ops"][op], graph["nodeName"][i],
                     [tensors[t] if t >= 0 else "" for t in graph["inputs"][start_in:graph["inputEnd"][i]]],
                     [tensors[t] for t in graph["outputs"][start_out:graph["outputEnd"][i]]]))
    return rows


def test_every_node_with_its_op_name_inputs_and_outputs_as_the_file_has_them():
    model = defects.weakly_typed_mlp()
    [graph] = model_graph(list(iter_scopes(model)))["graphs"]
    expected = [(n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}", n.name,
                 list(n.input), list(n.output)) for n in model.graph.node]
    assert _nodes(graph) == expected
    assert "com.microsoft.Gelu" in graph["ops"]
    assert [graph["tensors"][t] for t in graph["graphInputs"]] == [v.name for v in model.graph.input]
    assert [graph["tensors"][t] for t in graph["graphOutputs"]] == ["Y"]
    assert {graph["tensors"][t] for t in graph["initializers"]} == {t.name for t in model.graph.initializer}


def test_if_and_loop_bodies_come_as_their_own_graphs_tied_to_their_node():
    for model in (defects.if_branch_stale(), defects.loop_body_stale()):
        graphs = model_graph(list(iter_scopes(model)))["graphs"]
        root = graphs[0]
        owner = next(i for i, n in enumerate(model.graph.node) if n.op_type in ("If", "Loop"))
        paths = [path for node, _segment, path in root["subgraphs"] if node == owner]
        assert paths and paths == [g["path"] for g in graphs[1:]]
        assert all(path.startswith(f"graph/node[{owner}]/") for path in paths)


def test_a_100k_node_model_is_sent_as_columns_of_a_few_megabytes():
    import json

    model = bench.mlp_chain(100_000)
    data = model_graph(list(iter_scopes(model)))
    assert data["nodes"] == 100_000
    [graph] = data["graphs"]
    assert len(graph["nodeOp"]) == len(graph["nodeName"]) == len(graph["inputEnd"]) == 100_000
    assert len(graph["ops"]) < 10  # op types once each, nodes as indices
    assert len(json.dumps(data, separators=(",", ":"))) < 8_000_000


def test_a_node_in_detail_says_declared_and_derived_and_which_engine(tmp_path: Path):
    path = tmp_path / "weak.onnx"
    onnx.save(defects.weakly_typed_mlp(), path)
    _result, ctx = lint_file(path, str(path), ALL_RULES, lambda code: True)
    assert isinstance(ctx, LintContext)
    add = next(i for i, n in enumerate(ctx.model.graph.node) if n.op_type == "Add")
    details = node_details(ctx, "graph", add)
    assert details["op"] == "Add" and details["path"] == f"graph/node[{add}]"
    [y] = details["outputs"]
    assert y["tensor"] == "Y" and y["declared"] == "float" and y["derived"] == "float[batch, 8]"
    assert y["stale"] is True and y["engine"]
    assert any(i["initializer"] for i in details["inputs"])
    gelu = next(i for i, n in enumerate(ctx.model.graph.node) if n.op_type == "Gelu")
    assert node_details(ctx, "graph", gelu)["domain"] == "com.microsoft"
    with pytest.raises(ValueError, match="no node 99"):
        node_details(ctx, "graph", 99)


def test_attributes_are_summarised_short():
    from onnx_lint.server.graph_data import _attribute

    node = onnx.helper.make_node("Transpose", ["x"], ["y"], perm=list(range(20)), mode="a" * 200,
                                 value=onnx.numpy_helper.from_array(__import__("numpy").zeros((3, 4), "float32")))
    values = {a.name: _attribute(a) for a in node.attribute}
    assert values["perm"].startswith("[0, 1, 2") and values["perm"].endswith("… 20 in all]")
    assert len(values["mode"]) < 90 and values["mode"].endswith("…'")
    assert values["value"] == "tensor float32 3×4"


def _context(model: onnx.ModelProto, path: Path) -> LintContext:
    onnx.save(model, path)
    return LintContext(read_model(path), str(path))


def test_each_edge_carries_its_tensors_derived_shape_and_the_declared_one_where_the_file_contradicts_it(tmp_path):
    ctx = _context(defects.weakly_typed_mlp(), tmp_path / "weak.onnx")
    [graph] = model_graph(ctx.scopes, ctx)["graphs"]
    tensors, shapes = graph["tensors"], graph["shapes"]
    shape = {tensors[t]: shapes[s] for t, s in enumerate(graph["tensorShape"]) if s >= 0}
    # What flows on each edge, as the lint's inference derived it (each distinct type sent once).
    assert shape["X"] == "float[batch, 16]" and shape["Y"] == "float[batch, 8]"
    assert len(shapes) == len(set(shapes))
    # Weights are not drawn: no shape sent for them.
    assert not {tensors[t] for t in graph["initializers"]} & set(shape)
    # The stale output declares a scalar: that is said beside it; where the declaration only names a dim, nothing.
    declared = {tensors[t]: shapes[s] for t, s in graph["declaredShape"]}
    assert declared == {"Y": "float"}


def test_edge_shapes_on_a_100k_node_model_stay_within_the_payload():
    import json
    import time

    model = bench.weakly_typed(bench.mlp_chain(100_000))
    path = Path(__import__("tempfile").mkdtemp()) / "chain.onnx"
    ctx = _context(model, path)
    assert ctx.oracle.inferred is not None  # the lint's inference, done before the view asks
    started = time.perf_counter()
    data = model_graph(ctx.scopes, ctx)
    seconds = time.perf_counter() - started
    [graph] = data["graphs"]
    assert len(graph["shapes"]) < 10 and sum(s >= 0 for s in graph["tensorShape"]) >= 100_000
    assert len(json.dumps(data, separators=(",", ":"))) < 8_000_000
    assert seconds < 10, seconds


def _constant(values: np.ndarray, name: str = "c") -> onnx.NodeProto:
    return onnx.helper.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(values, name))


def test_a_constant_shows_its_values_and_the_one_fp16_cannot_hold(tmp_path):
    # The BatchNormalization variance PP-OCR's exporter holds in a Constant, one value beyond FP16's range.
    values = np.linspace(0.5, 12, 24).astype(np.float32)
    values[17] = 120_000.0
    nodes = [_constant(values, "var"), onnx.helper.make_node("Add", ["X", "var"], ["Y"])]
    graph = onnx.helper.make_graph(nodes, "g", [onnx.helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [24])],
                                   [onnx.helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [24])])
    ctx = _context(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)]), tmp_path / "c.onnx")
    [value] = node_details(ctx, "graph", 0)["attributes"]
    assert value["value"] == "tensor float32 24"  # the summary as before ...
    shown = value["values"]  # ... and the values themselves
    assert shown["count"] == 24 and shown["dims"] == [24] and shown["dtype"] == "float"
    assert shown["values"][:2] == ["0.5", "1"] and shown["values"][17] == "120000" and len(shown["values"]) == 24
    assert shown["max"] == "120000" and shown["min"] == "0.5"
    assert "1 of 24 value(s) exceed FP16's range ±65504 (largest magnitude 1.2e+05)" in shown["fp16"]


def test_values_are_bounded_big_tensors_say_their_range_and_external_data_is_never_read(tmp_path):
    rng = np.random.default_rng(0)
    big = rng.standard_normal(10_000).astype(np.float32)
    parts = [onnx.numpy_helper.from_array(np.full(4_000, k, np.int64), f"w{k}") for k in range(5)]
    external = onnx.TensorProto(name="far", data_type=onnx.TensorProto.FLOAT, dims=[1000],
                                data_location=onnx.TensorProto.EXTERNAL)
    for key, value in (("location", "missing.bin"), ("offset", "0"), ("length", "4000")):
        entry = external.external_data.add()
        entry.key, entry.value = key, value
    nodes = [_constant(big, "big"), onnx.helper.make_node("Concat", [f"w{k}" for k in range(5)], ["cat"], axis=0),
             onnx.helper.make_node("Add", ["X", "far"], ["Y"])]
    value, T = onnx.helper.make_tensor_value_info, onnx.TensorProto
    graph = onnx.helper.make_graph(nodes, "g", [value("X", T.FLOAT, [1000])],
                                   [value("Y", T.FLOAT, [1000]), value("cat", T.INT64, [20_000])], [*parts, external])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)])
    path = tmp_path / "bounded.onnx"
    onnx.save(model, path)
    from onnx_lint.lint.context import LintContext as Context
    from onnx_lint.model.load import read_unvalidated

    ctx = Context(read_unvalidated(path), str(path))  # its external file does not exist: never opened
    # 10,000 values: no list, its size and range instead.
    [value] = node_details(ctx, "graph", 0)["attributes"]
    shown = value["values"]
    assert "values" not in shown and shown["count"] == 10_000
    assert float(shown["min"]) == pytest.approx(float(big.min()), rel=1e-5)
    assert float(shown["max"]) == pytest.approx(float(big.max()), rel=1e-5)
    # Five initializers of 4,000 values: the node's budget sends the first four, the fifth says its range.
    inputs = node_details(ctx, "graph", 1)["inputs"]
    assert [len(i["values"].get("values", [])) for i in inputs] == [4_000] * 4 + [0]
    assert inputs[4]["values"]["min"] == inputs[4]["values"]["max"] == "4"
    # Stored outside the file: said, never read.
    [_x, far] = node_details(ctx, "graph", 2)["inputs"]
    assert far["initializer"] and far["values"]["note"] == "stored in external data: values not read"
    assert "values" not in far["values"] and "min" not in far["values"]


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path, push_capabilities())
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_the_server_answers_the_whole_graph_and_a_node_in_detail(client, tmp_path):
    path = tmp_path / "weak.onnx"
    onnx.save(defects.weakly_typed_mlp(), path)
    graph = await execute(client, "onnx-lint.modelGraph", path.as_uri())
    assert graph["nodes"] == len(defects.weakly_typed_mlp().graph.node)
    root = graph["graphs"][0]
    add = [root["ops"][o] for o in root["nodeOp"]].index("Add")
    details = await execute(client, "onnx-lint.graphNode", path.as_uri(), "graph", add)
    assert details["outputs"][0]["tensor"] == "Y" and details["outputs"][0]["derived"] == "float[batch, 8]"
    # The edges' shapes come with the graph, from the lint's own inference.
    y = root["tensors"].index("Y")
    assert root["shapes"][root["tensorShape"][y]] == "float[batch, 8]"
