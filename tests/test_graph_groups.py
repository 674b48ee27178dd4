"""The whole-graph view's overview groups: the model's own scopes, its repeated layers as one series,
chains cut into their repeats; and every finding of every rule has a place in the graph's columns."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from real_models import package_models
from rule_fixtures import FIXTURES

from benchmarks import models as bench
from onnx_lint.lint.context import LintContext
from onnx_lint.model.graphs import iter_scopes
from onnx_lint.model.load import read_model
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


def _linted(path: Path) -> dict:
    """The main graph as the server sends it after a lint: groups, and each tensor's shape from its inference."""
    ctx = LintContext(read_model(path), str(path))
    return model_graph(ctx.scopes, ctx)["graphs"][0]


def _cycles(graph: dict) -> list[str]:
    """Where a drawing of the groups would have a cycle: for each group (and the graph itself), the graph of its
    members (sub-groups collapsed, nodes as themselves) linked by the tensors between them must be acyclic. Any
    mix of collapsed and expanded groups is then acyclic too (a cycle among drawn boxes would show in the
    members of the innermost group holding all of it)."""
    parent, node_group = graph["groupParent"], graph["nodeGroup"]
    chains = []
    for g in node_group:
        chain = []
        while g >= 0:
            chain.append(g)
            g = parent[g]
        chains.append(chain[::-1])
    producer = {}
    for i, (start, end) in enumerate(zip([0, *graph["outputEnd"]], graph["outputEnd"])):
        for t in graph["outputs"][start:end]:
            producer[t] = i
    links: dict[int, set] = {}
    for i, (start, end) in enumerate(zip([0, *graph["inputEnd"]], graph["inputEnd"])):
        for t in graph["inputs"][start:end]:
            p = producer.get(t)
            if p is None or p == i:
                continue
            a, b = chains[p], chains[i]
            k = 0
            while k < len(a) and k < len(b) and a[k] == b[k]:
                k += 1
            level = a[k - 1] if k else -1
            here = ("group", a[k]) if k < len(a) else ("node", p)
            there = ("group", b[k]) if k < len(b) else ("node", i)
            links.setdefault(level, set()).add((here, there))
    found = []
    for level, pairs in links.items():
        after: dict = {}
        waiting: dict = {}
        for a, b in pairs:
            after.setdefault(a, []).append(b)
            waiting[b] = waiting.get(b, 0) + 1
            waiting.setdefault(a, 0)
        ready = [m for m, w in waiting.items() if not w]
        seen = 0
        while ready:
            m = ready.pop()
            seen += 1
            for b in after.get(m, []):
                waiting[b] -= 1
                if not waiting[b]:
                    ready.append(b)
        if seen < len(waiting):
            stuck = sorted(graph["groupLabel"][m[1]] if m[0] == "group" else f"node {m[1]}"
                           for m, w in waiting.items() if w)
            found.append(f"{graph['groupTitle'][level] if level >= 0 else 'the graph'}: {stuck[:6]}")
    return found


def _index_named(graph: dict) -> list[str]:
    """Groups named only by where they sit (``nodes 120–167``, a bare ``#0–520``): none should be."""
    return [label for label in graph["groupLabel"] if re.fullmatch(r"(nodes |#)\d+–\d+", label)]


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


def _ppocr_det() -> Path:
    path = next((p for p in package_models("rapidocr_onnxruntime") if "PP-OCRv4_det" in p.name), None)
    if path is None:
        pytest.skip("rapidocr_onnxruntime is not installed (tests/real-models.txt)")
    return path


