"""Make the scoped BERT export in this folder, with a Python that has torch, transformers, onnx and
onnxruntime, offline (the model is built from a config, nothing is downloaded):

    /work/venvs/torch/bin/python tests/exports/make_bert_export.py

A tiny random-init ``transformers`` ``BertModel`` (2 layers, hidden 32, 2 heads, intermediate 64, vocab 100,
seed 0) exported by the TorchScript exporter (``dynamo=False``, opset 17) with ``input_ids`` and
``attention_mask: [batch, sequence]``, ``last_hidden_state: [batch, sequence, 32]`` and
``pooler_output: [batch, 32]``. Its node names carry the module scopes a user sees in any real BERT export
(``/encoder/layer.0/attention/self/query/MatMul``), which the model view groups by (``encoder`` >
``layer.0-1`` > ``attention``). The end-to-end test in VS Code opens it; the tests only read the .onnx file.

The file is checked before it is kept: ONNX Runtime's outputs match torch's at batch 1 / sequence 7 and
batch 3 / sequence 19 (the dynamic axes really are dynamic), and it stays small enough to commit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from transformers import BertConfig, BertModel

HERE = Path(__file__).resolve().parent
TARGET = HERE / "ts_bert_tiny.onnx"
SIZES = [(1, 7), (3, 19)]
VOCAB = 100


class TracedBert(BertModel):
    """BertModel called with its two inputs by keyword, returning a tuple.

    The TorchScript exporter fills every parameter of ``forward`` it is not given positionally, and
    transformers 5's wrappers then see ``use_cache`` twice; a subclass keeps the module scopes as they are
    (``/encoder/layer.0/...``, no wrapper's name in front).
    """

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = super().forward(input_ids=input_ids, attention_mask=attention_mask)
        return out.last_hidden_state, out.pooler_output


def build() -> TracedBert:
    """A random-init BERT small enough to commit (well under 500 kB as ONNX)."""
    torch.manual_seed(0)
    config = BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, type_vocab_size=2,
                        attn_implementation="eager")
    return TracedBert(config).eval()


def inputs(batch: int, sequence: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(batch * 100 + sequence)
    mask = np.ones((batch, sequence), dtype=np.int64)
    mask[0, sequence - 2:] = 0  # a padded first row: the mask is used, not constant
    return {"input_ids": rng.integers(0, VOCAB, (batch, sequence), dtype=np.int64), "attention_mask": mask}


def export(model: TracedBert) -> None:
    example = inputs(2, 5)
    axes = {0: "batch", 1: "sequence"}
    torch.onnx.export(model, (torch.from_numpy(example["input_ids"]), torch.from_numpy(example["attention_mask"])),
                      TARGET, dynamo=False, opset_version=17, input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state", "pooler_output"],
                      dynamic_axes={"input_ids": axes, "attention_mask": axes, "last_hidden_state": axes,
                                    "pooler_output": {0: "batch"}})


def check(model: TracedBert, exported: onnx.ModelProto) -> None:
    """ORT matches torch at two batch and sequence sizes, and the node names are scoped by module."""
    onnx.checker.check_model(exported, full_check=True)
    names = [node.name for node in exported.graph.node]
    assert any(name.startswith("/encoder/layer.0/attention/") for name in names), names[:20]
    assert any(name.startswith("/encoder/layer.1/") for name in names), names[:20]
    runner = ort.InferenceSession(exported.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch, sequence in SIZES:
        feed = inputs(batch, sequence)
        hidden, pooled = runner.run(None, feed)
        with torch.no_grad():
            expected = model(torch.from_numpy(feed["input_ids"]), torch.from_numpy(feed["attention_mask"]))
        assert hidden.shape == (batch, sequence, 32) and pooled.shape == (batch, 32), (hidden.shape, pooled.shape)
        np.testing.assert_allclose(hidden, expected[0].numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(pooled, expected[1].numpy(), rtol=1e-4, atol=1e-4)


def main() -> None:
    model = build()
    export(model)
    exported = onnx.load(TARGET)
    check(model, exported)
    size = TARGET.stat().st_size
    assert size < 500_000, size
    print(f"{TARGET.name}: {len(exported.graph.node)} nodes, {size:,} bytes")


if __name__ == "__main__":
    main()
