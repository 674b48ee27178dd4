"""Make ``optimum_gpt2_merged.onnx``: optimum's merged decoder of a tiny random-init GPT-2 (~100 kB).

    PYTHONPATH=<dir with transformers 4.57, optimum 2.1, optimum-onnx 0.1, onnx> \\
        /work/venv-torch/bin/python tests/exports/make_merged_decoder.py

optimum-onnx 0.1.0 needs transformers < 4.58 and optimum ~= 2.1. No hub access: the model is
built from a config and saved locally. Both decoders are exported with past-key-value outputs
(the first without past inputs) and fused by optimum's ``merge_decoders`` into one If on
``use_cache_branch`` whose two branches reuse every tensor name. The tests only read the
committed file; they never need torch.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import onnx
import torch
from optimum.exporters.onnx import main_export
from optimum.exporters.onnx.model_configs import GPT2OnnxConfig
from optimum.onnx.graph_transformations import merge_decoders
from transformers import AutoConfig, GPT2Config, GPT2LMHeadModel

HERE = Path(__file__).resolve().parent


def main() -> None:
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        config = GPT2Config(n_layer=1, n_head=2, n_embd=8, vocab_size=32, n_positions=32)
        GPT2LMHeadModel(config).eval().save_pretrained(work / "tiny-gpt2")
        first = GPT2OnnxConfig(AutoConfig.from_pretrained(work / "tiny-gpt2"), task="text-generation",
                               use_past=True, use_past_in_inputs=False)
        main_export(str(work / "tiny-gpt2"), str(work / "decoder"), task="text-generation-with-past",
                    custom_onnx_configs={"model": first}, do_validation=False)
        main_export(str(work / "tiny-gpt2"), str(work / "with_past"), task="text-generation-with-past",
                    do_validation=False)
        merge_decoders(onnx.load(work / "decoder" / "model.onnx"), onnx.load(work / "with_past" / "model.onnx"),
                       strict=False, save_path=str(HERE / "optimum_gpt2_merged.onnx"))


if __name__ == "__main__":
    main()
