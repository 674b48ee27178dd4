"""FP16 conversion of a QDQ model, keeping Q/DQ consistent and the model sorted.

ONNX Runtime's converter (``onnxruntime.transformers.float16``) turns the
remaining float computation, Q/DQ scales included, into FP16 and inserts casts
at float32 graph inputs and outputs; it can leave the inserted Cast nodes after
their consumers, which ONNX Runtime tolerates but the checker rejects, so the
nodes are put back in topological order afterwards.
"""

from __future__ import annotations

import logging

import onnx

from onnx_lint.errors import OnnxLintError
from onnx_lint.graphs import sort_topologically


class ConversionError(OnnxLintError):
    """A conversion step failed; the message says which and why."""


def convert_to_fp16(model: onnx.ModelProto, keep_io_types: bool = True,
                    keep_nodes: tuple[str, ...] = ()) -> onnx.ModelProto:
    """``keep_nodes`` (quantize's --exclude-nodes) stay FP32, and so do initializers only they read:
    what OL201 suggests for constants FP16 cannot hold."""
    from onnxruntime.transformers.float16 import convert_float_to_float16

    logging.getLogger("onnxruntime.transformers.float16").setLevel(logging.ERROR)
    try:
        converted = convert_float_to_float16(model, keep_io_types=keep_io_types, disable_shape_infer=False,
                                             node_block_list=list(keep_nodes))
    except Exception as exc:
        raise ConversionError(f"FP16 conversion failed: {type(exc).__name__}: {exc}") from None
    try:
        sort_topologically(converted.graph)
    except ValueError as exc:
        raise ConversionError(f"the converted model has a dependency cycle: {exc}") from None
    return converted
