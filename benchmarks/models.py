"""Generated benchmark models (no downloads): sizes from 1k to 100k nodes, healthy and weakly typed.

Weights are shared between layers so that a 100k-node model stays small on disk;
the 1 GB model keeps its weights as external data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

IR_VERSION = 8
OPSET = 17
WIDTH = 64


def _model(nodes, inputs, outputs, initializers, value_info=(), extra_opsets=()) -> onnx.ModelProto:
    graph = h.make_graph(nodes, "bench", inputs, outputs, initializers, value_info=list(value_info))
    opsets = [h.make_opsetid("", OPSET)] + [h.make_opsetid(d, v) for d, v in extra_opsets]
    return h.make_model(graph, opset_imports=opsets, ir_version=IR_VERSION, producer_name="onnx-lint-bench")


def _const(name: str, values, dtype=np.int64) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def mlp_chain(nodes: int) -> onnx.ModelProto:
    """Residual MLP layers: MatMul, Add bias, Relu, Add residual (4 nodes each)."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((rng.standard_normal((WIDTH, WIDTH)) * 0.05).astype(np.float32), "W"),
             numpy_helper.from_array(np.zeros(WIDTH, np.float32), "b")]
    body, prev = [], "X"
    for i in range(max(1, nodes // 4)):
        body += [h.make_node("MatMul", [prev, "W"], [f"mm{i}"], name=f"mm{i}"),
                 h.make_node("Add", [f"mm{i}", "b"], [f"ab{i}"], name=f"ab{i}"),
                 h.make_node("Relu", [f"ab{i}"], [f"r{i}"], name=f"r{i}"),
                 h.make_node("Add", [f"r{i}", prev], [f"res{i}"], name=f"res{i}")]
        prev = f"res{i}"
    return _model(body, [h.make_tensor_value_info("X", T.FLOAT, ["batch", WIDTH])],
                  [h.make_tensor_value_info(prev, T.FLOAT, ["batch", WIDTH])], inits)


def transformer_blocks(nodes: int, heads: int = 4) -> onnx.ModelProto:
    """Attention-like blocks full of Shape/Gather/Concat/Reshape (22 nodes each)."""
    rng = np.random.default_rng(1)
    d = WIDTH // heads
    inits = [numpy_helper.from_array((rng.standard_normal((WIDTH, WIDTH)) * 0.05).astype(np.float32), n)
             for n in ("Wq", "Wk", "Wv", "Wo")]
    inits += [_const("i0", 0), _const("i1", 1), _const("heads_d", [heads, d]), _const("minus1", [-1]),
              _const("perm_dummy", [0])]
    body, prev = [], "X"
    for i in range(max(1, nodes // 22)):
        p = f"b{i}_"
        body += [
            h.make_node("Shape", [prev], [p + "shape"]),
            h.make_node("Gather", [p + "shape", "i0"], [p + "n"], axis=0),
            h.make_node("Gather", [p + "shape", "i1"], [p + "s"], axis=0),
            h.make_node("Unsqueeze", [p + "n", "perm_dummy"], [p + "n1"]),
            h.make_node("Unsqueeze", [p + "s", "perm_dummy"], [p + "s1"]),
            h.make_node("Concat", [p + "n1", p + "s1", "heads_d"], [p + "split_shape"], axis=0),
            h.make_node("MatMul", [prev, "Wq"], [p + "q"]),
            h.make_node("MatMul", [prev, "Wk"], [p + "k"]),
            h.make_node("MatMul", [prev, "Wv"], [p + "v"]),
            h.make_node("Reshape", [p + "q", p + "split_shape"], [p + "qh"]),
            h.make_node("Reshape", [p + "k", p + "split_shape"], [p + "kh"]),
            h.make_node("Reshape", [p + "v", p + "split_shape"], [p + "vh"]),
            h.make_node("Transpose", [p + "qh"], [p + "qt"], perm=[0, 2, 1, 3]),
            h.make_node("Transpose", [p + "kh"], [p + "kt"], perm=[0, 2, 3, 1]),
            h.make_node("Transpose", [p + "vh"], [p + "vt"], perm=[0, 2, 1, 3]),
            h.make_node("MatMul", [p + "qt", p + "kt"], [p + "scores"]),
            h.make_node("Softmax", [p + "scores"], [p + "probs"], axis=-1),
            h.make_node("MatMul", [p + "probs", p + "vt"], [p + "ctx"]),
            h.make_node("Transpose", [p + "ctx"], [p + "ctx_t"], perm=[0, 2, 1, 3]),
            h.make_node("Concat", [p + "n1", p + "s1", "minus1"], [p + "merge_shape"], axis=0),
            h.make_node("Reshape", [p + "ctx_t", p + "merge_shape"], [p + "merged"]),
            h.make_node("MatMul", [p + "merged", "Wo"], [p + "out"]),
        ]
        prev = p + "out"
    return _model(body, [h.make_tensor_value_info("X", T.FLOAT, ["batch", "seq", WIDTH])],
                  [h.make_tensor_value_info(prev, T.FLOAT, ["batch", "seq", WIDTH])], inits)


def conv_net(blocks: int = 12) -> onnx.ModelProto:
    """A conv net with symbolic height and width (where ORT's symbolic inference is ~1000x slower)."""
    rng = np.random.default_rng(2)
    inits, body, prev, channels = [], [], "image", 3
    for i in range(blocks):
        out = 16 if i < blocks // 2 else 32
        inits.append(numpy_helper.from_array((rng.standard_normal((out, channels, 3, 3)) * 0.1).astype(np.float32),
                                             f"cw{i}"))
        body += [h.make_node("Conv", [prev, f"cw{i}"], [f"c{i}"], pads=[1, 1, 1, 1]),
                 h.make_node("Relu", [f"c{i}"], [f"cr{i}"])]
        prev, channels = f"cr{i}", out
        if i % 3 == 2:
            body.append(h.make_node("MaxPool", [prev], [f"p{i}"], kernel_shape=[2, 2], strides=[2, 2]))
            prev = f"p{i}"
    body.append(h.make_node("GlobalAveragePool", [prev], ["pooled"]))
    body.append(h.make_node("Flatten", ["pooled"], ["features"]))
    return _model(body, [h.make_tensor_value_info("image", T.FLOAT, ["N", 3, "H", "W"])],
                  [h.make_tensor_value_info("features", T.FLOAT, ["N", channels])], inits)


def symbolic_fallback(nodes: int = 400) -> onnx.ModelProto:
    """An MLP whose stale rank-0 output sits behind a com.microsoft Gelu: only ORT's engine resolves it."""
    model = mlp_chain(nodes)
    last = model.graph.output[0].name
    model.graph.node.append(h.make_node("Gelu", [last], ["gelu_out"], domain="com.microsoft"))
    del model.graph.output[:]
    model.graph.output.append(h.make_tensor_value_info("gelu_out", T.FLOAT, []))
    model.opset_import.append(h.make_opsetid("com.microsoft", 1))
    return model


def weakly_typed(model: onnx.ModelProto, stale_value_info: int = 200) -> onnx.ModelProto:
    """The same graph with a stale rank-0 output and stale value_info entries (wrong last dim)."""
    weak = onnx.ModelProto()
    weak.CopyFrom(model)
    inferred = onnx.shape_inference.infer_shapes(model)
    step = max(1, len(inferred.graph.value_info) // max(1, stale_value_info))
    for value in list(inferred.graph.value_info)[::step][:stale_value_info]:
        entry = weak.graph.value_info.add()
        entry.CopyFrom(value)
        dims = entry.type.tensor_type.shape.dim
        if len(dims):
            dims[len(dims) - 1].Clear()
            dims[len(dims) - 1].dim_value = 7  # concrete and wrong
    output = weak.graph.output[0]
    output.type.tensor_type.ClearField("shape")
    output.type.tensor_type.shape.SetInParent()  # declared rank 0
    return weak


def resnet18(batch: str = "batch") -> onnx.ModelProto:
    """A resnet18-sized CNN as TorchScript exports it in eval mode: BatchNorm folded into Conv biases,
    11.7M float weights embedded (47 MB), no value_info."""
    rng = np.random.default_rng(5)
    inits: list[onnx.TensorProto] = []
    body: list[onnx.NodeProto] = []

    def conv(x: str, cin: int, cout: int, k: int, stride: int, name: str) -> str:
        w = rng.standard_normal((cout, cin, k, k), dtype=np.float32) * np.float32(0.05)
        inits.extend([numpy_helper.from_array(w, f"{name}.weight"),
                      numpy_helper.from_array(np.zeros(cout, np.float32), f"{name}.bias")])
        body.append(h.make_node("Conv", [x, f"{name}.weight", f"{name}.bias"], [name], name=f"/{name}/Conv",
                                kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4))
        return name

    def relu(x: str) -> str:
        body.append(h.make_node("Relu", [x], [f"{x}_relu"], name=f"/{x}/Relu"))
        return f"{x}_relu"

    x = relu(conv("input", 3, 64, 7, 2, "conv1"))
    body.append(h.make_node("MaxPool", [x], ["pool"], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4))
    x, channels = "pool", 64
    for stage, width in enumerate((64, 128, 256, 512), start=1):
        for block in range(2):
            stride = 2 if stage > 1 and block == 0 else 1
            name = f"layer{stage}.{block}"
            y = relu(conv(x, channels, width, 3, stride, f"{name}.conv1"))
            y = conv(y, width, width, 3, 1, f"{name}.conv2")
            skip = conv(x, channels, width, 1, stride, f"{name}.downsample") if stride == 2 else x
            body.append(h.make_node("Add", [y, skip], [f"{name}.add"], name=f"/{name}/Add"))
            x, channels = relu(f"{name}.add"), width
    body += [h.make_node("GlobalAveragePool", [x], ["gap"]), h.make_node("Flatten", ["gap"], ["flat"], axis=1)]
    fc = rng.standard_normal((1000, 512), dtype=np.float32) * np.float32(0.05)
    inits += [numpy_helper.from_array(fc, "fc.weight"), numpy_helper.from_array(np.zeros(1000, np.float32), "fc.bias")]
    body.append(h.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], transB=1, name="/fc/Gemm"))
    return _model(body, [h.make_tensor_value_info("input", T.FLOAT, [batch, 3, 224, 224])],
                  [h.make_tensor_value_info("logits", T.FLOAT, [batch, 1000])], inits)


def stale_output(model: onnx.ModelProto) -> onnx.ModelProto:
    """The same model with its first output declared rank 0 (one stale output)."""
    stale = onnx.ModelProto()
    stale.CopyFrom(model)
    output = stale.graph.output[0].type.tensor_type
    output.ClearField("shape")
    output.shape.SetInParent()
    return stale


def dynamo_style(model: onnx.ModelProto) -> onnx.ModelProto:
    """``value_info`` for every initializer and intermediate tensor, as ``torch.onnx.export(dynamo=True)``
    writes it; ONNX inference never lists initializers, so only the tensors prove those entries."""
    annotated = onnx.shape_inference.infer_shapes(model)
    for init in model.graph.initializer:
        annotated.graph.value_info.append(h.make_tensor_value_info(init.name, init.data_type, list(init.dims)))
    return annotated


def external_chain(folder: Path, nodes: int, width: int = 32) -> Path:
    """An MLP chain with its own weights per layer, all stored as external data in one file.

    The layout of every large export: ~nodes/2 external tensors pointing into one ``.data`` file.
    """
    rng = np.random.default_rng(4)
    inits, body, prev = [], [], "X"
    for i in range(max(1, nodes // 4)):
        inits += [numpy_helper.from_array((rng.standard_normal((width, width)) * 0.05).astype(np.float32), f"W{i}"),
                  numpy_helper.from_array(np.zeros(width, np.float32), f"b{i}")]
        body += [h.make_node("MatMul", [prev, f"W{i}"], [f"mm{i}"], name=f"mm{i}"),
                 h.make_node("Add", [f"mm{i}", f"b{i}"], [f"ab{i}"], name=f"ab{i}"),
                 h.make_node("Relu", [f"ab{i}"], [f"r{i}"], name=f"r{i}"),
                 h.make_node("Add", [f"r{i}", prev], [f"res{i}"], name=f"res{i}")]
        prev = f"res{i}"
    model = _model(body, [h.make_tensor_value_info("X", T.FLOAT, ["batch", width])],
                   [h.make_tensor_value_info(prev, T.FLOAT, ["batch", width])], inits)
    path = folder / f"external_chain_{nodes}.onnx"
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=f"{path.name}.data", size_threshold=0)
    return path


def external_weights(folder: Path, gigabytes: float = 1.0) -> Path:
    """A small graph whose weights (``gigabytes`` of them) live in an external data file."""
    rows = int(gigabytes * 2**30 / 4 / 4096)
    path = folder / "external_1gb.onnx"
    data = folder / "external_1gb.onnx.data"
    weight = onnx.TensorProto(name="W", data_type=T.FLOAT, dims=[rows, 4096])
    weight.data_location = T.EXTERNAL
    for key, value in (("location", data.name), ("offset", "0"), ("length", str(rows * 4096 * 4))):
        weight.external_data.add(key=key, value=value)
    with open(data, "wb") as handle:  # written in chunks: the generator itself stays small in memory
        chunk = np.random.default_rng(3).standard_normal((1024, 4096)).astype(np.float32).tobytes()
        for _ in range(rows // 1024):
            handle.write(chunk)
        handle.write(chunk[: (rows % 1024) * 4096 * 4])
    nodes = [h.make_node("Gather", ["W", "ids"], ["rows"], axis=0), h.make_node("Relu", ["rows"], ["Y"])]
    model = _model(nodes, [h.make_tensor_value_info("ids", T.INT64, ["n"])],
                   [h.make_tensor_value_info("Y", T.FLOAT, ["n", 4096])], [weight])
    path.write_bytes(model.SerializeToString())
    return path


def node_count(model: onnx.ModelProto) -> int:
    return len(model.graph.node)


def small_initializer_chain(nodes: int, width: int = 4) -> onnx.ModelProto:
    """A MatMul + Add chain with its own tiny weights per layer, embedded in the file: ~nodes/2 initializers.

    The shape where per-tensor Python work dominates (a 4x4 weight costs as much to visit as a 4096x4096 one).
    """
    rng = np.random.default_rng(5)
    inits, body, prev = [], [], "X"
    for i in range(max(1, nodes // 2)):
        inits += [numpy_helper.from_array((rng.standard_normal((width, width)) * 0.5).astype(np.float32), f"W{i}"),
                  numpy_helper.from_array(np.zeros(width, np.float32), f"b{i}")]
        body += [h.make_node("MatMul", [prev, f"W{i}"], [f"mm{i}"], name=f"mm{i}"),
                 h.make_node("Add", [f"mm{i}", f"b{i}"], [f"ab{i}"], name=f"ab{i}")]
        prev = f"ab{i}"
    return _model(body, [h.make_tensor_value_info("X", T.FLOAT, ["batch", width])],
                  [h.make_tensor_value_info(prev, T.FLOAT, ["batch", width])], inits)


def llm_decoder(folder: Path, layers: int = 32, hidden: int = 4096, ffn: int = 11008, vocab: int = 32000,
                name: str = "llm_decoder") -> Path:
    """A decoder-only transformer in the shape of a 7B LLM, FP16 weights in one *sparse* external file.

    Every layer has the projections, norms and MLP of a Llama block (as plain ONNX ops), every weight an
    FP16 external tensor at its real size; the data file is made with ``truncate``, so 13 GB of weights take
    no disk and are never read (linting does not open weight files).
    """
    offset, inits, body = 0, [], []

    def weight(tensor_name: str, dims: list[int]) -> str:
        nonlocal offset
        tensor = onnx.TensorProto(name=tensor_name, data_type=T.FLOAT16, dims=dims)
        tensor.data_location = T.EXTERNAL
        length = int(np.prod(dims)) * 2
        for key, value in (("location", f"{name}.onnx.data"), ("offset", str(offset)), ("length", str(length))):
            tensor.external_data.add(key=key, value=value)
        offset += (length + 4095) // 4096 * 4096
        inits.append(tensor)
        return tensor_name

    def rms_norm(x: str, scale: str, out: str) -> list[onnx.NodeProto]:
        """LlamaRMSNorm as torch.onnx exports it: x / sqrt(mean(x * x) + eps) * scale."""
        return [h.make_node("Mul", [x, x], [out + "_sq"], name=out + "_sq"),
                h.make_node("ReduceMean", [out + "_sq"], [out + "_ms"], name=out + "_ms", axes=[-1], keepdims=1),
                h.make_node("Add", [out + "_ms", "rms_eps"], [out + "_eps"], name=out + "_eps"),
                h.make_node("Sqrt", [out + "_eps"], [out + "_rms"], name=out + "_rms"),
                h.make_node("Div", [x, out + "_rms"], [out + "_x"], name=out + "_x"),
                h.make_node("Mul", [out + "_x", scale], [out], name=out)]

    inits.append(h.make_tensor("rms_eps", T.FLOAT16, [], [1e-5]))
    body.append(h.make_node("Gather", [weight("embed", [vocab, hidden]), "input_ids"], ["h0"], name="embed"))
    prev = "h0"
    for i in range(layers):
        p = f"l{i}_"
        body += [
            *rms_norm(prev, weight(p + "ln1", [hidden]), p + "n1"),
            h.make_node("MatMul", [p + "n1", weight(p + "wq", [hidden, hidden])], [p + "q"], name=p + "q"),
            h.make_node("MatMul", [p + "n1", weight(p + "wk", [hidden, hidden])], [p + "k"], name=p + "k"),
            h.make_node("MatMul", [p + "n1", weight(p + "wv", [hidden, hidden])], [p + "v"], name=p + "v"),
            h.make_node("Mul", [p + "q", p + "k"], [p + "qk"], name=p + "qk"),
            h.make_node("Add", [p + "qk", p + "v"], [p + "att"], name=p + "att"),
            h.make_node("MatMul", [p + "att", weight(p + "wo", [hidden, hidden])], [p + "o"], name=p + "o"),
            h.make_node("Add", [prev, p + "o"], [p + "r1"], name=p + "r1"),
            *rms_norm(p + "r1", weight(p + "ln2", [hidden]), p + "n2"),
            h.make_node("MatMul", [p + "n2", weight(p + "wg", [hidden, ffn])], [p + "g"], name=p + "g"),
            h.make_node("MatMul", [p + "n2", weight(p + "wu", [hidden, ffn])], [p + "u"], name=p + "u"),
            h.make_node("Sigmoid", [p + "g"], [p + "gs"], name=p + "gs"),
            h.make_node("Mul", [p + "g", p + "gs"], [p + "silu"], name=p + "silu"),
            h.make_node("Mul", [p + "silu", p + "u"], [p + "gu"], name=p + "gu"),
            h.make_node("MatMul", [p + "gu", weight(p + "wd", [ffn, hidden])], [p + "d"], name=p + "d"),
            h.make_node("Add", [p + "r1", p + "d"], [p + "out"], name=p + "out"),
        ]
        prev = p + "out"
    body.append(h.make_node("MatMul", [prev, weight("lm_head", [hidden, vocab])], ["logits"], name="lm_head"))
    model = _model(body, [h.make_tensor_value_info("input_ids", T.INT64, ["batch", "sequence_length"])],
                   [h.make_tensor_value_info("logits", T.FLOAT16, ["batch", "sequence_length", vocab])], inits)
    path = folder / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    with open(folder / f"{name}.onnx.data", "wb") as handle:
        handle.truncate(offset)  # sparse: no disk used, and lint never reads it
    return path
