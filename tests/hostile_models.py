"""Small models built in code that attack the runtime probe: runs that never end, names too long for argv,
shapes that depend on the data, integer and bool inputs."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

OPSETS = [h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 3)]


def _scaler(source: str, target: str) -> onnx.NodeProto:
    """An ``ai.onnx.ml`` op: no static engine shapes its output, so the probe has to run the model."""
    return h.make_node("Scaler", [source], [target], domain="ai.onnx.ml", offset=[0.0], scale=[1.0])


def _model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    graph = h.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return h.make_model(graph, opset_imports=OPSETS, ir_version=8)


def endless_loop(padding_bytes: int = 0) -> onnx.ModelProto:
    """A Loop with trip count 2**62 feeding an ``ai.onnx.ml`` op: the probe's run never ends.

    ``padding_bytes`` of unused weights make the file larger without changing what runs.
    """
    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"]), h.make_node("Add", ["v_in", "one"], ["v_out"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("v_in", T.FLOAT, None)],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("v_out", T.FLOAT, None)],
        [numpy_helper.from_array(np.ones(1, np.float32), "one")])
    initializers = [numpy_helper.from_array(np.array(2**62, np.int64), "trips"),
                    numpy_helper.from_array(np.array(True), "go")]
    if padding_bytes:
        initializers.append(numpy_helper.from_array(np.zeros(padding_bytes // 4, np.float32), "unused"))
    nodes = [h.make_node("Loop", ["trips", "go", "X"], ["v"], body=body), _scaler("v", "Y")]
    return _model(nodes, [h.make_tensor_value_info("X", T.FLOAT, ["N"])],
                  [h.make_tensor_value_info("Y", T.FLOAT, [])], initializers)


def long_names(output_name_chars: int = 0, inputs: int = 1, input_name_chars: int = 1) -> onnx.ModelProto:
    """``inputs`` float inputs with names of ``input_name_chars`` characters, concatenated, through an
    ``ai.onnx.ml`` op, to an output named with ``output_name_chars`` characters (declared rank 0: stale)."""
    names = [f"{k:05d}".ljust(input_name_chars, "x") for k in range(inputs)]
    out = "y" * max(1, output_name_chars)
    nodes = [h.make_node("Concat", names, ["joined"], axis=1), _scaler("joined", out)]
    return _model(nodes, [h.make_tensor_value_info(n, T.FLOAT, ["N", 1]) for n in names],
                  [h.make_tensor_value_info(out, T.FLOAT, [])])


def data_dependent() -> onnx.ModelProto:
    """Three outputs whose second dim depends on the values, not the sizes, of ``X`` (declared rank 0)."""
    five = numpy_helper.from_array(np.array(5.0, np.float32), "five")
    flat = numpy_helper.from_array(np.array([-1], np.int64), "flat")
    start = numpy_helper.from_array(np.array([1], np.int64), "start")
    stop = numpy_helper.from_array(np.array([2], np.int64), "stop")
    nodes = [
        _scaler("X", "s"),
        h.make_node("Greater", ["s", "five"], ["big"]),
        # NonZero(X > 5): [2, count]
        h.make_node("NonZero", ["big"], ["where"]),
        h.make_node("Cast", ["where"], ["where_f"], to=T.FLOAT),
        _scaler("where_f", "nonzero"),
        # Unique(round(X)): [count]
        h.make_node("Round", ["s"], ["rounded"]),
        h.make_node("Reshape", ["rounded", "flat"], ["rounded_flat"]),
        h.make_node("Unique", ["rounded_flat"], ["uniq"], sorted=1),
        _scaler("uniq", "unique"),
        # TopK with k = the number of values above 5
        h.make_node("Shape", ["where"], ["where_shape"]),
        h.make_node("Slice", ["where_shape", "start", "stop"], ["k"]),
        h.make_node("Reshape", ["s", "flat"], ["s_flat"]),
        h.make_node("TopK", ["s_flat", "k"], ["top", "top_index"]),
        _scaler("top", "topk"),
    ]
    outputs = [h.make_tensor_value_info(n, T.FLOAT, []) for n in ("nonzero", "unique", "topk")]
    return _model(nodes, [h.make_tensor_value_info("X", T.FLOAT, [2, "N"])], outputs, [five, flat, start, stop])


def token_model() -> onnx.ModelProto:
    """A decoder's front: Gather on an embedding by int64 ``input_ids``, times an int64 ``attention_mask``,
    through an ``ai.onnx.ml`` op (declared rank 0: stale), and an If steered by a bool input."""
    embedding = numpy_helper.from_array(np.ones((50, 8), np.float32), "embedding")
    then = h.make_graph([h.make_node("Identity", ["hidden"], ["chosen"])], "then", [],
                        [h.make_tensor_value_info("chosen", T.FLOAT, None)])
    other = h.make_graph([h.make_node("Neg", ["hidden"], ["negated"])], "else", [],
                         [h.make_tensor_value_info("negated", T.FLOAT, None)])
    nodes = [
        h.make_node("Gather", ["embedding", "input_ids"], ["embedded"]),
        h.make_node("Cast", ["attention_mask"], ["mask_f"], to=T.FLOAT),
        h.make_node("Unsqueeze", ["mask_f", "last"], ["mask_3d"]),
        h.make_node("Mul", ["embedded", "mask_3d"], ["hidden"]),
        h.make_node("If", ["use_cache"], ["branch"], then_branch=then, else_branch=other),
        _scaler("branch", "logits"),
    ]
    inputs = [h.make_tensor_value_info("input_ids", T.INT64, ["batch", "seq"]),
              h.make_tensor_value_info("attention_mask", T.INT64, ["batch", "seq"]),
              h.make_tensor_value_info("use_cache", T.BOOL, [])]
    last = numpy_helper.from_array(np.array([-1], np.int64), "last")
    return _model(nodes, inputs, [h.make_tensor_value_info("logits", T.FLOAT, [])], [embedding, last])


def branch_model() -> onnx.ModelProto:
    """``Y``'s last dim is 8 when ``use_cache`` is true and 16 when it is false (optimum's merged decoders
    switch shapes the same way); declared ``[N, 8]`` after the true branch."""
    then = h.make_graph([h.make_node("Identity", ["s"], ["kept"])], "then", [],
                        [h.make_tensor_value_info("kept", T.FLOAT, None)])
    other = h.make_graph([h.make_node("Concat", ["s", "s"], ["doubled"], axis=-1)], "else", [],
                         [h.make_tensor_value_info("doubled", T.FLOAT, None)])
    nodes = [_scaler("X", "s"), h.make_node("If", ["use_cache"], ["Y"], then_branch=then, else_branch=other)]
    inputs = [h.make_tensor_value_info("X", T.FLOAT, ["N", 8]), h.make_tensor_value_info("use_cache", T.BOOL, [])]
    return _model(nodes, inputs, [h.make_tensor_value_info("Y", T.FLOAT, ["N", 8])])


def tile_bomb(repeats: int = 280_000_000) -> onnx.ModelProto:
    """A 166-byte model whose run asks for 3.36 GB (a Tile of the 3-element input): above the probe's cap."""
    reps = numpy_helper.from_array(np.array([repeats], np.int64), "reps")
    nodes = [h.make_node("Tile", ["X", "reps"], ["t"]), _scaler("t", "Y")]
    return _model(nodes, [h.make_tensor_value_info("X", T.FLOAT, ["N"])],
                  [h.make_tensor_value_info("Y", T.FLOAT, [])], [reps])


def topk_from_input() -> onnx.ModelProto:
    """TopK whose k is an int64 input: the output's size is that input's value (declared rank 0)."""
    nodes = [_scaler("X", "s"), h.make_node("TopK", ["s", "k"], ["top", "index"]), _scaler("top", "Y")]
    inputs = [h.make_tensor_value_info("X", T.FLOAT, [10]), h.make_tensor_value_info("k", T.INT64, [1])]
    return _model(nodes, inputs, [h.make_tensor_value_info("Y", T.FLOAT, [])])


def one_row_table() -> onnx.ModelProto:
    """Gather from a one-row table by int64 ids: only id 0 is valid (declared rank 0)."""
    table = numpy_helper.from_array(np.ones((1, 4), np.float32), "table")
    nodes = [h.make_node("Gather", ["table", "ids"], ["rows"]), _scaler("rows", "Y")]
    return _model(nodes, [h.make_tensor_value_info("ids", T.INT64, ["batch"])],
                  [h.make_tensor_value_info("Y", T.FLOAT, [])], [table])
