"""A Loop that grows a carried tensor: its rank comes from the body, not from the slow engines.

The TorchScript exporter writes a Python list appended in a loop as a Loop-carried tensor
concatenated each iteration (torchvision's R-CNN mask pasting and keypoint decoding). ONNX's
inference leaves the Loop's output without a shape; the body proves its rank.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from examples.defects import IR_VERSION, OPSET
from onnx_lint.engines.engine import Engine
from onnx_lint.engines.oracle import ShapeOracle
from onnx_lint.model.load import read_model
from onnx_lint.model.shapes import tensor_info


def growing_loop(body_input: list[int | str] | None = None) -> onnx.ModelProto:
    """``res = R; repeat M times: res = Concat(res, X)``; output Y = Relu(res) declared rank 0."""
    body = h.make_graph(
        [h.make_node("Concat", ["res_in", "X"], ["res_out"], axis=0), h.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond", T.BOOL, []),
                 h.make_tensor_value_info("res_in", T.FLOAT, body_input or ["r", 4])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("res_out", T.FLOAT, None)])
    graph = h.make_graph(
        [h.make_node("Loop", ["M", "", "R"], ["res"], body=body, name="Loop_0"),
         h.make_node("Relu", ["res"], ["Y"], name="Relu_0")], "loop",
        [h.make_tensor_value_info("M", T.INT64, []), h.make_tensor_value_info("X", T.FLOAT, [1, 4]),
         h.make_tensor_value_info("R", T.FLOAT, ["k", 4])],
        [h.make_tensor_value_info("Y", T.FLOAT, [])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], ir_version=IR_VERSION)


def test_onnx_alone_leaves_the_grown_output_without_a_shape():
    model = growing_loop()
    model.graph.output[0].ClearField("type")
    inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    assert not inferred.graph.output[0].type.tensor_type.HasField("shape")


def test_the_body_proves_the_rank_and_the_stale_output_is_found_without_the_symbolic_engine(cli, save):
    path = save(growing_loop())
    run = cli("check", str(path), "--no-cache", "--output-format", "json")
    [finding] = [d for d in run.json() if d["code"] == "OL001"]
    assert finding["engine"] == Engine.ONNX_LOOP_RANK and "float[unk__" in finding["message"]
    oracle = ShapeOracle(read_model(path))
    oracle.ensure_loop_ranks()
    info, engine = oracle.derived("graph", "Y")
    assert (info.dims[1:], engine) == ((4,), Engine.ONNX_LOOP_RANK) and not oracle.symbolic_ran


def test_onnx_runtime_agrees_with_the_fix(cli, save):
    ort = pytest.importorskip("onnxruntime")
    path = save(growing_loop())
    assert cli("check", str(path), "--no-cache", "--fix").code == 0
    declared = tensor_info(onnx.load(path).graph.output[0].type)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for rows, times in ((2, 3), (5, 1)):
        feeds = {"M": np.array(times), "X": np.ones((1, 4), np.float32), "R": np.ones((rows, 4), np.float32)}
        shape = session.run(None, feeds)[0].shape
        assert len(shape) == len(declared.dims) and shape[1] == declared.dims[1] == 4


def test_a_body_input_of_another_rank_proves_nothing(cli, save):
    """The induction needs the body's carried input to have the initial value's rank."""
    oracle = ShapeOracle(read_model(save(growing_loop(body_input=["r", 4, 1]))))
    oracle.ensure_loop_ranks()
    assert oracle.derived("graph", "Y")[1] != Engine.ONNX_LOOP_RANK
