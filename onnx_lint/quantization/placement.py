"""Where Q/DQ go, beyond ONNX Runtime's choices: output layers stay FP16, float readers read float.

Two rules, each measured against NVIDIA ModelOpt 0.47 on the models of
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
"""

from __future__ import annotations

from collections.abc import Collection

import onnx

from onnx_lint.graphs import outer_reads

HEAD_OPS = frozenset({"Conv", "ConvTranspose", "MatMul", "Gemm"})


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