def test_ppocr_det_opens_to_its_stages_named_by_spatial_size_and_no_box_points_back():
    # PP-OCRv4 det has no scopes (paddle2onnx's p2o.Conv.12) and a dynamic input (H and W unknown): its stages
    # are named relative to the input, from an inference with the input's size pinned.
    graph = _linted(_ppocr_det())
    _assert_well_formed(graph)
    assert _cycles(graph) == []
    assert _index_named(graph) == []
    top = [g for g in _tree(graph)[-1]]
    labels = [graph["groupLabel"][g] for g in top]
    # The backbone's stages, each halving the size, in the order data flows through them; then the neck's and
    # the head's, the last one back up to the input's size.
    assert all(graph["groupKind"][g] == "stage" for g in top), labels
    assert labels[:5] == ["stage H/2×W/2", "stage H/4×W/4", "stage H/8×W/8", "stage H/16×W/16", "stage H/32×W/32"]
    assert labels[-1] == "stage H/2×W/2→H×W", labels
    assert 5 <= len(top) + graph["nodeGroup"].count(-1) <= SHOW
    # Inside a stage, ranges say what they compute (the stage says the size).
    ranges = [graph["groupLabel"][g] for g, kind in enumerate(graph["groupKind"]) if kind == "range"]
    assert ranges and all(re.fullmatch(r"\w+, \w+, \w+(, …)?", label) for label in ranges), ranges
    # The repeated bottleneck is still found inside its stage.
    series = [g for g, kind in enumerate(graph["groupKind"]) if kind == "series"]
    assert any(graph["groupNote"][g] == "3 × 19 nodes" for g in series)


def test_a_committed_gpt2_export_keeps_its_scopes_and_draws_no_cycle():
    graph = _linted(EXPORTS / "optimum_gpt2_with_past.onnx")
    _assert_well_formed(graph)
    assert _cycles(graph) == []
    titles = _by_title(graph)
    assert "transformer/h.0" in titles and "transformer/h.0/attn" in titles


def test_a_bert_export_keeps_each_layer_whole_with_its_weights_aliases():
    # TorchScript exports alias every weight through an Identity in its module's scope, all at the top of the
    # file, ready before any computation: placed eagerly, they made "layer.0 (1/2)" of aliases alone beside
    # "layer.0 (2/2)" of the layer's arithmetic. Each constant now sits with the node that reads it.
    graph = _linted(EXPORTS / "ts_bert_tiny.onnx")
    _assert_well_formed(graph)
    assert _cycles(graph) == []
    labels = graph["groupLabel"]
    for layer in ("layer.0", "layer.1"):
        assert labels.count(layer) == 1 and not any(label.startswith(f"{layer} (") for label in labels), labels
    titles = _by_title(graph)
    assert {"encoder/layer.0/attention/self/query", "encoder/layer.1/output/LayerNorm"} <= set(titles), titles


def _deep_mlp(path: Path, layers: int) -> Path:
    """MatMul and Tanh, ``layers`` times: quantized, more nodes than one drawing holds."""
    rng = np.random.default_rng(0)
    nodes, weights, x = [], [], "X"
    for k in range(layers):
        weights.append(onnx.numpy_helper.from_array((rng.standard_normal((16, 16)) / 4).astype(np.float32), f"W{k}"))
        nodes.append(h.make_node("MatMul", [x, f"W{k}"], [f"m{k}"], name=f"mm{k}"))
        x = f"t{k}" if k < layers - 1 else "Y"
        nodes.append(h.make_node("Tanh", [f"m{k}"], [x], name=f"tanh{k}"))
    graph = h.make_graph(nodes, "deep", [h.make_tensor_value_info("X", T.FLOAT, ["n", 16])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["n", 16])], weights)
    onnx.save(h.make_model(graph, ir_version=10, opset_imports=[h.make_opsetid("", 21)]), path)
    return path


def test_a_model_quantize_wrote_keeps_each_op_with_its_qdq_island_and_draws_no_cycle(tmp_path):
    pytest.importorskip("onnxruntime")
    from onnx_lint.api import quantize

    source = _deep_mlp(tmp_path / "deep.onnx", 16)
    out = tmp_path / "deep.int8-fp16.onnx"
    data = [{"X": x} for x in np.random.default_rng(3).standard_normal((8, 1, 16)).astype(np.float32)]
    quantize(source, out, calibration_data=data, validation_samples=2, sensitivity_seconds=0)
    graph = _linted(out)
    assert len(graph["nodeOp"]) > SHOW and graph["groupParent"]  # too many to draw whole: grouped
    _assert_well_formed(graph)
    assert _cycles(graph) == []
    assert _index_named(graph) == []
    # Each INT8 MatMul sits in one box with its island: the DequantizeLinear nodes it reads and the
    # QuantizeLinear of its output.
    ops = [graph["ops"][o] for o in graph["nodeOp"]]
    producer, readers = {}, {}
    for i, (start, end) in enumerate(zip([0, *graph["outputEnd"]], graph["outputEnd"])):
        for t in graph["outputs"][start:end]:
            producer[t] = i
    for i, (start, end) in enumerate(zip([0, *graph["inputEnd"]], graph["inputEnd"])):
        for t in graph["inputs"][start:end]:
            readers.setdefault(t, []).append(i)
    islands = 0
    for i, op in enumerate(ops):
        if op != "MatMul":
            continue
        start, end = (graph["inputEnd"][i - 1] if i else 0), graph["inputEnd"][i]
        dq = [producer[t] for t in graph["inputs"][start:end] if ops[producer.get(t, i)] == "DequantizeLinear"]
        q = [r for t in graph["outputs"][(graph["outputEnd"][i - 1] if i else 0):graph["outputEnd"][i]]
             for r in readers.get(t, []) if ops[r] == "QuantizeLinear"]
        if dq:
            islands += 1
            assert {graph["nodeGroup"][n] for n in [i, *dq, *q]} == {graph["nodeGroup"][i]}, \
                [(ops[n], graph["nodeName"][n], graph["nodeGroup"][n]) for n in [i, *dq, *q]]
    assert islands >= 8


