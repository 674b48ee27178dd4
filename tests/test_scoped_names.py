"""Data propagation never crosses an If whose branches reuse tensor names (optimum's merged decoders).

Both branches of a merged decoder compute a Reshape target under the same names. ONNX's data
propagation keeps one value per name for the whole model: it fails in the second branch ("Data
for input 0 already exists") and shapes that branch with the first branch's target. ONNX Runtime,
run down each branch, is the ground truth.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnx.helper as h
import pytest
from onnx import TensorProto as T

from onnx_lint.engines import scoped_names

ort = pytest.importorskip("onnxruntime")


def _const(name, values):
    return h.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(np.array(values, np.int64)))


def _branch(tag: str, source: str, tail: list[int], declared) -> onnx.GraphProto:
    """b = Shape(x)[0:1]; s = Shape(source)[1:2]; t = Concat(b, s, tail); y = Relu(Reshape(source, t)).

    A nested If reads the branch's own ``s`` from the outer scope, as Loop bodies of decoders do.
    """
    inner = h.make_graph([h.make_node("Identity", ["s"], ["n"])], f"{tag}_inner", [],
                         [h.make_tensor_value_info("n", T.INT64, [1])])
    nodes = [h.make_node("Shape", ["x"], ["b"], start=0, end=1),
             h.make_node("Shape", [source], ["s"], start=1, end=2),
             _const("k", tail), h.make_node("Concat", ["b", "s", "k"], ["t"], axis=0),
             h.make_node("Reshape", [source, "t"], ["r"]), h.make_node("Relu", ["r"], ["y"]),
             h.make_node("If", ["flag"], ["length"], then_branch=inner, else_branch=inner)]
    return h.make_graph(nodes, tag, [], [h.make_tensor_value_info("y", T.FLOAT, declared),
                                         h.make_tensor_value_info("length", T.INT64, [1])])


def merged_decoder() -> onnx.ModelProto:
    """Two branches with the same tensor names: with the cache [batch, past, 2, 2], without [batch, seq, 4, 1]."""
    with_past = _branch("with_past", "past", [2, 2], ["batch", "past_sequence_length", 2, 2])
    without_past = _branch("without_past", "x", [4, 1], ["batch", "sequence_length", 4, 1])
    nodes = [h.make_node("Identity", ["use_cache_branch"], ["flag"]),
             h.make_node("If", ["use_cache_branch"], ["out", "length"], then_branch=with_past,
                         else_branch=without_past)]
    graph = h.make_graph(nodes, "merged", [
        h.make_tensor_value_info("use_cache_branch", T.BOOL, [1]),
        h.make_tensor_value_info("x", T.FLOAT, ["batch", "sequence_length", 4]),
        h.make_tensor_value_info("past", T.FLOAT, ["batch", "past_sequence_length", 4])],
        [h.make_tensor_value_info("out", T.FLOAT, ["batch", "out_length", None, None]),
         h.make_tensor_value_info("length", T.INT64, [1])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _run(path, cache: bool, batch: int, seq: int, past: int) -> list[tuple[int, ...]]:
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    feeds = {"use_cache_branch": np.array([cache]), "x": np.ones((batch, seq, 4), np.float32),
             "past": np.ones((batch, past, 4), np.float32)}
    return [o.shape for o in session.run(None, feeds)]


def _branch_graph(model: onnx.ModelProto, branch: str) -> onnx.GraphProto:
    return next(a.g for a in model.graph.node[1].attribute if a.name == branch)


def _branch_output(model: onnx.ModelProto, branch: str) -> onnx.ValueInfoProto:
    return _branch_graph(model, branch).output[0]


def _reshaped_tail(model: onnx.ModelProto, branch: str) -> list[int]:
    """The last two dims inference derived for the branch's Reshape output ``r``."""
    value = next(v for v in _branch_graph(model, branch).value_info if v.name == "r")
    return [d.dim_value for d in value.type.tensor_type.shape.dim[2:]]


def test_onnx_data_propagation_leaks_between_branches_that_share_names():
    """The engine's own failure, which the linter must not inherit."""
    model = merged_decoder()
    with pytest.raises(Exception, match="already exists"):
        onnx.shape_inference.infer_shapes(model, data_prop=True, strict_mode=True)
    leaked = onnx.shape_inference.infer_shapes(model, data_prop=True)
    assert _reshaped_tail(leaked, "else_branch") == [2, 2]  # the with-past branch's target, in the other one


