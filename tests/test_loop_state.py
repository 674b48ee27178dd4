"""Loop and Scan state: body declarations are checked against the values that start the loop.

ONNX's inference types a Loop body from the body's own declared inputs, so a carried input pinned to
the export's batch confirmed itself and everything the body computes from it. onnx-lint infers the
body again from the state's initial value and keeps the dims the body hands on unchanged (induction).
ONNX Runtime is the judge: it warns (``VerifyOutputSizes``) whenever a body output's declared shape
differs from what it computes, so a fixed model must run at two batch sizes without that warning.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

EXPORTS = Path(__file__).resolve().parent / "exports"

# Runs the model at batch 1 and 3 in a fresh process, ONNX Runtime's warnings on stderr.
_RUN = """
import sys, numpy as np, onnxruntime as ort
options = ort.SessionOptions()
options.log_severity_level = 1
session = ort.InferenceSession(sys.argv[1], options, providers=["CPUExecutionProvider"])
for batch in (1, 3):
    out = session.run(None, {"x": np.ones((batch, 16), np.float32), "n": np.array(3, np.int64)})[0]
    print(out.shape)
"""


def _runtime(path: Path) -> tuple[str, str]:
    done = subprocess.run([sys.executable, "-c", _RUN, str(path)], capture_output=True, text=True, check=True)
    return done.stdout, done.stderr


def pinned_loop(state=(2, 16)) -> onnx.ModelProto:
    """h = zeros(batch, 16); n times: h = tanh(h @ W + x). The body's state declared at batch 2."""
    weight = numpy_helper.from_array(np.eye(16, dtype=np.float32) * 0.5, "W")
    body = h.make_graph(
        [h.make_node("MatMul", ["h_in", "W"], ["m"]), h.make_node("Add", ["m", "x"], ["a"]),
         h.make_node("Tanh", ["a"], ["h_out"]), h.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("h_in", T.FLOAT, list(state))],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("h_out", T.FLOAT, list(state))],
        value_info=[h.make_tensor_value_info("m", T.FLOAT, list(state))])
    graph = h.make_graph(
        [h.make_node("Shape", ["x"], ["shape"]),
         h.make_node("ConstantOfShape", ["shape"], ["h0"], value=numpy_helper.from_array(np.zeros(1, np.float32))),
         h.make_node("Loop", ["n", "", "h0"], ["h_final"], body=body)], "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", 16]), h.make_tensor_value_info("n", T.INT64, [])],
        [h.make_tensor_value_info("h_final", T.FLOAT, ["batch", 16])], [weight])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _body_dims(path: Path) -> dict[str, list]:
    model = onnx.load(path)
    loop = next(n for n in model.graph.node if n.op_type == "Loop")
    body = loop.attribute[0].g
    return {v.name: [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                     for d in v.type.tensor_type.shape.dim]
            for v in [*body.input, *body.output, *body.value_info]}


def test_a_body_state_pinned_to_the_export_batch_is_found_and_fixed(cli, tmp_path):
    path = tmp_path / "loop.onnx"
    onnx.save(pinned_loop(), path)
    out, err = _runtime(path)
    assert "(1, 16)" in out and "Expected shape from model of {2,16} does not match actual shape of {1,16}" in err
    found = cli("check", str(path), "--output-format", "json").json()
    assert sorted((d["code"], d["location"]["path"]) for d in found) == [
        ("OL002", "graph/node[2]/body/output[1]"), ("OL005", "graph/node[2]/body/input[2]"),
        ("OL005", "graph/node[2]/body/value_info[0]")]
    state = next(d for d in found if d["location"]["path"].endswith("input[2]"))
    assert state["message"] == ("body state input 'h_in' is declared [2, 16]: dim 0 is declared 2, but it follows "
                                "the dynamic input dim 'batch'")
    assert cli("check", "--fix", str(path)).code == 0
    assert _body_dims(path) == {"i": [], "cond_in": [], "h_in": ["batch", 16], "cond_out": [],
                                "h_out": ["batch", 16], "m": ["batch", 16]}
    out, err = _runtime(path)
    assert "(1, 16)" in out and "(3, 16)" in out and "VerifyOutputSizes" not in err


