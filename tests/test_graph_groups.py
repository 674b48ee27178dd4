"""The whole-graph view's overview groups: the model's own scopes, its repeated layers as one series,
chains cut into their repeats; and every finding of every rule has a place in the graph's columns."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from real_models import package_models
from rule_fixtures import FIXTURES

from benchmarks import models as bench
from onnx_lint.model.graphs import iter_scopes
from onnx_lint.server.graph_data import model_graph
from onnx_lint.server.graph_groups import SHOW, name_scope, torch_scopes

EXPORTS = Path(__file__).parent / "exports"


def _graph(model: onnx.ModelProto) -> dict:
    return model_graph(list(iter_scopes(model)))["graphs"][0]


def _tree(graph: dict) -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for g, parent in enumerate(graph["groupParent"]):
        children.setdefault(parent, []).append(g)
    return children


def _by_title(graph: dict) -> dict[str, int]:
    return {title: g for g, title in enumerate(graph["groupTitle"])}


def _assert_well_formed(graph: dict) -> None:
    """Parents numbered first, sizes that add up, at most SHOW members drawn in any one place."""
    n = len(graph["nodeOp"])
    assert len(graph["nodeGroup"]) == n
    assert all(parent < g for g, parent in enumerate(graph["groupParent"]))
    size = [0] * len(graph["groupParent"])
    direct = {}
    for g in graph["nodeGroup"]:
        direct[g] = direct.get(g, 0) + 1
        while g >= 0:
            size[g] += 1
            g = graph["groupParent"][g]
    assert size == graph["groupSize"]
    for parent, children in _tree(graph).items():
        assert len(children) + direct.get(parent, 0) <= SHOW, graph["groupTitle"][parent]
    assert len(set(graph["groupTitle"])) == len(graph["groupTitle"])


def _decoder(layers: int, name_of) -> onnx.ModelProto:
    """A tiny decoder named the way an exporter names it: ``name_of(layer, module, op)``."""
    nodes = [h.make_node("Gather", ["embed_w", "ids"], ["h"], name=name_of(None, "embed_tokens", "Gather"))]
    prev = "h"
    for k in range(layers):
        p = f"l{k}_"
        nodes += [
            h.make_node("MatMul", [prev, "wq"], [p + "q"], name=name_of(k, "self_attn/q_proj", "MatMul")),
            h.make_node("MatMul", [prev, "wk"], [p + "k"], name=name_of(k, "self_attn/k_proj", "MatMul")),
            h.make_node("Mul", [p + "q", p + "k"], [p + "s"], name=name_of(k, "self_attn", "Mul")),
            h.make_node("Softmax", [p + "s"], [p + "a"], name=name_of(k, "self_attn", "Softmax")),
            h.make_node("MatMul", [p + "a", "wo"], [p + "o"], name=name_of(k, "self_attn/o_proj", "MatMul")),
            h.make_node("Add", [prev, p + "o"], [p + "out"], name=name_of(k, "", "Add")),
        ]
        prev = p + "out"
    nodes.append(h.make_node("MatMul", [prev, "head_w"], ["logits"], name=name_of(None, "lm_head", "MatMul")))
    weights = [h.make_tensor(n, T.FLOAT, [4, 4], [0.0] * 16) for n in ("embed_w", "wq", "wk", "wo", "head_w")]
    graph = h.make_graph(nodes, "decoder", [h.make_tensor_value_info("ids", T.INT64, [1, 4])],
                         [h.make_tensor_value_info("logits", T.FLOAT, None)], weights)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])


def _torch_name(layer, module, op):
    scope = "/model" + (f"/layers.{layer}" if layer is not None else "") + (f"/{module}" if module else "")
    return f"{scope}/{op}"


def test_names_split_into_scopes_as_exporters_write_them():
    assert name_scope("/model/layers.3/self_attn/q_proj/MatMul") == ("model", "layers.3", "self_attn", "q_proj")
    assert name_scope("StatefulPartitionedCall/model/dense/MatMul") == ("StatefulPartitionedCall", "model", "dense")
    assert name_scope("encoder.layer.0.attention.MatMul") == ("encoder", "layer.0", "attention")
    assert name_scope("MatMul_12") == () and name_scope("") == ()
    assert torch_scopes("['', 'model', 'model.layers.0', 'model.layers.0.self_attn', 'sdpa_3']") == \
        ("model", "layers.0", "self_attn")


def test_torch_scopes_group_a_decoder_into_its_layers_shown_as_one_series():
    graph = _graph(_decoder(4, _torch_name))
    _assert_well_formed(graph)
    titles = _by_title(graph)
    # model > layers.0–3 (a series of 4 alike layers) > layers.k > self_attn; one-node scopes dissolve.
    series = titles["model/layers.0–3"]
    assert graph["groupKind"][series] == "series" and graph["groupLabel"][series] == "layers.0–3"
    assert graph["groupNote"][series] == "4 × 6 nodes" and graph["groupSize"][series] == 24
    attention = titles["model/layers.3/self_attn"]
    assert graph["groupParent"][attention] == titles["model/layers.3"]
    assert graph["groupParent"][titles["model/layers.3"]] == series
    q_proj = next(i for i, n in enumerate(graph["nodeName"]) if n == "/model/layers.3/self_attn/q_proj/MatMul")
    assert graph["nodeGroup"][q_proj] == attention  # a one-node scope is its node
    assert "model/lm_head" not in titles and "model/embed_tokens" not in titles


def test_a_dynamo_export_groups_by_its_name_scopes_metadata():
    def dynamo_name(layer, module, op):
        return f"node_{op}_{layer}_{module.replace('/', '-')}"

    model = _decoder(3, dynamo_name)
    for node in model.graph.node:
        _op, layer, module = node.name.split("_", 3)[1:]
        paths = ["", "model"]
        if layer != "None":
            paths.append(f"model.layers.{layer}")
        for part in filter(None, module.split("-")):
            paths.append(f"{paths[-1]}.{part}")
        entry = node.metadata_props.add()
        entry.key, entry.value = "pkg.torch.onnx.name_scopes", repr([*paths, "fx_node_7"])
    graph = _graph(model)
    _assert_well_formed(graph)
    titles = _by_title(graph)
    assert graph["groupNote"][titles["model/layers.0–2"]] == "3 × 6 nodes"
    assert "model/layers.1/self_attn" in titles


def test_unscoped_constants_join_the_scope_their_consumers_share():
    model = _decoder(3, _torch_name)
    nodes = list(model.graph.node)
    # An exporter's Constant, unnamed, hoisted to the top, read by layer 1's Mul only.
    constant = h.make_node("Constant", [], ["c"], value=h.make_tensor("v", T.FLOAT, [], [2.0]))
    mul = next(n for n in nodes if n.name == "/model/layers.1/self_attn/Mul")
    mul.input[1] = "c"
    del model.graph.node[:]
    model.graph.node.extend([constant, *nodes])
    graph = _graph(model)
    titles = _by_title(graph)
    assert graph["nodeGroup"][0] == titles["model/layers.1/self_attn"]
    # Ordered by where each layer ends, the hoisted constant does not pull layer 1 ahead of layer 0.
    series = titles["model/layers.0–2"]
    assert [graph["groupLabel"][g] for g in _tree(graph)[series]] == ["layers.0", "layers.1", "layers.2"]


def test_a_tool_prefix_shared_by_every_name_is_no_scope():
    # paddle2onnx names nodes "p2o.Add.68": one "scope" over every named node says nothing.
    model = bench.mlp_chain(40)
    for i, node in enumerate(model.graph.node):
        node.name = f"p2o.{node.op_type}.{i}"
    graph = _graph(model)
    assert "p2o" not in graph["groupTitle"]


def test_unnamed_chains_collapse_into_their_repeats_at_100k_nodes():
    graph = _graph(bench.mlp_chain(100_000))
    _assert_well_formed(graph)
    top = _tree(graph)[-1]
    [chain] = [g for g in top if graph["groupKind"][g] == "series"]
    assert graph["groupLabel"][chain] == "MatMul→Add→Relu→Add"
    # Every node is in it: the first repeat, cut differently (its input is the graph's), is found too.
    assert graph["groupNote"][chain] == "25,000 × 4 nodes" and graph["groupSize"][chain] == 100_000
    # The series opens to ranges of its repeats, each repeat one MatMul, Add, Relu, Add.
    first_range = _tree(graph)[chain][0]
    assert graph["groupLabel"][first_range].startswith("#0–")
    repeat = next(g for g, kind in enumerate(graph["groupKind"]) if kind == "repeat")
    members = [i for i, g in enumerate(graph["nodeGroup"]) if g == repeat]
    assert [graph["ops"][graph["nodeOp"][i]] for i in members] == ["MatMul", "Add", "Relu", "Add"]
    transformer = _graph(bench.transformer_blocks(2_200))
    [blocks] = [g for g in _tree(transformer)[-1] if transformer["groupKind"][g] == "series"]
    assert transformer["groupNote"][blocks].endswith(" × 22 nodes")


def test_a_committed_torch_export_groups_by_its_scopes():
    graph = _graph(onnx.load(EXPORTS / "optimum_gpt2_with_past.onnx", load_external_data=False))
    _assert_well_formed(graph)
    titles = _by_title(graph)
    assert "transformer/h.0" in titles and "transformer/h.0/attn" in titles
    assert graph["groupSize"][titles["transformer/h.0"]] > 100


def test_ppocr_det_without_names_opens_to_a_few_dozen_boxes():
    path = next((p for p in package_models("rapidocr_onnxruntime") if "PP-OCRv4_det" in p.name), None)
    if path is None:
        pytest.skip("rapidocr_onnxruntime is not installed (tests/real-models.txt)")
    graph = _graph(onnx.load(path))
    _assert_well_formed(graph)
    top = _tree(graph)[-1]
    assert 5 <= len(top) + graph["nodeGroup"].count(-1) <= SHOW
    # Its 234 Constants, all at the top of the file, sit with the nodes that read them: no box holds
    # constants only, and no range reaches back to the top of the file.
    constant = graph["ops"].index("Constant")
    for g in top:
        members = [i for i, group in enumerate(graph["nodeGroup"]) if group == g or graph["groupParent"][group] == g]
        assert any(graph["nodeOp"][i] != constant for i in members), graph["groupLabel"][g]
    assert not any(graph["groupLabel"][g].startswith("nodes 0–") for g in top)
    # Its repeated blocks (a hard-swish bottleneck, 19 nodes) are found without any name.
    series = [g for g, kind in enumerate(graph["groupKind"]) if kind == "series"]
    assert any(graph["groupNote"][g] == "3 × 19 nodes" for g in series), [graph["groupNote"][g] for g in series]


# -- every finding has a place ------------------------------------------------------------------------

def _place(graphs: dict[str, dict], location: dict) -> str:
    """What the view does with a finding's location (wholeGraph.ts, WholeGraph.locate), on the columns the
    server sends: the kind of place it lands on, or why it has none."""
    path = location["path"]
    if not (path == "graph" or path.startswith("graph/")):
        return "not a graph element"
    graph_path, _, item = path.rpartition("/") if path.endswith("]") else (path, "", "")
    graph = graphs[graph_path]
    kind = item.split("[")[0]
    tensors = graph["tensors"]
    if kind == "node":
        assert int(item[5:-1]) < len(graph["nodeOp"])
        return "node"
    if not kind and not location["tensor"] and not location["node"]:
        return "not a graph element"  # the graph as a whole (an inference budget, the checker's verdict)
    if not kind and location["node"]:
        assert location["node"] in graph["nodeName"]
        return "named node"
    tensor = tensors.index(location["tensor"]) if location["tensor"] in tensors else None
    if kind == "initializer":
        assert tensor is not None and tensor in graph["initializers"]
        assert tensor in graph["inputs"], "an initializer is shown by the nodes that read it"
        return "initializer"
    assert kind in ("input", "output", "value_info", ""), path
    if tensor is None:
        return "tensor not in the graph"
    if tensor in graph["outputs"] or tensor in graph["graphInputs"] or tensor in graph["graphOutputs"]:
        return kind or "tensor"  # its producer, or the graph's input or output drawn for it
    assert tensor in graph["inputs"]
    return "tensor read"  # undefined, yet read: its first reader


def test_every_rules_findings_land_on_a_graph_element_or_say_they_are_none(cli, tmp_path):
    seen: dict[str, set[str]] = {}
    for code, fixture in sorted(FIXTURES.items()):
        for name, build in {"bad": fixture.bad, **fixture.variants}.items():
            model = build()
            path = tmp_path / f"{code}-{name}.onnx"
            path.write_bytes(model if isinstance(model, bytes) else model.SerializeToString())
            found = cli("check", path.name, "--no-cache", "--output-format", "json", *fixture.args,
                        cwd=tmp_path).json()
            graphs = {} if isinstance(model, bytes) else {g["path"]: g for g in model_graph(
                list(iter_scopes(model)))["graphs"]}
            for d in found:
                seen.setdefault(d["code"], set()).add(_place(graphs, d["location"]))
    lands = {kind for kinds in seen.values() for kind in kinds}
    assert {"node", "initializer", "output", "not a graph element"} <= lands, seen
    assert seen["OL201"] >= {"initializer"}  # an fp16 overflow in a weight
    assert seen["OL000"] == {"not a graph element"}  # the unreadable file itself
    assert seen["OL106"] == {"not a graph element"}  # an opset import the runtime cannot load
    # Only an orphan value_info names a tensor the graph has not: "Show in graph" says it is not there.
    assert {code for code, kinds in seen.items() if "tensor not in the graph" in kinds} == {"OL110"}
