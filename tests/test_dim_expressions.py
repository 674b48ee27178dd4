"""Issue 22, items 1 and 3: dim names that read as expressions are claims, and a refuted name
becomes the expression the graph computes.

Ground truth is ONNX Runtime (tests/truth.py, which evaluates the names with sympy, not with
onnx-lint's parser): a declaration is right when every run returns the size its name claims.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from conftest import output_dims
from onnx import TensorProto as T
from onnx import helper as h
from truth import runtime_violations

from onnx_lint.model.dim_expressions import parse_dim_expression

TOTAL = "past_sequence_length + sequence_length"


def decoder_with_past(present_dim: str = TOTAL, mask_dim: str = TOTAL) -> onnx.ModelProto:
    """A cache update as optimum's decoder-with-past exports name it.

    ``present = Concat(past, new, axis=2)``: the graph computes past + seq on dim 2, which optimum
    declares ``past_sequence_length + sequence_length``, the name it also gives the attention mask.
    """
    shape = onnx.numpy_helper.from_array(np.array([1, 2, 1, 4], dtype="int64"), "expand_to")
    nodes = [
        h.make_node("Cast", ["input_ids"], ["ids"], to=T.FLOAT),
        h.make_node("Unsqueeze", ["ids", "axes"], ["ids4"]),
        h.make_node("Expand", ["ids4", "expand_to"], ["new"]),
        h.make_node("Concat", ["past", "new"], ["present"], axis=2),
        h.make_node("Cast", ["attention_mask"], ["mask"], to=T.FLOAT),
    ]
    axes = onnx.numpy_helper.from_array(np.array([1, 3], dtype="int64"), "axes")
    inputs = [
        h.make_tensor_value_info("input_ids", T.INT64, ["batch_size", "sequence_length"]),
        h.make_tensor_value_info("attention_mask", T.INT64, ["batch_size", mask_dim]),
        h.make_tensor_value_info("past", T.FLOAT, ["batch_size", 2, "past_sequence_length", 4]),
    ]
    outputs = [
        h.make_tensor_value_info("present", T.FLOAT, ["batch_size", 2, present_dim, 4]),
        h.make_tensor_value_info("mask", T.FLOAT, ["batch_size", mask_dim]),
    ]
    graph = h.make_graph(nodes, "decoder", inputs, outputs, [shape, axes])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def test_optimum_total_length_name_is_confirmed_silent_and_kept(cli, save):
    path = save(decoder_with_past())
    before = path.read_bytes()
    assert runtime_violations(path) == []  # ONNX Runtime returns past + seq: the declaration is right
    run = cli("check", str(path), "--output-format", "json")
    assert run.json() == [] and run.code == 0
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("declared", "claim", "fixed"),
    [
        ("sequence_length + 1", "declared 'sequence_length + 1' (= 42 when 'sequence_length' is 41) but the "
                                "graph computes 84", TOTAL),
        ("2*past_sequence_length", "(= 86 when 'past_sequence_length' is 43) but the graph computes 84", TOTAL),
        ("past_sequence_length - sequence_length", "but the graph computes 84", TOTAL),
    ],
    ids=["seq-plus-one", "twice-past", "difference"],
)
def test_a_wrong_expression_is_an_error_naming_both_values_and_the_fix_writes_what_the_graph_computes(
        cli, save, declared, claim, fixed):
    path = save(decoder_with_past(present_dim=declared))
    assert runtime_violations(path)  # ONNX Runtime contradicts the expression
    run = cli("check", str(path), "--output-format", "json")
    [diag] = run.json()
    assert run.code == 1 and diag["code"] == "OL002" and diag["severity"] == "error"
    assert claim in diag["message"], diag["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == ["batch_size", 2, fixed, 4]
    assert output_dims(path, 1) == ["batch_size", TOTAL]  # the confirmed name stays
    assert runtime_violations(path) == []
    assert cli("check", str(path), "--output-format", "json").json() == []


def test_a_refuted_name_that_no_affine_expression_fits_gets_a_name_saying_where_it_comes_from(cli, save):
    """Y = Reshape(X, [-1]): batch*seq is not affine, so the fix writes a fresh name of Y's own."""
    shape = onnx.numpy_helper.from_array(np.array([-1], dtype="int64"), "shape")
    graph = h.make_graph([h.make_node("Reshape", ["X", "shape"], ["Y"])], "g",
                         [h.make_tensor_value_info("X", T.FLOAT, ["batch", "seq"])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["seq + 1"])], [shape])
    path = save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8))
    assert runtime_violations(path)
    [diag] = cli("check", str(path), "--output-format", "json").json()
    assert diag["code"] == "OL002" and "declared 'seq + 1'" in diag["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == ["Y_dim0"]
    assert runtime_violations(path) == []


def _outer(declared: str) -> onnx.ModelProto:
    """Y = MatMul(Unsqueeze(float(Shape(X))), U2): [2, k] computed, dim 1 declared ``declared``."""
    graph = h.make_graph([h.make_node("Shape", ["X"], ["S"]), h.make_node("Cast", ["S"], ["F"], to=T.FLOAT),
                          h.make_node("Unsqueeze", ["F", "axes"], ["U"]),
                          h.make_node("MatMul", ["U", "U2"], ["Y"])], "g",
                         [h.make_tensor_value_info("X", T.FLOAT, ["batch", "seq"]),
                          h.make_tensor_value_info("U2", T.FLOAT, [1, "k"])],
                         [h.make_tensor_value_info("Y", T.FLOAT, [2, declared])],
                         [onnx.numpy_helper.from_array(np.array([1], dtype="int64"), "axes")])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize(
    "declared",
    ["unk__3 + 1",  # an expression of a name no input carries: a rename
     "seq**2"],  # outside the grammar: a plain name
    ids=["foreign-name", "power"],
)
def test_names_that_claim_nothing_checkable_stay_silent(cli, save, declared):
    path = save(_outer(declared))
    before = path.read_bytes()
    run = cli("check", str(path), "--output-format", "json")
    assert run.json() == [] and run.code == 0
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == before


def test_ultralytics_float_expressions_are_judged_without_a_crash(cli, save):
    """``floor(2.0*floor(seq/32))`` is exact arithmetic here (2 when seq is 43); the graph computes k."""
    path = save(_outer("floor(2.0*floor(seq/32))"))
    assert runtime_violations(path)
    [diag] = cli("check", str(path), "--output-format", "json").json()
    assert diag["code"] == "OL002"
    assert "declared 'floor(2.0*floor(seq/32))' (= 2 when 'seq' is" in diag["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == [2, "k"]
    assert runtime_violations(path) == []


def test_floor_expressions_of_convolutions_are_confirmed(cli, save):
    """A stride-2 conv over h: the graph computes floor((h - 1)/2) + 1, which ORT writes as a name."""
    weight = onnx.numpy_helper.from_array(np.ones((1, 1, 3, 3), dtype="float32"), "w")
    graph = h.make_graph([h.make_node("Conv", ["X", "w"], ["Y"], strides=[2, 2], pads=[1, 1, 1, 1])], "g",
                         [h.make_tensor_value_info("X", T.FLOAT, ["batch", 1, "h", "w_in"])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["batch", 1, "floor(h/2 - 1/2) + 1",
                                                                  "(w_in + 1)//2"])], [weight])
    path = save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8))
    before = path.read_bytes()
    assert runtime_violations(path) == []
    assert cli("check", str(path), "--output-format", "json").json() == []
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == before


