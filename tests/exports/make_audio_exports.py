"""Make the Wav2Vec2 audio exports in this folder, with a Python that has torch, transformers, onnx and
onnxruntime, offline (the model is built from a config, nothing is downloaded):

    /tmp/venv-exporters/bin/python tests/exports/make_audio_exports.py

A tiny random-init ``Wav2Vec2ForCTC`` (1 layer, hidden 16, three 8-channel convs, vocab 12) exported by
the TorchScript exporter (``dynamo=False``, opset 17) with ``input_values: [batch, sequence]`` and
``logits: [batch, frames, 12]``. Beside it, its stale twin, made the way users make it: ONNX Runtime's
``make_dim_param_fixed`` pins batch 2 / sequence 1600, ``onnx.shape_inference.infer_shapes`` (with data
propagation, so that the sizes pass the Shape -> Reshape chains) writes value_info at those sizes, then the
graph inputs and outputs are made dynamic again. The twin's value_info keeps the sizes at batch 2 / length
1600 (319 frames after the first conv, 79 at the head) while the inputs accept any size.
This is not cosmetic: ONNX Runtime (1.32, default optimizations) folds ``Shape`` of those tensors into
constants, and the twin then fails in a ``Reshape`` at any other size. The tests only read the .onnx files.

Both files are checked with ONNX Runtime before they are kept: the healthy logits match torch at batch 1 /
length 1600 and batch 3 / length 2400; the twin's value_info disagrees with what the graph computes at the
second size, and the twin runs at the pinned size (and, with optimizations off, at the second).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnxruntime.tools.onnx_model_utils import make_dim_param_fixed
from transformers import Wav2Vec2Config, Wav2Vec2ForCTC

HERE = Path(__file__).resolve().parent
HEALTHY = HERE / "wav2vec2_tiny.onnx"
STALE = HERE / "wav2vec2_tiny_fixed_then_dynamic.onnx"
FIXED = {"batch": 2, "sequence": 1600}
SIZES = [(1, 1600), (3, 2400)]


def build() -> Wav2Vec2ForCTC:
    """A random-init model small enough to commit (about 50 kB as ONNX)."""
    torch.manual_seed(0)
    config = Wav2Vec2Config(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                            conv_dim=(8, 8, 8), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                            num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2, vocab_size=12)
    return Wav2Vec2ForCTC(config).eval()


def export(model: Wav2Vec2ForCTC) -> None:
    example = torch.randn(2, 1600)
    torch.onnx.export(model, (example,), HEALTHY, dynamo=False, opset_version=17,
                      input_names=["input_values"], output_names=["logits"],
                      dynamic_axes={"input_values": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "frames"}})


def fix_then_dynamic(healthy: onnx.ModelProto) -> onnx.ModelProto:
    """Pin the dims, infer shapes at the pinned sizes, then hand the inputs and outputs their dims back."""
    model = onnx.ModelProto()
    model.CopyFrom(healthy)
    for name, size in FIXED.items():
        make_dim_param_fixed(model.graph, name, size)
    model = onnx.shape_inference.infer_shapes(model, data_prop=True)  # through the Shape -> Reshape chains
    for stale, original in [*zip(model.graph.input, healthy.graph.input),
                            *zip(model.graph.output, healthy.graph.output)]:
        stale.type.CopyFrom(original.type)
    return model


def session(model: onnx.ModelProto, optimize: bool = True) -> ort.InferenceSession:
    options = ort.SessionOptions()
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def audio(batch: int, length: int) -> np.ndarray:
    return np.random.default_rng(batch * length).standard_normal((batch, length), dtype=np.float32)


def ort_shapes(model: onnx.ModelProto, names: list[str], batch: int, length: int) -> dict[str, list[int]]:
    """What ORT computes for ``names`` at one input size: each is made a graph output on a copy."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    probe.graph.output.extend(onnx.helper.make_value_info(name, onnx.TypeProto()) for name in names)
    results = session(probe).run(names, {"input_values": audio(batch, length)})
    return {name: list(result.shape) for name, result in zip(names, results)}


def check_healthy(model: Wav2Vec2ForCTC, healthy: onnx.ModelProto) -> None:
    """ORT's logits match torch's at both sizes: the dynamic axes really are dynamic."""
    runner = session(healthy)
    for batch, length in SIZES:
        x = audio(batch, length)
        (logits,) = runner.run(["logits"], {"input_values": x})
        with torch.no_grad():
            expected = model(torch.from_numpy(x)).logits.numpy()
        assert logits.shape == expected.shape, (logits.shape, expected.shape)
        np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-4)


def check_stale(healthy: onnx.ModelProto, stale: onnx.ModelProto) -> None:
    """The twin's value_info must disagree with what the graph computes at another size.

    The sizes come from the healthy export (the same tensor names): with its default optimizations ORT
    folds each ``Shape`` of a fully known value_info into a constant, so the twin itself fails at any size
    but batch 2 / length 1600 (ORT 1.32). It runs at the pinned size, and at the other with optimizations off.
    """
    declared = {info.name: [d.dim_value if d.HasField("dim_value") else d.dim_param
                            for d in info.type.tensor_type.shape.dim]
                for info in stale.graph.value_info if info.type.tensor_type.HasField("shape")}
    assert declared, "infer_shapes wrote no value_info"
    batch, length = SIZES[1]
    actual = ort_shapes(healthy, list(declared), batch, length)
    assert any(declared[name] != actual[name] for name in declared), "the twin's value_info is not stale"
    session(stale).run(None, {"input_values": audio(FIXED["batch"], FIXED["sequence"])})
    session(stale, optimize=False).run(None, {"input_values": audio(batch, length)})


def main() -> None:
    model = build()
    export(model)
    healthy = onnx.load(HEALTHY)
    check_healthy(model, healthy)
    stale = fix_then_dynamic(healthy)
    check_stale(healthy, stale)
    onnx.save(stale, STALE)


if __name__ == "__main__":
    main()