def test_separated_names_propagate_per_branch_and_restore():
    model = merged_decoder()
    separated = onnx.ModelProto()
    separated.CopyFrom(model)
    assert scoped_names.separate(separated) > 0
    inferred = onnx.shape_inference.infer_shapes(separated, data_prop=True, strict_mode=True)
    scoped_names.restore(inferred)
    for branch, tail in (("then_branch", [2, 2]), ("else_branch", [4, 1])):
        assert _branch_output(inferred, branch).name == "y"
        assert _reshaped_tail(inferred, branch) == tail
    names = {n for node in inferred.graph.node[1].attribute[0].g.node for n in [*node.input, *node.output]}
    assert not any(scoped_names.MARK in n for n in names)


def test_merged_decoder_lints_clean_and_fix_writes_nothing(cli, save):
    path = save(merged_decoder())
    # ONNX Runtime at two sizes per branch: each branch gives what it declares.
    assert _run(path, True, 2, 3, 5)[0] == (2, 5, 2, 2) and _run(path, True, 1, 4, 9)[0] == (1, 9, 2, 2)
    assert _run(path, False, 2, 3, 5)[0] == (2, 3, 4, 1) and _run(path, False, 1, 4, 9)[0] == (1, 4, 4, 1)
    run = cli("check", str(path), "--output-format", "json")
    assert run.code == 0, run.out
    assert not [d for d in run.json() if d["code"] in ("OL002", "OL003", "OL005")]
    before = path.read_bytes()
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == before


def test_a_real_conflict_inside_a_branch_is_still_found(cli, save):
    """Separating names must not hide a branch that declares what it does not compute."""
    model = merged_decoder()
    dims = _branch_output(model, "else_branch").type.tensor_type.shape.dim
    dims[3].dim_value = 3  # the branch computes 1
    path = save(model)
    [diag] = [d for d in cli("check", str(path), "--output-format", "json").json() if d["code"] == "OL002"]
    assert "else_branch" in diag["location"]["path"] and "declared 3 but the graph computes 1" in diag["message"]
    assert cli("check", str(path), "--fix").code == 0
    fixed = onnx.load(path)
    assert [d.dim_value for d in _branch_output(fixed, "else_branch").type.tensor_type.shape.dim[2:]] == [4, 1]
    assert _run(path, False, 2, 3, 5)[0] == (2, 3, 4, 1)


# -- a real merged decoder: optimum's If over a tiny random GPT-2 (tests/exports/make_merged_decoder.py) --
MERGED = Path(__file__).resolve().parent / "exports" / "optimum_gpt2_merged.onnx"


def _decoder_feeds(cache: bool, batch: int, seq: int, past: int) -> dict[str, np.ndarray]:
    positions = np.arange(past, past + seq) if cache else np.arange(seq)
    cached = past if cache else 1  # the without-cache branch ignores what it is given
    return {"input_ids": np.zeros((batch, seq), np.int64),
            "attention_mask": np.ones((batch, past + seq if cache else seq), np.int64),
            "position_ids": np.tile(positions, (batch, 1)).astype(np.int64),
            "past_key_values.0.key": np.zeros((batch, 2, cached, 4), np.float32),
            "past_key_values.0.value": np.zeros((batch, 2, cached, 4), np.float32),
            "use_cache_branch": np.array([cache])}


def test_optimum_merged_decoder_has_no_false_finding_and_its_declarations_hold(cli, tmp_path):
    """Before, data propagation leaked across the branches: an OL003 warning ('shape input must be 1D
    tensor') on the without-cache branch's Expand, on tensors plain inference types."""
    path = tmp_path / MERGED.name
    path.write_bytes(MERGED.read_bytes())
    model = onnx.load(path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for cache, batch, seq, past in [(False, 2, 3, 0), (False, 1, 5, 0), (True, 2, 1, 4), (True, 3, 2, 6)]:
        sizes = {"batch_size": batch, "sequence_length": seq, "past_sequence_length + sequence_length": past + seq}
        got = session.run(None, _decoder_feeds(cache, batch, seq, past))
        for value, array in zip(model.graph.output, got):
            declared = [d.dim_value or sizes[d.dim_param] for d in value.type.tensor_type.shape.dim]
            assert list(array.shape) == declared, (value.name, cache)
    run = cli("check", str(path), "--output-format", "json")
    assert run.code == 0, run.out
    assert {d["code"] for d in run.json()} <= {"OL105"}  # the two branches share node names: an info note
    before = path.read_bytes()
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == before
