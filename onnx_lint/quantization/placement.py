"""Where Q/DQ go, beyond ONNX Runtime's choices: output layers and layers INT8 cannot speed up stay FP16,
float readers read float.

Three rules, each measured against NVIDIA ModelOpt 0.47 on the models of
``benchmarks/quantize_vs_modelopt.py`` (cosine of the worst output on held-out
samples; README, "Side by side with NVIDIA ModelOpt"):

- **Output layers stay FP16.** The last Conv/ConvTranspose/MatMul/Gemm on the
  way to each graph output (a classifier's Gemm, a detector's box and score
  heads) passes its INT8 rounding to the output undiluted, and with a batch of 1
  it is a matrix-vector product that INT8 hardly speeds up (ModelOpt leaves such
  GEMVs out for the same reason). mtcnn onet 0.99938 -> 0.99970, timm
  efficientnet 0.999944 -> 0.999967, convnext 0.99952 -> 0.99967.
- **Only INT8 readers read the INT8 copy.** ORT's quantizer gives a tensor one
  Q/DQ pair and points *every* reader at the dequantized copy, so a residual
  Add or a LayerNorm that stays FP16 also pays the INT8 rounding of a tensor it
  merely shares with a Conv. Readers that do not compute in INT8 read the
  float tensor instead (convnext 0.99944 -> 0.99952).
- **INT8 only where it pays** (ModelOpt's and TensorRT's rules, ported from
  ``modelopt/onnx/quantization/graph_utils.py``): a MatMul/Gemm that is a
  matrix-vector product at the calibration shapes (a dim of 1) or has N or K
  below 16, and a Conv with fewer than 16 input or output channels (unless
  INT8 kernels exist for its shape: a multiple of 8 channels and a square
  kernel, or a grouped 3x3+ Conv with a multiple of 8 outputs), gain no speed
  from INT8 and only lose accuracy (mtcnn rnet 0.99926 -> 0.99961, onet 0.99970 -> 0.99981).
"""

from __future__ import annotations

from collections.abc import Collection

import onnx

from onnx_lint.model.graphs import outer_reads

HEAD_OPS = frozenset({"Conv", "ConvTranspose", "MatMul", "Gemm"})
MIN_GEMM_DIM = 16  # INT8 tensor-core kernels need K and N >= 16 (ModelOpt's _MIN_MATMUL_DIM)
MIN_CONV_CHANNELS = 16


def no_int8_gain(model: onnx.ModelProto, input_shapes: dict[str, tuple[int, ...]],
                 op_types: Collection[str], *, inferred: dict[str, list[int]] | None = None) -> list[str]:
    """Names of the MatMul/Gemm and Conv nodes INT8 cannot speed up (module docstring), at these input shapes.

    Shapes come from ONNX's inference with the inputs pinned to the calibration
    sample's shapes; a node whose shapes stay unknown keeps its INT8.
    """
    wanted = set(op_types)
    weights = {i.name: tuple(i.dims) for i in model.graph.initializer}
    if inferred is None:  # ``inferred``: ``inferred_shapes(model, input_shapes)``, when the caller has it already
        inferred = inferred_shapes(model, input_shapes) if wanted & {"MatMul", "Gemm"} else {}
    shapes = inferred
    found = []
    for node in model.graph.node:
        if node.op_type not in wanted or not node.name:
            continue
        if node.op_type in ("MatMul", "Gemm") and _small_gemm(node, shapes, weights):
            found.append(node.name)
        elif node.op_type == "Conv" and _small_conv(node, weights, {i.name for i in model.graph.input}):
            found.append(node.name)
    return found


def inferred_shapes(model: onnx.ModelProto, input_shapes: dict[str, tuple[int, ...]]) -> dict[str, list[int]]:
    pinned = onnx.ModelProto()
    pinned.CopyFrom(model)
    for value in pinned.graph.input:
        shape = input_shapes.get(value.name)
        dims = value.type.tensor_type.shape.dim
        if shape is not None and len(dims) == len(shape):
            for dim, size in zip(dims, shape):
                dim.Clear()
                dim.dim_value = size
    try:
        inferred = onnx.shape_inference.infer_shapes(pinned)
    except Exception:  # a model above 2 GiB or one inference refuses: no shapes, nothing excluded
        return {}
    return {v.name: [d.dim_value if d.HasField("dim_value") else 0 for d in v.type.tensor_type.shape.dim]
            for v in [*inferred.graph.value_info, *inferred.graph.output, *inferred.graph.input]
            if v.type.tensor_type.HasField("shape")}