def test_the_parser_reads_the_exporters_grammar_and_executes_nothing():
    sizes = {"a": 10, "b": 3, "p2o.DynamicDimension.3": 7}
    cases = {"a + b": 13, "a - 1": 9, "2*a": 20, "floor(a/3)": 3, "(a + 1)//2": 5, "ceil(a/3)": 4,
             "floor(2.0*floor(a/4))": 4, "p2o.DynamicDimension.3 + 1": 8, "Max(a, b)": 10, "a/4": None}
    for text, value in cases.items():
        parsed = parse_dim_expression(text)
        assert parsed is not None, text
        assert parsed.evaluate(sizes) == value, text
    for text in ("seq", "p2o.DynamicDimension.3", "3", "__import__('os')", "a**b", "a.b()", "lambda: 1", ""):
        assert parse_dim_expression(text) is None, text


def test_the_sum_of_two_input_dims_is_fitted_when_no_input_carries_it(cli, save):
    """No attention mask names the total: two pinned runs fit past + seq, a third confirms it."""
    path = save(decoder_with_past(present_dim="sequence_length", mask_dim="mask_length"))
    assert runtime_violations(path)
    [diag] = cli("check", str(path), "--output-format", "json").json()
    assert diag["code"] == "OL002" and "declared 'sequence_length'" in diag["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == ["batch_size", 2, TOTAL, 4]
    assert runtime_violations(path) == []
    assert cli("check", str(path), "--output-format", "json").json() == []
