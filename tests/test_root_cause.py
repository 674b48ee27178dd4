"""OL003's root cause in ONNX's own words, for the right node (issue 17, item 3).

Each frontier node (typed inputs, untyped outputs) is inferred alone with
``onnx.shape_inference.infer_node_outputs``; strict whole-model inference is
only the fallback for failures on data-propagated values. ONNX Runtime, which
runs ONNX's inference itself when it loads a model, is the ground truth for the
messages.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

TOO_MANY = "Axis has less than the requested k elements"
X = h.make_tensor_value_info("X", T.FLOAT, [1, 3])
K5 = numpy_helper.from_array(np.array([5], dtype=np.int64), "K")  # larger than the axis: TopK fails
K2 = numpy_helper.from_array(np.array([2], dtype=np.int64), "K2")


def _model(nodes, initializers=(), opsets=(("", 17),), functions=(), inputs=(X,)) -> onnx.ModelProto:
    graph = h.make_graph(nodes, "g", list(inputs), [h.make_tensor_value_info("Y", T.FLOAT, None)],
                         list(initializers))
    return h.make_model(graph, opset_imports=[h.make_opsetid(d, v) for d, v in opsets], ir_version=8,
                        functions=list(functions))


def _ol003(cli, path) -> list[dict]:
    return [d for d in cli("check", str(path), "--output-format", "json").json() if d["code"] == "OL003"]


def _runtime_refusal(path) -> str:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    with pytest.raises(Exception) as refused:
        ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return str(refused.value)


def test_second_unnamed_node_of_an_op_type_gets_its_own_message(cli, save):
    """Strict-mode text names unnamed nodes by op type only: node[2] used to get node[1]'s complaint."""
    path = save(_model([
        h.make_node("TopK", ["X", "K"], ["v0", "i0"], axis=1, name="bad"),
        h.make_node("TopK", ["v0", "K2"], ["v1", "i1"], axis=1),  # unnamed, untyped only because of 'bad'
        h.make_node("TopK", ["X", "K"], ["v2", "i2"], axis=1),  # unnamed, fails on its own
        h.make_node("Add", ["v1", "v2"], ["Y"]),
    ], [K5, K2]))
    by_path = {d["location"]["path"]: d["message"] for d in _ol003(cli, path)}
    assert set(by_path) == {"graph/node[0]", "graph/node[2]"}
    assert f"stopped at this node: {TOO_MANY};" in by_path["graph/node[2]"]
    assert "expected to have type" not in by_path["graph/node[2]"]
    assert TOO_MANY in _runtime_refusal(path)


def test_a_custom_operator_elsewhere_does_not_silence_the_message(cli, save):
    """onnx's strict mode reports nothing once a model holds an operator it has no schema for."""
    path = save(_model([
        h.make_node("Foo", ["X"], ["f"], domain="my.ops"),
        h.make_node("TopK", ["X", "K"], ["v", "i"], axis=1),
        h.make_node("Add", ["f", "v"], ["Y"]),
    ], [K5], opsets=(("", 17), ("my.ops", 1))))
    by_path = {d["location"]["path"]: d["message"] for d in _ol003(cli, path)}
    assert "no schema for operator 'Foo' of domain 'my.ops' (custom operator)" in by_path["graph/node[0]"]
    assert f"stopped at this node: {TOO_MANY};" in by_path["graph/node[1]"]


def test_node_in_a_loop_body_reading_the_outer_scope_gets_its_message(cli, save):
    constants = [h.make_node("Constant", [], ["Kb"], value=K5), h.make_node("Constant", [], ["K2b"], value=K2)]
    body = h.make_graph(constants + [
        h.make_node("TopK", ["X", "K2b"], ["a", "ai"], axis=1),  # X comes from the enclosing graph
        h.make_node("TopK", ["X", "Kb"], ["b", "bi"], axis=1),
        h.make_node("Add", ["a", "b"], ["ab"]),
        h.make_node("Relu", ["ab"], ["acc_out"]),
        h.make_node("Identity", ["cond_in"], ["cond_out"]),
    ], "body", [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
                h.make_tensor_value_info("acc_in", T.FLOAT, [1, 3])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("acc_out", T.UNDEFINED, None)])
    trips = numpy_helper.from_array(np.array(2, dtype=np.int64), "N")
    path = save(_model([h.make_node("Loop", ["N", "", "X"], ["Y"], body=body)], [trips]))
    [diag] = _ol003(cli, path)
    assert diag["location"]["path"] == "graph/node[0]/body/node[3]" and diag["location"]["op_type"] == "TopK"
    assert f"stopped at this node: {TOO_MANY};" in diag["message"]


