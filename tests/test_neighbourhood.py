"""The neighbourhood of a finding: what the editor draws, and that it stays bounded on 100k-node graphs."""

from __future__ import annotations

import time
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from benchmarks import models as bench
from examples import defects
from onnx_lint.lint.diagnostics import Location
from onnx_lint.lint.linter import lint_file
from onnx_lint.lint.neighbourhood import MAX_NODES, GraphIndex, finding_graph, neighbourhood, split_location
from onnx_lint.rules import ALL_RULES


def _lint(model: onnx.ModelProto, tmp_path: Path, name: str = "m.onnx"):
    path = tmp_path / name
    onnx.save(model, path)
    result, ctx = lint_file(path, str(path), ALL_RULES, lambda code: True)
    assert ctx is not None
    return result.diagnostics, ctx


@pytest.fixture(scope="module")
def chain_100k() -> onnx.GraphProto:
    graph = bench.mlp_chain(100_000).graph
    assert len(graph.node) == 100_000
    return graph


def test_extraction_on_a_100k_node_graph_visits_only_its_budget(chain_100k):
    index = GraphIndex.build(chain_100k)
    middle = len(chain_100k.node) // 2
    started = time.perf_counter()
    hood = neighbourhood(chain_100k, index, nodes=[middle])
    elapsed = time.perf_counter() - started
    assert 1 < len(hood.nodes) <= MAX_NODES
    assert hood.examined <= MAX_NODES  # each drawn node is expanded once; nothing else is touched
    assert hood.nodes[0] == middle
    assert elapsed < 0.05, elapsed  # independent of the graph's size: a few dictionary lookups


def test_a_tensor_feeding_every_layer_is_capped_by_the_fanout(chain_100k):
    # 'W' (an initializer) feeds all 25,000 MatMuls: starting from it must not walk them all.
    index = GraphIndex.build(chain_100k)
    assert len(index.consumers["W"]) == 25_000
    hood = neighbourhood(chain_100k, index, tensors=["W"], max_nodes=10)
    assert len(hood.nodes) <= 10 and hood.examined <= 10


def test_a_node_with_100k_consumers_reports_what_it_left_out():
    fan = [h.make_node("Relu", ["X"], ["r"], name="source")]
    fan += [h.make_node("Neg", ["r"], [f"n{i}"], name=f"neg{i}") for i in range(100_000)]
    graph = h.make_graph(fan, "fan", [h.make_tensor_value_info("X", T.FLOAT, [2])],
                         [h.make_tensor_value_info("n0", T.FLOAT, [2])])
    index = GraphIndex.build(graph)
    started = time.perf_counter()
    hood = neighbourhood(graph, index, nodes=[0], max_nodes=8, max_fanout=6)
    assert time.perf_counter() - started < 0.05
    assert hood.nodes[0] == 0 and len(hood.nodes) == 7  # the source and the first 6 consumers
    assert hood.hidden[0] == 100_000 - 6 and hood.truncated


def test_depth_bounds_the_walk_along_a_chain():
    nodes = [h.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"r{i}") for i in range(50)]
    graph = h.make_graph(nodes, "chain", [h.make_tensor_value_info("t0", T.FLOAT, [1])],
                         [h.make_tensor_value_info("t50", T.FLOAT, [1])])
    hood = neighbourhood(graph, GraphIndex.build(graph), nodes=[25], depth=2)
    assert sorted(hood.nodes) == [23, 24, 25, 26, 27]
    assert hood.hidden == {23: 1, 27: 1}


def test_split_location_finds_the_graph_of_subgraph_items():
    assert split_location("graph/output[0]") == ("graph", "output", 0)
    assert split_location("graph/node[4]/then_branch/value_info[12]") == ("graph/node[4]/then_branch", "value_info", 12)
    assert split_location("graph") == ("graph", None, None)


def test_stale_rank_zero_output_is_drawn_with_declared_and_derived(tmp_path):
    diagnostics, ctx = _lint(defects.weakly_typed_mlp(), tmp_path)
    ol001 = next(d for d in diagnostics if d.code == "OL001")
    drawing = finding_graph(ctx, ol001.location)
    nodes = {n["id"]: n for n in drawing["nodes"]}
    assert nodes["output:Y"]["focus"] and nodes["output:Y"]["kind"] == "output"
    edge = next(e for e in drawing["edges"] if e["tensor"] == "Y")
    assert edge["to"] == "output:Y" and edge["stale"] and edge["focus"]
    assert (edge["declared"], edge["derived"], edge["engine"]) == ("float", "float[batch, 8]", "onnxruntime-symbolic")
    producer = nodes[edge["from"]]
    assert producer["focus"] and producer["op"] == "Add"  # the node computing the stale output is highlighted
    # Its producers are drawn a few steps back, with what inference derived for the tensors between them.
    assert {"MatMul", "Gelu"} <= {n["op"] for n in drawing["nodes"]}
    hidden = next(e for e in drawing["edges"] if e["tensor"] == "hidden")
    assert (hidden["declared"], hidden["derived"], hidden["stale"]) == (None, "float[batch, 32]", False)


