"""Consequences judged per operator: ONNX Runtime's FP16 converter and quantizer are the ground truth.

An untyped float tensor read only by operators that accept any input type (Cast, Shape, …) does not
stop the FP16 converter or the quantizer: the model converts and runs, so a healthy classic-ML export
passes ``check``. One read by an operator whose type parameter ties it to another input or an output
(Identity, Concat, Less) makes the converted model unloadable, so the warning stays, and ``--fix``
makes it convertible.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import onnx
import onnx.helper as h
import pytest
from onnx import TensorProto as T

from onnx_lint.lint.consequences import needs_input_type

pytest.importorskip("skl2onnx")
pytest.importorskip("onnxruntime")

_OPSETS = {"": 17, "ai.onnx.ml": 3}


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((60, 4)).astype(np.float32)
    return x, (x[:, 0] > 0).astype(int) + (x[:, 1] > 0)


def _healthy(name: str) -> onnx.ModelProto:
    from skl2onnx import to_onnx
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC, SVR

    x, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator = {
            "svr": lambda: SVR().fit(x, x[:, 0]),
            "svc": lambda: SVC().fit(x, y),
            "svc-probability": lambda: SVC(probability=True, random_state=0).fit(x, y),
            "svc-probability-no-zipmap": lambda: SVC(probability=True, random_state=0).fit(x, y),
            "scaler-logreg-zipmap": lambda: make_pipeline(StandardScaler(), LogisticRegression()).fit(x, y),
        }[name]()
        options = {"zipmap": False} if name == "svc-probability-no-zipmap" else None
        return to_onnx(estimator, x[:1], target_opset=_OPSETS, options=options)


def _lightgbm_booster() -> onnx.ModelProto:
    """LightGBM's booster regression: TreeEnsembleRegressor -> Identity -> output."""
    lightgbm = pytest.importorskip("lightgbm")
    pytest.importorskip("onnxmltools")
    from onnxmltools import convert_lightgbm
    from onnxmltools.convert.common.data_types import FloatTensorType

    x, _ = _data()
    booster = lightgbm.train({"objective": "regression", "verbose": -1, "num_leaves": 4},
                             lightgbm.Dataset(x, x[:, 0]), num_boost_round=3)
    return convert_lightgbm(booster, initial_types=[("input", FloatTensorType([None, 4]))], target_opset=15)


def _column_transformer() -> onnx.ModelProto:
    """A ColumnTransformer: Scaler on two columns, the other two passed through, joined by Concat."""
    from skl2onnx import to_onnx
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x, y = _data()
    columns = ColumnTransformer([("scaled", StandardScaler(), [0, 1]), ("kept", "passthrough", [2, 3])])
    pipeline = make_pipeline(columns, LogisticRegression()).fit(x, y)
    return to_onnx(pipeline, x[:1], target_opset=_OPSETS, options={"zipmap": False})


def _scaler_into_less() -> onnx.ModelProto:
    """Less ties its two inputs (not its bool output): the converter must know the untyped one is float."""
    zero = onnx.numpy_helper.from_array(np.zeros((4,), np.float32), "zero")
    nodes = [h.make_node("Scaler", ["X"], ["s"], domain="ai.onnx.ml", offset=[0.0] * 4, scale=[1.0] * 4),
             h.make_node("Less", ["s", "zero"], ["b"]), h.make_node("Cast", ["b"], ["Y"], to=T.FLOAT)]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("X", T.FLOAT, ["N", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["N", 4])], [zero])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 3)],
                        ir_version=8)


def _run(path) -> None:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    session.run(None, {session.get_inputs()[0].name: np.ones((2, 4), np.float32)})


