"""Issue 22, item 7: the checker's verdict after a fix.

ORT's FP16 converter with ``keep_io_types=True`` left a Gemm with a float A and a float16 B on ALBERT,
plus declarations OL006 repairs. The fix used to end in "All checks passed" on a file that the full
checker and ONNX Runtime refuse; the node-level type error is now an OL102 finding before and after.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from onnx_lint.engines.checker import full_checker_error


def half_converted_gemm(b_type: int = T.FLOAT16) -> onnx.ModelProto:
    """Relu -> Gemm(A, B) -> Relu, with B stored as ``b_type``; A and Y declared float16 (stale: the graph
    computes float, as keep_io_types leaves the inputs)."""
    b = onnx.numpy_helper.from_array(np.ones((4, 3), dtype=onnx.helper.tensor_dtype_to_np_dtype(b_type)), "B")
    graph = h.make_graph(
        [h.make_node("Relu", ["X"], ["A"]), h.make_node("Gemm", ["A", "B"], ["G"], name="gemm"),
         h.make_node("Relu", ["G"], ["Y"])], "albert_head",
        [h.make_tensor_value_info("X", T.FLOAT, ["batch", 4])],
        [h.make_tensor_value_info("Y", T.FLOAT16, ["batch", 3])],
        [b], value_info=[h.make_tensor_value_info("A", T.FLOAT16, ["batch", 4])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _codes(run):
    return sorted((d["code"], d["location"]["path"]) for d in run.json())


def test_a_node_type_error_survives_the_fix_as_an_error(cli, save):
    path = save(half_converted_gemm())
    with pytest.raises(Exception, match="Type Error"):  # the stale declaration is the first it meets
        ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    before = cli("check", str(path), "--output-format", "json")
    assert _codes(before) == [("OL006", "graph/output[0]"), ("OL006", "graph/value_info[0]"),
                              ("OL102", "graph/node[1]")]
    [gemm] = [d for d in before.json() if d["code"] == "OL102"]
    assert "B has inconsistent type tensor(float16)" in gemm["message"] and gemm["location"]["op_type"] == "Gemm"
    fixed = cli("check", str(path), "--fix")
    assert fixed.code == 1 and "All checks passed" not in fixed.out
    assert "2 fixed, 1 remaining" in fixed.out
    after = cli("check", str(path), "--output-format", "json")
    assert _codes(after) == [("OL102", "graph/node[1]")] and after.code == 1
    assert "B has inconsistent type" in (full_checker_error(path) or "")  # what the finding says holds
    with pytest.raises(Exception, match="bound to different types"):
        ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def test_the_same_head_all_float_is_fixed_to_a_clean_model(cli, save):
    path = save(half_converted_gemm(T.FLOAT))
    assert _codes(cli("check", str(path), "--output-format", "json")) == [("OL006", "graph/output[0]"),
                                                                         ("OL006", "graph/value_info[0]")]
    assert cli("check", str(path), "--fix").code == 0
    assert cli("check", str(path), "--output-format", "json").json() == []
    assert full_checker_error(path) is None
    ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