def _small_gemm(node: onnx.NodeProto, shapes: dict[str, list[int]], weights: dict[str, tuple[int, ...]]) -> bool:
    out = shapes.get(node.output[0])
    if not out or len(out) < 2:
        return False
    constant_b = node.input[1] in weights
    if not constant_b and 1 in (out[-1], out[-2]):
        return True  # activation x activation with a dim of 1
    if constant_b and len(out) < 3 and 1 in out:
        return True  # a matrix-vector product (one row at the calibration batch)
    b = weights.get(node.input[1]) or tuple(shapes.get(node.input[1], ()))
    transposed = node.op_type == "Gemm" and any(a.name == "transB" and a.i for a in node.attribute)
    k = b[-1 if transposed else -2] if len(b) >= 2 else 0
    return 0 < out[-1] < MIN_GEMM_DIM or 0 < k < MIN_GEMM_DIM


def _small_conv(node: onnx.NodeProto, weights: dict[str, tuple[int, ...]], graph_inputs: set[str]) -> bool:
    w = weights.get(node.input[1]) if len(node.input) > 1 else None
    if not w or not 3 <= len(w) <= 5:
        return False
    out_ch, in_ch = w[0], w[1]
    if out_ch >= MIN_CONV_CHANNELS and in_ch >= MIN_CONV_CHANNELS:
        return False
    attrs = {a.name: a for a in node.attribute}
    group = attrs["group"].i if "group" in attrs else 1
    kernel = list(attrs["kernel_shape"].ints) if "kernel_shape" in attrs else list(w[2:])
    if (group == 1 and (out_ch % 8 == 0 or in_ch % 8 == 0) and len(set(kernel)) == 1
            and (any(i in graph_inputs for i in node.input) or max(out_ch, in_ch) >= MIN_CONV_CHANNELS)):
        return False
    return not (group > 1 and out_ch % 8 == 0 and all(k >= 3 for k in kernel))


def output_layers(model: onnx.ModelProto, op_types: Collection[str]) -> list[str]:
    """Names of the compute nodes (``HEAD_OPS`` among ``op_types``) that reach a graph output without
    passing through another one: walking back from each output, the first such node on every path.
    None when they are all the compute nodes the model has (a one-layer model keeps its INT8)."""
    wanted = HEAD_OPS & set(op_types)
    producer = {o: n for n in model.graph.node for o in n.output if o}
    found: list[str] = []
    seen: set[int] = set()
    stack = [o.name for o in model.graph.output]
    while stack:
        node = producer.get(stack.pop())
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.op_type in wanted:
            if node.name:
                found.append(node.name)
            continue
        stack.extend(i for i in node.input if i)
    others = any(n.op_type in wanted and n.name not in found for n in model.graph.node)
    return sorted(found) if others else []


def float_readers_read_float(model: onnx.ModelProto, int8_ops: Collection[str], excluded: Collection[str]) -> int:
    """Point the readers of a dequantized activation that do not compute in INT8 (their op type is not
    quantized, or the node is excluded) at the float tensor the QuantizeLinear reads; returns how many
    inputs moved. Q/DQ pairs no reader needs any more are removed."""
    graph = model.graph
    int8_ops, excluded = set(int8_ops), set(excluded)
    producer = {o: n for n in graph.node for o in n.output if o}
    weights = {i.name for i in graph.initializer}
    outputs = {o.name for o in graph.output}
    source: dict[str, str] = {}  # dequantized activation -> the float tensor it copies
    for dq in graph.node:
        if dq.op_type != "DequantizeLinear" or dq.output[0] in outputs:
            continue
        q = producer.get(dq.input[0])
        if q is not None and q.op_type == "QuantizeLinear" and q.input[0] not in weights:
            source[dq.output[0]] = q.input[0]
    moved = 0
    for node in graph.node:
        if node.op_type in ("QuantizeLinear", "DequantizeLinear"):
            continue
        if node.op_type in int8_ops and node.name not in excluded:
            continue
        for k, name in enumerate(node.input):
            if name in source:
                node.input[k] = source[name]
                moved += 1
    if moved:
        _drop_unread_qdq(graph)
    return moved


def _drop_unread_qdq(graph: onnx.GraphProto) -> None:
    """Remove DequantizeLinear nodes nothing reads, then the QuantizeLinear nodes only they read."""
    for op_type in ("DequantizeLinear", "QuantizeLinear"):
        read = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
        read |= {i for n in graph.node for i in outer_reads(n)}  # a subgraph may read the copy too
        for node in [n for n in graph.node if n.op_type == op_type and not any(o in read for o in n.output)]:
            graph.node.remove(node)
