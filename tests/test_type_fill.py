"""Schema-based element-type propagation: onnx_lint.engines.type_fill."""

from __future__ import annotations

import onnx
import onnx.shape_inference
import pytest
from onnx import TensorProto, helper

from onnx_lint.engines.type_fill import elem_type_of, propagate_types

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _model(nodes, inputs, outputs, initializers=(), opset=17, extra_opsets=()):
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), list(initializers))
    opsets = [helper.make_opsetid("", opset), *(helper.make_opsetid(d, v) for d, v in extra_opsets)]
    return helper.make_model(graph, ir_version=8, opset_imports=opsets)


def _in(name, elem=F, shape=(1, 3)):
    return helper.make_tensor_value_info(name, elem, None if shape is None else list(shape))


def _out(name):
    return helper.make_empty_tensor_value_info(name)


def _untyped(model, name):
    """Whether an inferred model leaves ``name`` without an element type."""
    values = {v.name: v for v in (*model.graph.value_info, *model.graph.output)}
    return name not in values or values[name].type.tensor_type.elem_type == 0


def _main(types):
    return {name: elem for (path, name), elem in types.items() if path == "graph"}


def test_type_strings_parse():
    assert elem_type_of("tensor(float)") == F
    assert elem_type_of("tensor(float8e4m3fn)") == TensorProto.FLOAT8E4M3FN
    assert elem_type_of("tensor(bfloat16)") == TensorProto.BFLOAT16
    assert elem_type_of("seq(tensor(float))") is None


def test_topk_past_axis_length_is_typed_where_onnx_gives_up():
    k = helper.make_tensor("K", I64, [1], [5])
    model = _model(
        [
            helper.make_node("TopK", ["X", "K"], ["values", "indices"], axis=1),
            helper.make_node("Cast", ["indices"], ["idx_f"], to=F),
        ],
        [_in("X")],
        [_out("values"), _out("idx_f")],
        [k],
    )
    inferred = onnx.shape_inference.infer_shapes(model)
    assert _untyped(inferred, "values")

    types = _main(propagate_types(inferred))
    assert types["values"] == F
    assert types["indices"] == I64
    assert types["idx_f"] == F
    assert types["X"] == F and types["K"] == I64  # seeds come back too


def test_constant_forms():
    sparse = helper.make_sparse_tensor(
        helper.make_tensor("sv", TensorProto.DOUBLE, [1], [1.0]), helper.make_tensor("si", I64, [1], [0]), [4]
    )
    nodes = [
        helper.make_node("Constant", [], ["c_tensor"], value=helper.make_tensor("t", TensorProto.INT8, [1], [1])),
        helper.make_node("Constant", [], ["c_sparse"], sparse_value=sparse),
        helper.make_node("Constant", [], ["c_float"], value_float=1.0),
        helper.make_node("Constant", [], ["c_floats"], value_floats=[1.0, 2.0]),
        helper.make_node("Constant", [], ["c_int"], value_int=1),
        helper.make_node("Constant", [], ["c_ints"], value_ints=[1, 2]),
        helper.make_node("Constant", [], ["c_string"], value_string="a"),
        helper.make_node("Constant", [], ["c_strings"], value_strings=["a", "b"]),
        helper.make_node("ConstantOfShape", ["c_ints"], ["cos_default"]),
        helper.make_node("ConstantOfShape", ["c_ints"], ["cos_int32"],
                         value=helper.make_tensor("v", TensorProto.INT32, [1], [7])),
    ]
    types = _main(propagate_types(_model(nodes, [], [_out("cos_default")])))
    assert types == {
        "c_tensor": TensorProto.INT8,
        "c_sparse": TensorProto.DOUBLE,
        "c_float": F,
        "c_floats": F,
        "c_int": I64,
        "c_ints": I64,
        "c_string": TensorProto.STRING,
        "c_strings": TensorProto.STRING,
        "cos_default": F,
        "cos_int32": TensorProto.INT32,
    }