def test_if_whose_branches_both_fail_names_each_branch_node_and_the_if(cli, save):
    """Branch outputs declared without a type: the If is inferred as the whole-model run saw it (stripped)."""
    def branch(tag: str) -> onnx.GraphProto:
        return h.make_graph([h.make_node("Constant", [], [f"k{tag}"], value=K5),
                             h.make_node("TopK", ["X", f"k{tag}"], [f"v{tag}", f"i{tag}"], axis=1),
                             h.make_node("Relu", [f"v{tag}"], [f"r{tag}"])], tag, [],
                            [h.make_tensor_value_info(f"r{tag}", T.UNDEFINED, None)])

    cond = h.make_tensor_value_info("C", T.BOOL, [])
    path = save(_model([h.make_node("If", ["C"], ["o"], then_branch=branch("t"), else_branch=branch("e")),
                        h.make_node("Relu", ["o"], ["Y"])], inputs=(X, cond)))
    by_path = {d["location"]["path"]: d["message"] for d in _ol003(cli, path)}
    assert set(by_path) == {"graph/node[0]", "graph/node[0]/then_branch/node[1]", "graph/node[0]/else_branch/node[1]"}
    assert f"stopped at this node: inside it, at TopK: {TOO_MANY};" in by_path["graph/node[0]"]
    for branch_node in ("graph/node[0]/then_branch/node[1]", "graph/node[0]/else_branch/node[1]"):
        assert f"stopped at this node: {TOO_MANY};" in by_path[branch_node]


def _topk_function() -> onnx.FunctionProto:
    body = [h.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)]
    return h.make_function("local.fn", "MyTopK", ["x", "k"], ["v"], body, opset_imports=[h.make_opsetid("", 17)])


def test_model_local_function_names_the_node_inside_it(cli, save):
    path = save(_model([h.make_node("MyTopK", ["X", "K"], ["f"], domain="local.fn"), h.make_node("Relu", ["f"], ["Y"])],
                       [K5], opsets=(("", 17), ("local.fn", 1)), functions=[_topk_function()]))
    [diag] = _ol003(cli, path)
    assert f"stopped at this node: inside it, at TopK: {TOO_MANY};" in diag["message"]
    assert TOO_MANY in _runtime_refusal(path)


def test_function_whose_body_fails_on_a_constant_input_next_to_a_custom_operator(cli, save):
    """onnx's per-function API takes no values and strict mode is silent here: the call is inferred alone."""
    path = save(_model([
        h.make_node("Foo", ["X"], ["f"], domain="my.ops"),
        h.make_node("Constant", [], ["Kc"], value=K5),
        h.make_node("MyTopK", ["X", "Kc"], ["v"], domain="local.fn"),
        h.make_node("Add", ["f", "v"], ["Y"]),
    ], opsets=(("", 17), ("local.fn", 1), ("my.ops", 1)), functions=[_topk_function()]))
    by_path = {d["location"]["path"]: d["message"] for d in _ol003(cli, path)}
    assert f"stopped at this node: inside it, at TopK: {TOO_MANY};" in by_path["graph/node[2]"]


@pytest.mark.parametrize(("node", "opsets", "said"), [
    (h.make_node("Gelu", ["X"], ["f"]), (("", 17),),
     "operator 'Gelu' does not exist at opset 17 of domain 'ai.onnx' (it was introduced in opset 20)"),
    (h.make_node("Frobnicate", ["X"], ["f"]), (("", 17),),
     "no schema for operator 'Frobnicate' in domain 'ai.onnx' (not an operator of that domain)"),
    (h.make_node("Normalizer", ["X"], ["f"], domain="ai.onnx.ml"), (("", 17),),
     "its domain 'ai.onnx.ml' is not among the model's opset imports"),
    (h.make_node("Gelu", ["X"], ["f"], domain="com.microsoft"), (("", 17), ("com.microsoft", 1)),
     "no schema for operator 'Gelu' of domain 'com.microsoft' (custom operator)"),
], ids=["too-new-for-opset", "unknown-standard-op", "domain-not-imported", "custom-domain"])
def test_nodes_without_a_schema_say_why(cli, save, node, opsets, said):
    path = save(_model([node, h.make_node("Relu", ["f"], ["Y"])], opsets=opsets))
    [diag] = _ol003(cli, path)
    assert f"stopped at this node: {said};" in diag["message"]