def _fp16_error(path) -> str | None:
    """ORT's FP16 converter (float32 I/O kept); None when the converted model loads and runs."""
    from onnxruntime.transformers.float16 import convert_float_to_float16

    converted = path.with_suffix(".fp16.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        onnx.save(convert_float_to_float16(onnx.load(path), keep_io_types=True), converted)
    try:
        _run(converted)
    except Exception as exc:  # ORT raises its own Fail/InvalidGraph types
        return str(exc)
    return None


def _quantized_runs(path) -> None:
    """ORT's static INT8 quantizer (QDQ) writes a model that loads and runs."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    name = onnx.load(path).graph.input[0].name

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.samples = iter([{name: np.random.default_rng(i).standard_normal((2, 4)).astype(np.float32)}
                                 for i in range(3)])

        def get_next(self):
            return next(self.samples, None)

    quantized = path.with_suffix(".int8.onnx")
    logging.disable(logging.WARNING)
    try:
        quantize_static(str(path), str(quantized), Reader(), quant_format=QuantFormat.QDQ)
    finally:
        logging.disable(logging.NOTSET)
    _run(quantized)


@pytest.mark.parametrize("op_type, index", [("Cast", 0), ("CastLike", 0), ("Shape", 0), ("Size", 0),
                                            ("NonZero", 0), ("Gather", 1), ("Reshape", 1)])
def test_operators_that_accept_any_input_type_do_not_need_it(op_type, index):
    node = h.make_node(op_type, ["a", "b"][: index + 1], ["y"])
    assert not needs_input_type(node, index, {"": 17})


@pytest.mark.parametrize("op_type, inputs", [("Identity", 1), ("Concat", 2), ("Add", 2), ("Less", 2),
                                             ("CastLike", 2), ("Gather", 1), ("Sum", 3)])
def test_operators_whose_type_parameter_ties_the_input_need_it(op_type, inputs):
    node = h.make_node(op_type, [f"i{k}" for k in range(inputs)], ["y"])
    index = 1 if op_type == "CastLike" else inputs - 1 if op_type == "Sum" else 0
    assert needs_input_type(node, index, {"": 17})


def test_operators_without_a_schema_are_assumed_to_need_it():
    assert needs_input_type(h.make_node("Gelu", ["x"], ["y"], domain="com.microsoft"), 0, {"": 17})


@pytest.mark.parametrize("name", ["svr", "svc", "svc-probability", "svc-probability-no-zipmap",
                                  "scaler-logreg-zipmap"])
def test_untyped_tensor_read_only_by_cast_passes_check_as_the_converters_agree(cli, save, name):
    path = save(_healthy(name))
    before = path.read_bytes()
    assert _fp16_error(path) is None
    _quantized_runs(path)
    run = cli("check", str(path), "--output-format", "json")
    assert run.code == 0, run.out
    notes = [d for d in run.json() if d["code"] == "OL003"]
    assert notes and all(d["severity"] == "info" and d["fix"] is None for d in notes)
    assert any("Cast accepts any input type" in d["message"] for d in notes)
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == before


@pytest.mark.parametrize("builder, op_type", [(_lightgbm_booster, "Identity"), (_column_transformer, "Concat"),
                                              (_scaler_into_less, "Less")])
def test_untyped_tensor_tied_by_its_reader_warns_and_the_fix_makes_it_convertible(cli, save, builder, op_type):
    path = save(builder())
    error = _fp16_error(path)
    assert error is not None and "Type Error" in error
    [diag] = [d for d in cli("check", str(path), "--output-format", "json").json() if d["code"] == "OL003"]
    assert diag["severity"] == "warning" and f"{op_type} downstream needs the type" in diag["message"]
    assert diag["fix"] is not None
    assert cli("check", str(path), "--fix").code == 0
    assert _fp16_error(path) is None
    _quantized_runs(path)


# -- FP16-range fill values (OL201's documented exemption) ---------------------------------------------
def _masked_attention(fill: float, additive: bool) -> onnx.ModelProto:
    """Softmax over scores where masked positions get ConstantOfShape's fill (replaced, or added as a bias)."""
    axis = onnx.numpy_helper.from_array(np.array([1], np.int64), "axis")
    zero = onnx.numpy_helper.from_array(np.zeros((), np.float32), "zero")
    filled = onnx.numpy_helper.from_array(np.array([fill], np.float32))
    nodes = [h.make_node("Shape", ["scores"], ["shape"]), h.make_node("Unsqueeze", ["mask", "axis"], ["keep"]),
             h.make_node("ConstantOfShape", ["shape"], ["fill"], value=filled)]
    if additive:
        nodes += [h.make_node("Where", ["keep", "zero", "fill"], ["bias"]),
                  h.make_node("Add", ["scores", "bias"], ["masked"])]
    else:
        nodes.append(h.make_node("Where", ["keep", "scores", "fill"], ["masked"]))
    nodes.append(h.make_node("Softmax", ["masked"], ["P"], axis=-1))
    graph = h.make_graph(nodes, "attention", [h.make_tensor_value_info("scores", T.FLOAT, ["B", "S", "S"]),
                                              h.make_tensor_value_info("mask", T.BOOL, ["B", "S"])],
                         [h.make_tensor_value_info("P", T.FLOAT, ["B", "S", "S"])], [axis, zero])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("fill", [-3.4028234663852886e38, -1e9])
@pytest.mark.parametrize("additive", [False, True])
def test_mask_fill_beyond_fp16_is_clamped_safely_and_not_flagged(cli, save, fill, additive):
    import onnxruntime as ort
    from onnxruntime.transformers.float16 import convert_float_to_float16

    path = save(_masked_attention(fill, additive))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fp16 = save(convert_float_to_float16(_masked_attention(fill, additive), keep_io_types=True), "fp16.onnx")
    rng = np.random.default_rng(0)
    scores = (rng.standard_normal((2, 6, 6)) * 8).astype(np.float32)
    mask = np.ones((2, 6), bool)
    mask[0, 4:] = False
    mask[1, 5:] = False
    feeds = {"scores": scores, "mask": mask}
    full, half = (ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
                  for p in (path, fp16))
    assert float(np.abs(full - half).max()) < 1e-6
    run = cli("check", str(path), "--output-format", "json")
    assert run.code == 0 and not [d for d in run.json() if d["code"] == "OL201"]
