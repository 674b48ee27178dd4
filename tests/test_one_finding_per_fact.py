"""Issue 22, item 9: one finding per fact, and no engine text that misleads.

A graph output that nothing produces is OL104's error; it used to get an OL007 note as well, whose text
quoted ONNX Runtime's symbolic engine saying "Invalid model with cyclic graph" about a graph with no cycle.
"""

from __future__ import annotations

import onnx
from onnx import TensorProto as T
from onnx import helper as h


def _model(first_op: str) -> onnx.ModelProto:
    """Y = ``first_op``(X); Z is declared as an output but nothing produces it."""
    domain = "com.example" if first_op == "Lookup" else ""
    graph = h.make_graph([h.make_node(first_op, ["X"], ["Y"], domain=domain)], "g",
                         [h.make_tensor_value_info("X", T.FLOAT, ["batch", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, ["batch", 4]),
                          h.make_tensor_value_info("Z", T.FLOAT, ["batch", 4])])
    opsets = [h.make_opsetid("", 17), h.make_opsetid("com.example", 1)]
    return h.make_model(graph, opset_imports=opsets, ir_version=8)


def test_an_output_nothing_produces_is_one_error_and_no_note(cli, save):
    path = save(_model("Relu"))
    diags = cli("check", str(path), "--output-format", "json").json()
    assert [(d["code"], d["location"]["tensor"]) for d in diags] == [("OL104", "Z")]


def test_notes_on_other_outputs_do_not_quote_a_cycle_that_is_not_there(cli, save):
    path = save(_model("Lookup"))  # a custom op: no engine can shape Y, so Y keeps its OL007 note
    diags = cli("check", str(path), "--output-format", "json").json()
    assert [(d["code"], d["location"]["tensor"]) for d in diags] == [("OL007", "Y"), ("OL104", "Z")]
    note = diags[0]["message"]
    assert "cyclic" not in note
    assert "onnxruntime-symbolic: stopped: the graph outputs or reads a tensor nothing defines" in note