def test_failures_on_data_propagated_values_fall_back_to_strict_inference_node_by_node(cli, save):
    """Reshape targets built by Shape -> Concat: only whole-model inference knows their values. Two unnamed
    Reshapes fail differently; each strict-mode line is matched to its own node (the regex gave both node[5]'s)."""
    def const(name, values):
        return h.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(values, dtype=np.int64)))

    path = save(_model([
        h.make_node("Shape", ["X"], ["s"]), const("two", [-1, -1]), const("neg", [-2]),
        h.make_node("Concat", ["s", "two"], ["t1"], axis=0), h.make_node("Concat", ["s", "neg"], ["t2"], axis=0),
        h.make_node("Reshape", ["X", "t2"], ["r2"]), h.make_node("Reshape", ["X", "t1"], ["r1"]),
        h.make_node("Add", ["r1", "r2"], ["Y"]),
    ]))
    by_path = {d["location"]["path"]: d["message"] for d in _ol003(cli, path)}
    assert "stopped at this node: Invalid dimension value: -2;" in by_path["graph/node[5]"]
    assert "stopped at this node: Target shape may not have multiple -1 dimensions;" in by_path["graph/node[6]"]


def test_sklearn_normalizer_note_names_the_missing_inference_and_check_type_types_it(cli, save):
    """A skl2onnx export: ONNX has no shape inference for ai.onnx.ml Normalizer; the note says what would type it."""
    pytest.importorskip("skl2onnx")
    from skl2onnx import to_onnx
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer

    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 4)).astype(np.float32)
    model = to_onnx(make_pipeline(Normalizer(), LogisticRegression()).fit(x, x[:, 0] > 0), x[:1],
                    target_opset={"": 17, "ai.onnx.ml": 3}, options={"zipmap": False})
    path = save(model)
    [diag] = _ol003(cli, path)
    assert diag["location"]["op_type"] == "Normalizer" and diag["severity"] == "info"
    said = "ONNX's schema for Normalizer (ai.onnx.ml opset 1) defines no shape inference; it fixes '"
    assert said in diag["message"] and "which only infer_shapes(check_type=True) applies" in diag["message"]
    untyped = diag["message"].split(said)[1].split("'")[0]
    checked = onnx.shape_inference.infer_shapes(model, check_type=True)
    assert {v.name: v.type.tensor_type.elem_type for v in checked.graph.value_info}[untyped] == T.FLOAT


def test_per_node_inference_agrees_with_whole_model_inference_on_every_real_model_node():
    """Inferred alone, no node the whole-model run typed may fail: else a root cause could be a false one.

    ~10k nodes of the real models (onnx's backend data, PP-OCR, silero, magika, ...) in about a second.
    """
    from real_models import all_real_models

    from onnx_lint.lint.context import LintContext
    from onnx_lint.model.load import read_model

    checked, disagreements = 0, []
    for paths in all_real_models().values():
        for path in paths:
            ctx = LintContext(read_model(path), path.name)
            for scope in ctx.scopes:
                values = ctx.oracle.values(scope.path)
                for index, node in enumerate(scope.graph.node):
                    typed = [name in values and values[name].type.WhichOneof("value") is not None
                             for name in node.output if name]
                    if not all(typed):
                        continue
                    checked += 1
                    said = ctx.node_failure(scope, index).message
                    if said is not None and not said.startswith("its input '"):  # downstream of a root: not asked
                        disagreements.append(f"{path.name}:{scope.path}/node[{index}] {node.op_type}: {said}")
    assert checked >= 5000
    assert not disagreements, disagreements[:10]
