"""The whole model as a graph for the editor: every graph compactly, one node in detail, over the server."""

from __future__ import annotations

from pathlib import Path

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
