"""Messages, the model view and ``--diff`` write types in one notation: ONNX's own text syntax."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from onnx_lint.model.shapes import format_info, tensor_info


@pytest.mark.parametrize(("elem_type", "shape"), [
    (TensorProto.FLOAT, [3, 5]),
    (TensorProto.FLOAT, []),            # a scalar: ONNX writes `float`
    (TensorProto.FLOAT, None),          # no shape at all: ONNX writes `float[]`
    (TensorProto.INT64, ["batch", None]),
    (TensorProto.FLOAT16, ["n"]),
    (TensorProto.BFLOAT16, [1]),
])
def test_a_type_in_a_message_reads_as_onnx_text_syntax_writes_it(elem_type, shape):
    value = helper.make_tensor_value_info("v", elem_type, shape)
    graph = helper.make_graph([], "g", [value], [value])
    printed = onnx.printer.to_text(graph).splitlines()[0]  # g (float[3,5] v) => (float[3,5] v) {
    as_printed = printed[printed.index("(") + 1:printed.index(" v)")]
    info = tensor_info(value.type)
    assert format_info(info).replace(" ", "") == as_printed
    assert onnx.parser.parse_graph(f"g ({format_info(info)} v) => ({format_info(info)} v) {{}}").input[0] == value