def test_a_torchscript_loop_made_stale_by_quant_pre_process_is_repaired(cli, tmp_path):
    """torch.onnx (TorchScript) Loop through make_dim_param_fixed + ORT's symbolic shape inference, then made
    dynamic again: the body's state and tensors stay at batch 2 (tests/exports/make_loop_exports.py)."""
    path = Path(shutil.copy(EXPORTS / "ts_loop_carried_pinned.onnx", tmp_path / "loop.onnx"))
    assert "VerifyOutputSizes" in _runtime(path)[1]
    found = cli("check", str(path), "--output-format", "json").json()
    assert {d["code"] for d in found} == {"OL002", "OL005"} and len(found) == 7
    assert any(d["message"].startswith("body state input 'h.11' is declared [2, 16]") for d in found)
    assert cli("check", "--fix", str(path)).code == 0
    out, err = _runtime(path)
    assert "(3, 16)" in out and "VerifyOutputSizes" not in err
    assert cli("check", str(path)).code == 0


def test_the_healthy_torchscript_loop_stays_byte_identical(cli, tmp_path):
    path = Path(shutil.copy(EXPORTS / "ts_loop_carried.onnx", tmp_path / "loop.onnx"))
    before = path.read_bytes()
    assert cli("check", str(path), "--output-format", "json").json() == []
    cli("check", "--fix", str(path))
    assert path.read_bytes() == before


def test_a_tf2onnx_loop_that_hands_inputs_on_is_clean(cli, tmp_path):
    """tf2onnx writes body outputs named like body inputs (a value carried through unchanged)."""
    import onnxruntime as ort

    path = Path(shutil.copy(EXPORTS / "tf2onnx_loop_passthrough.onnx", tmp_path / "loop.onnx"))
    onnx.checker.check_model(str(path), full_check=True)  # both tools accept it, so nothing may say otherwise
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for batch in (1, 3):
        feeds = {i.name: (np.ones((batch, 4), np.float32) if i.type == "tensor(float)" else np.array(3, np.int32))
                 for i in session.get_inputs()}
        assert session.run(None, feeds)[0].shape == (batch, 4)
    before = path.read_bytes()
    assert cli("check", str(path), "--output-format", "json").json() == []
    cli("check", "--fix", str(path))
    assert path.read_bytes() == before


def _growing(state) -> onnx.ModelProto:
    """res = R[k, 4]; M times: res = Concat(res, X[1, 4]): the state grows along dim 0."""
    body = h.make_graph(
        [h.make_node("Concat", ["res_in", "X"], ["res_out"], axis=0), h.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond", T.BOOL, []),
                 h.make_tensor_value_info("res_in", T.FLOAT, list(state))],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("res_out", T.FLOAT, None)])
    graph = h.make_graph(
        [h.make_node("Loop", ["M", "", "R"], ["res"], body=body)], "loop",
        [h.make_tensor_value_info("M", T.INT64, []), h.make_tensor_value_info("X", T.FLOAT, [1, 4]),
         h.make_tensor_value_info("R", T.FLOAT, ["k", 4])],
        [h.make_tensor_value_info("res", T.FLOAT, [None, 4])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def test_a_growing_state_keeps_no_size_of_its_first_iteration(cli, tmp_path):
    path = tmp_path / "grow.onnx"
    onnx.save(_growing([3, 4]), path)
    [finding] = cli("check", str(path), "--output-format", "json").json()
    assert finding["code"] == "OL005" and "dim 0 is declared 3, but it follows the dynamic input dim 'k'" in \
        finding["message"]
    assert cli("check", "--fix", str(path)).code == 0
    assert _body_dims(path)["res_in"] == [None, 4]  # 'k' holds at the first iteration only