def test_quantize_and_dequantize():
    inits = [
        helper.make_tensor("scale", F, [], [0.1]),
        helper.make_tensor("zp_i8", TensorProto.INT8, [], [0]),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["X", "scale"], ["q_default"]),
        helper.make_node("QuantizeLinear", ["X", "scale", "zp_i8"], ["q_zp"]),
        helper.make_node("QuantizeLinear", ["X", "scale"], ["q_attr"], output_dtype=TensorProto.UINT16),
        helper.make_node("QuantizeLinear", ["X", "scale", "zp_unknown"], ["q_unknown_zp"]),
        helper.make_node("DequantizeLinear", ["q_zp", "scale", "zp_i8"], ["dq"]),
    ]
    model = _model(nodes, [_in("X"), _in("zp_unknown", 0, None)],
                   [_out("dq")], inits, opset=21)
    types = _main(propagate_types(model))
    assert types["q_default"] == TensorProto.UINT8
    assert types["q_zp"] == TensorProto.INT8
    assert types["q_attr"] == TensorProto.UINT16
    assert "q_unknown_zp" not in types  # its zero point decides, and nobody knows it
    assert types["dq"] == F


def test_dequantize_takes_scale_type():
    model = _model(
        [helper.make_node("DequantizeLinear", ["q", "s"], ["y"])],
        [_in("q", TensorProto.UINT8), _in("s", TensorProto.FLOAT16, ())],
        [_out("y")],
        opset=21,
    )
    assert _main(propagate_types(model))["y"] == TensorProto.FLOAT16


def test_attribute_driven_ops():
    nodes = [
        helper.make_node("EyeLike", ["X"], ["eye_same"]),
        helper.make_node("EyeLike", ["X"], ["eye_int"], dtype=TensorProto.INT32),
        helper.make_node("RandomNormal", [], ["rn"], shape=[2]),
        helper.make_node("RandomUniform", [], ["ru"], shape=[2], dtype=TensorProto.DOUBLE),
        helper.make_node("RandomUniformLike", ["X"], ["rul"]),
        helper.make_node("Bernoulli", ["X"], ["bern"]),
        helper.make_node("Multinomial", ["X"], ["multi"]),
        helper.make_node("CastLike", ["X", "rn16"], ["like"]),
        helper.make_node("Cast", ["X"], ["rn16"], to=TensorProto.FLOAT16),
    ]
    types = _main(propagate_types(_model(nodes, [_in("X")], [_out("like")])))
    assert types["eye_same"] == F
    assert types["eye_int"] == TensorProto.INT32
    assert types["rn"] == F
    assert types["ru"] == TensorProto.DOUBLE
    assert types["rul"] == F
    assert types["bern"] == F
    assert types["multi"] == TensorProto.INT32
    assert types["like"] == TensorProto.FLOAT16


def test_nodes_out_of_topological_order():
    nodes = [
        helper.make_node("Relu", ["b"], ["c"]),
        helper.make_node("Shape", ["a"], ["shape"]),
        helper.make_node("Neg", ["a"], ["b"]),
        helper.make_node("Abs", ["X"], ["a"]),
    ]
    types = _main(propagate_types(_model(nodes, [_in("X", TensorProto.INT32)], [_out("c")])))
    assert types == {"X": TensorProto.INT32, "a": TensorProto.INT32, "b": TensorProto.INT32,
                     "c": TensorProto.INT32, "shape": I64}


def test_annotations_and_known_are_seeds():
    model = _model(
        [helper.make_node("Custom", ["X"], ["y"], domain="my.domain"), helper.make_node("Relu", ["y"], ["z"])],
        [_in("X")],
        [_out("z")],
        extra_opsets=[("my.domain", 1)],
    )
    model.graph.value_info.append(_in("y", TensorProto.DOUBLE))
    types = propagate_types(model, known={("graph", "z"): TensorProto.FLOAT16, ("graph", "y"): F})
    assert types[("graph", "y")] == TensorProto.DOUBLE  # the model's own annotation is kept
    assert types[("graph", "z")] == TensorProto.FLOAT16  # a seed is never overridden


def test_if_branches_see_outer_scope():
    then_g = helper.make_graph([helper.make_node("Relu", ["X"], ["t"])], "then", [], [_out("t")])
    else_g = helper.make_graph([helper.make_node("Shape", ["X"], ["e"])], "else", [], [_out("e")])
    nodes = [
        helper.make_node("Identity", ["C"], ["cond"]),
        helper.make_node("If", ["cond"], ["out"], then_branch=then_g, else_branch=else_g),
    ]
    types = propagate_types(_model(nodes, [_in("X"), _in("C", B, ())], [_out("out")]))
    assert types[("graph/node[1]/then_branch", "t")] == F
    assert types[("graph/node[1]/else_branch", "e")] == I64
    assert types[("graph", "out")] == F  # then_branch decides
    assert ("graph/node[1]/then_branch", "X") not in types  # outer names stay keyed by their graph


