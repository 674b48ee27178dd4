"""Make the optimum decoder-with-past exports in this folder, with a Python that has torch,
``transformers>=4.36,<4.58`` (what optimum 2.1 accepts), ``optimum-onnx==0.1.0``, onnxsim, onnx and
onnxruntime, offline (the model is built from a config, nothing is downloaded):

    HF_HUB_OFFLINE=1 /work/venv-torch/bin/python tests/exports/make_optimum_exports.py

A tiny random-init GPT-2 (1 layer, n_embd 16, 2 heads, vocab 100) exported by optimum-onnx as
``text-generation-with-past``, the most common LLM export path. optimum names the attention mask's
dim and each ``present.*`` output's dim 2 ``past_sequence_length + sequence_length``; the graph
computes past + seq there. Beside it, the same model rewritten by onnxsim and by ONNX Runtime's
transformer optimizer (``model_type="gpt2"``). The tests only read the committed .onnx files.

Every file is checked with ONNX Runtime at past 5 / seq 7 and past 9 / seq 11 before it is kept:
each declared dim must be what the runs return (the total-length name evaluated as past + seq).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
import onnx

HERE = Path(__file__).resolve().parent
NAMES = {"optimum": "optimum_gpt2_with_past.onnx", "onnxsim": "optimum_gpt2_with_past_onnxsim.onnx",
         "ort": "optimum_gpt2_with_past_ortopt.onnx"}
HEADS, HIDDEN = 2, 16


def export(folder: Path) -> Path:
    """optimum's own exporter on a random-init GPT-2 saved to ``folder`` (no hub download)."""
    import torch
    from optimum.exporters.onnx import main_export
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(n_layer=1, n_embd=HIDDEN, n_head=HEADS, vocab_size=100, n_positions=64)
    GPT2LMHeadModel(config).eval().save_pretrained(folder / "model")
    main_export(str(folder / "model"), output=str(folder / "onnx"), task="text-generation-with-past",
                device="cpu", do_validation=False)
    return folder / "onnx" / "model.onnx"


def simplify(source: Path, target: Path) -> None:
    import onnxsim

    model, ok = onnxsim.simplify(onnx.load(source))
    assert ok, "onnxsim could not validate its rewrite"
    onnx.save(model, target)


def ort_optimize(source: Path, target: Path) -> None:
    from onnxruntime.transformers.optimizer import optimize_model

    optimized = optimize_model(str(source), model_type="gpt2", num_heads=HEADS, hidden_size=HIDDEN,
                               opt_level=0)
    optimized.save_model_to_file(str(target))


def runtime_dims(path: Path, past: int, seq: int) -> list[str]:
    """What ONNX Runtime contradicts in the declared output dims at one past and sequence length."""
    import onnxruntime as ort

    sizes = {"batch_size": 1, "sequence_length": seq, "past_sequence_length": past,
             "past_sequence_length + sequence_length": past + seq}
    model = onnx.load(path)
    feeds = {}
    for value in model.graph.input:
        tensor = value.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else sizes[d.dim_param] for d in tensor.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if value.name == "position_ids":
            feeds[value.name] = np.arange(past, past + seq, dtype=dtype).reshape(shape)
        elif np.issubdtype(dtype, np.integer):
            feeds[value.name] = np.ones(shape, dtype=dtype)  # token id 1, every position attended
        else:
            feeds[value.name] = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    problems = []
    for value, result in zip(model.graph.output, session.run(None, feeds)):
        declared = [d.dim_value if d.HasField("dim_value") else sizes.get(d.dim_param)
                    for d in value.type.tensor_type.shape.dim]
        if len(declared) != result.ndim or any(d is not None and d != r for d, r in zip(declared, result.shape)):
            problems.append(f"{value.name}: declared {declared}, ONNX Runtime returns {list(result.shape)}")
    return problems


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        exported = export(Path(tmp))
        shutil.copy(exported, HERE / NAMES["optimum"])
    simplify(HERE / NAMES["optimum"], HERE / NAMES["onnxsim"])
    ort_optimize(HERE / NAMES["optimum"], HERE / NAMES["ort"])
    for name in NAMES.values():
        path = HERE / name
        size = path.stat().st_size
        assert size < 1_000_000, f"{name} is {size} bytes"
        for past, seq in ((5, 7), (9, 11)):
            problems = runtime_dims(path, past, seq)
            assert not problems, f"{name} at past {past} / seq {seq}: {problems}"
        print(f"{name}: {size} bytes; declarations hold at past 5/seq 7 and past 9/seq 11")


if __name__ == "__main__":
    main()