def test_stale_value_info_marks_its_edge_between_producer_and_consumer(tmp_path):
    diagnostics, ctx = _lint(defects.stale_value_info(), tmp_path)
    ol005 = next(d for d in diagnostics if d.code == "OL005")
    drawing = finding_graph(ctx, ol005.location)
    stale = [e for e in drawing["edges"] if e["stale"]]
    assert [(e["tensor"], e["declared"], e["derived"]) for e in stale] == [("h", "float[batch, 8]", "float[batch, 4]")]
    assert stale[0]["from"].startswith("node:") and stale[0]["to"].startswith("node:")


def test_untyped_root_cause_highlights_the_node_and_the_untyped_tensors(tmp_path):
    diagnostics, ctx = _lint(defects.topk_untyped(), tmp_path)
    ol003 = next(d for d in diagnostics if d.code == "OL003")
    drawing = finding_graph(ctx, ol003.location)
    focus = [n for n in drawing["nodes"] if n["focus"]]
    assert [n["op"] for n in focus] == ["TopK"]
    untyped = {e["tensor"]: e for e in drawing["edges"] if e["derived"] == "<no type>"}
    assert set(untyped) == {"values", "indices"}
    assert all(e["stale"] and e["engine"] == "onnx" for e in untyped.values())


def test_a_finding_inside_a_subgraph_is_drawn_in_that_subgraph(tmp_path):
    diagnostics, ctx = _lint(defects.if_branch_stale(), tmp_path)
    inner = next(d for d in diagnostics if "then_branch" in d.location.path)
    drawing = finding_graph(ctx, inner.location)
    assert drawing["graph"].endswith("then_branch")
    assert any(n["label"] == "then_out" and n["focus"] for n in drawing["nodes"])


def test_a_weakly_typed_benchmark_model_draws_within_the_budget(tmp_path):
    diagnostics, ctx = _lint(bench.weakly_typed(bench.mlp_chain(2000), stale_value_info=20), tmp_path)
    findings = [d for d in diagnostics if d.code in ("OL001", "OL005")]
    assert len(findings) > 10
    for diagnostic in findings[:5]:
        drawing = finding_graph(ctx, diagnostic.location)
        assert sum(n["kind"] == "node" for n in drawing["nodes"]) <= MAX_NODES
        assert any(e["stale"] for e in drawing["edges"])


def test_drawings_of_one_model_index_its_graph_once(tmp_path):
    diagnostics, ctx = _lint(bench.weakly_typed(bench.mlp_chain(400), stale_value_info=5), tmp_path)
    indexes: dict = {}
    first = finding_graph(ctx, diagnostics[0].location, indexes=indexes)
    [(path, index)] = indexes.items()
    second = finding_graph(ctx, diagnostics[1].location, indexes=indexes)
    assert indexes == {path: index} and first != second


def test_a_finding_about_an_initializer_draws_it_feeding_its_consumers(tmp_path):
    _diagnostics, ctx = _lint(defects.weakly_typed_mlp(), tmp_path)
    drawing = finding_graph(ctx, Location("graph/initializer[0]", tensor="W1"))
    [w1] = [n for n in drawing["nodes"] if n["kind"] == "initializer"]
    assert w1["label"] == "W1" and w1["focus"]
    [edge] = [e for e in drawing["edges"] if e["from"] == w1["id"]]
    assert edge["tensor"] == "W1" and edge["focus"] and drawing["nodes"][0]["op"] == "MatMul"
    assert not any(n["label"] == "W2" for n in drawing["nodes"])  # weights nobody asked about stay out


def test_an_unknown_graph_path_is_refused(tmp_path):
    _diagnostics, ctx = _lint(defects.healthy_matmul(), tmp_path)
    with pytest.raises(ValueError, match="no graph"):
        finding_graph(ctx, Location("graph/node[9]/body/output[0]", tensor="y"))