def test_if_falls_back_to_else_branch():
    then_g = helper.make_graph([helper.make_node("Foo", ["X"], ["t"], domain="my.domain")], "then", [],
                               [_out("t")])
    else_g = helper.make_graph([helper.make_node("Neg", ["X"], ["e"])], "else", [], [_out("e")])
    model = _model([helper.make_node("If", ["C"], ["out"], then_branch=then_g, else_branch=else_g)],
                   [_in("X"), _in("C", B, ())], [_out("out")], extra_opsets=[("my.domain", 1)])
    assert propagate_types(model)[("graph", "out")] == F


def test_loop_carried_value_and_scan_output():
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Add", ["acc_in", "X"], ["acc_out"]),
            helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.DOUBLE),
        ],
        "body",
        [_out("i"), _out("cond_in"), _out("acc_in")],
        [_out("cond_out"), _out("acc_out"), _out("i_f")],
    )
    nodes = [
        helper.make_node("Constant", [], ["trip"], value=helper.make_tensor("t", I64, [], [3])),
        helper.make_node("Constant", [], ["go"], value=helper.make_tensor("g", B, [], [True])),
        helper.make_node("Loop", ["trip", "go", "X"], ["acc", "scanned"], body=body),
    ]
    types = propagate_types(_model(nodes, [_in("X")], [_out("acc"), _out("scanned")]))
    body_path = "graph/node[2]/body"
    assert types[(body_path, "i")] == I64
    assert types[(body_path, "cond_in")] == B
    assert types[(body_path, "acc_in")] == F
    assert types[(body_path, "acc_out")] == F
    assert types[("graph", "acc")] == F
    assert types[("graph", "scanned")] == TensorProto.DOUBLE


def test_scan_states_and_slices():
    body = helper.make_graph(
        [
            helper.make_node("Add", ["state_in", "slice"], ["state_out"]),
            helper.make_node("Shape", ["slice"], ["slice_shape"]),
        ],
        "body",
        [_out("state_in"), _out("slice")],
        [_out("state_out"), _out("slice_shape")],
    )
    node = helper.make_node("Scan", ["init", "seq"], ["final", "shapes"], body=body, num_scan_inputs=1)
    model = _model([node], [_in("init", TensorProto.INT32, (3,)), _in("seq", TensorProto.INT32, (5, 3))],
                   [_out("final"), _out("shapes")])
    types = propagate_types(model)
    assert types[("graph/node[0]/body", "state_in")] == TensorProto.INT32
    assert types[("graph/node[0]/body", "slice")] == TensorProto.INT32
    assert types[("graph", "final")] == TensorProto.INT32
    assert types[("graph", "shapes")] == I64


def test_declared_body_inputs_are_seeds():
    body = helper.make_graph(
        [helper.make_node("Relu", ["s"], ["o"])], "body", [_in("s", TensorProto.FLOAT16, ())], [_out("o")]
    )
    # "init" is untyped, but the body declares its state input.
    model = _model([helper.make_node("Scan", ["init"], ["final"], body=body, num_scan_inputs=0)],
                   [_in("init", 0, None)], [_out("final")])
    assert propagate_types(model)[("graph", "final")] == TensorProto.FLOAT16


def test_nested_subgraph_paths():
    inner_then = helper.make_graph([helper.make_node("Neg", ["X"], ["n"])], "it", [], [_out("n")])
    inner_else = helper.make_graph([helper.make_node("Abs", ["X"], ["a"])], "ie", [], [_out("a")])
    outer_then = helper.make_graph(
        [helper.make_node("Not", ["C"], ["nc"]),
         helper.make_node("If", ["nc"], ["r"], then_branch=inner_then, else_branch=inner_else)],
        "ot", [], [_out("r")],
    )
    outer_else = helper.make_graph([helper.make_node("Identity", ["X"], ["x2"])], "oe", [], [_out("x2")])
    node = helper.make_node("If", ["C"], ["y"], then_branch=outer_then, else_branch=outer_else)
    types = propagate_types(_model([node], [_in("X", TensorProto.INT16), _in("C", B, ())], [_out("y")]))
    assert types[("graph/node[0]/then_branch/node[1]/then_branch", "n")] == TensorProto.INT16
    assert types[("graph/node[0]/then_branch", "r")] == TensorProto.INT16
    assert types[("graph", "y")] == TensorProto.INT16