def test_ppocr_det_quantized_opens_to_the_same_stages_not_two_boxes_pointing_at_each_other(tmp_path):
    # Quantized, its Q/DQ nodes are named after tensors (conv2d_0.w_0_DequantizeLinear), which once made scopes
    # ("conv2d_0–134") whose two boxes pointed at each other, and its nodes come in the quantizer's order, the
    # backbone's and the neck's branches interleaved.
    pytest.importorskip("onnxruntime")
    from onnx_lint.api import quantize

    out = tmp_path / "det.int8-fp16.onnx"
    quantize(_ppocr_det(), out, validation_samples=2, sensitivity_seconds=0, input_shapes={"x": [1, 3, 320, 320]})
    graph = _linted(out)
    _assert_well_formed(graph)
    assert _cycles(graph) == []
    assert _index_named(graph) == []
    labels = [graph["groupLabel"][g] for g in _tree(graph)[-1]]
    assert labels[:5] == ["stage H/2×W/2", "stage H/4×W/4", "stage H/8×W/8", "stage H/16×W/16", "stage H/32×W/32"]
    assert all(label.startswith("stage ") for label in labels) and len(labels) <= 12, labels


def test_every_group_of_a_long_chain_points_one_way_and_ranges_say_what_they_hold():
    graph = _graph(bench.mlp_chain(2_000))
    _assert_well_formed(graph)
    assert _cycles(graph) == []
    assert _index_named(graph) == []
    ranges = [label for label, kind in zip(graph["groupLabel"], graph["groupKind"]) if kind == "range"]
    assert ranges and all(label.endswith(" of MatMul→Add→Relu→Add") for label in ranges), ranges[:3]


def test_a_scope_that_data_leaves_and_reenters_is_cut_into_parts_so_that_no_arrow_points_back():
    # Two scopes that feed each other: a/x -> b/y -> a/z. Drawn as two boxes they would point both ways.
    nodes = [h.make_node("Relu", ["X"], ["x"], name="/a/x"), h.make_node("Relu", ["x"], ["y"], name="/b/y"),
             h.make_node("Relu", ["y"], ["z"], name="/a/z"), h.make_node("Relu", ["z"], ["w"], name="/b/w"),
             h.make_node("Relu", ["x"], ["v"], name="/a/v"), h.make_node("Add", ["w", "v"], ["Y"], name="/b/add")]
    graph_proto = h.make_graph(nodes, "g", [h.make_tensor_value_info("X", T.FLOAT, [2])],
                               [h.make_tensor_value_info("Y", T.FLOAT, [2])])
    graph = _graph(h.make_model(graph_proto, opset_imports=[h.make_opsetid("", 18)]))
    _assert_well_formed(graph)
    assert _cycles(graph) == []
    # What stays in a box is still of its scope; the nodes data comes back through are drawn on their own.
    for g, label in enumerate(graph["groupLabel"]):
        names = [graph["nodeName"][i] for i, group in enumerate(graph["nodeGroup"]) if group == g]
        assert all(name.startswith(f"/{label[0]}/") for name in names), (label, names)
    assert graph["nodeGroup"].count(-1) >= 2


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