def test_custom_domain_is_never_guessed():
    model = _model(
        [helper.make_node("Mystery", ["X"], ["m"], domain="my.domain"), helper.make_node("Relu", ["m"], ["r"])],
        [_in("X")],
        [_out("r")],
        extra_opsets=[("my.domain", 1)],
    )
    types = _main(propagate_types(model))
    assert "m" not in types
    assert "r" not in types
    assert types == {"X": F}


@pytest.mark.parametrize("op_type", ["NoSuchOp", "Gelu"])  # unknown op; op newer than the opset
def test_missing_schema_leaves_outputs_untyped(op_type):
    model = _model([helper.make_node(op_type, ["X"], ["y"])], [_in("X")], [_out("y")], opset=13)
    assert ("graph", "y") not in propagate_types(model)


def test_conflicting_inputs_bind_nothing():
    model = _model([helper.make_node("Add", ["X", "Y"], ["z"])], [_in("X"), _in("Y", I64)], [_out("z")])
    assert ("graph", "z") not in propagate_types(model)


@pytest.mark.parametrize("self_loop", [False, True])
def test_cycle_does_not_raise(self_loop):
    if self_loop:
        nodes = [helper.make_node("Add", ["X", "a"], ["a"])]
    else:
        nodes = [helper.make_node("Add", ["X", "b"], ["a"]), helper.make_node("Neg", ["a"], ["b"])]
    nodes.append(helper.make_node("Shape", ["X"], ["s"]))
    types = _main(propagate_types(_model(nodes, [_in("X")], [_out("a")])))
    assert "a" not in types and "b" not in types
    assert types["s"] == I64


def test_variadic_inputs_and_outputs():
    nodes = [
        helper.make_node("Concat", ["X", "X", "X"], ["cat"], axis=0),
        helper.make_node("Split", ["cat"], ["p0", "p1", ""], axis=0, num_outputs=3),
        helper.make_node("Max", ["p0", "p1", "X"], ["mx"]),
    ]
    types = _main(propagate_types(_model(nodes, [_in("X", TensorProto.UINT8)], [_out("mx")], opset=18)))
    assert types["cat"] == types["p0"] == types["p1"] == types["mx"] == TensorProto.UINT8
    assert "" not in types


def test_long_chain_is_linear():
    count = 20000
    nodes = [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"]) for i in range(count)]
    nodes.reverse()
    model = _model(nodes, [_in("t0")], [_out(f"t{count}")])
    types = propagate_types(model)
    assert types[("graph", f"t{count}")] == F
    assert len(types) == count + 1


def test_schema_defaults_of_dtype_attributes():
    nodes = [
        helper.make_node("HannWindow", ["n"], ["window"]),
        helper.make_node("LayerNormalization", ["X", "scale"], ["y", "mean", "inv_std"]),
    ]
    inputs = [_in("n", I64, ()), _in("X", TensorProto.FLOAT16), _in("scale", TensorProto.FLOAT16, (3,))]
    types = _main(propagate_types(_model(nodes, inputs, [_out("y")])))
    assert types["window"] == F  # output_datatype defaults to FLOAT
    assert types["y"] == TensorProto.FLOAT16
    assert types["mean"] == types["inv_std"] == F  # stash_type defaults to FLOAT


def test_dtype_attributes_never_type_inputs_or_sequences():
    nodes = [
        helper.make_node("SequenceEmpty", [], ["seq"], dtype=TensorProto.INT32),  # a sequence, not a tensor
        helper.make_node("Range", ["a", "b", "c"], ["r"]),  # T comes from untyped inputs only
    ]
    model = _model(nodes, [_in(n, 0, None) for n in "abc"], [_out("r")], opset=17)
    assert _main(propagate_types(model)) == {}
