"""Make optimum's merged seq2seq decoders in this folder, with a Python that has torch,
``transformers>=4.36,<4.58`` (what optimum-onnx 0.1.0 accepts), ``optimum-onnx==0.1.0`` (optimum 2.1),
onnx and onnxruntime, offline (the models are built from configs, nothing is downloaded):

    HF_HUB_OFFLINE=1 /tmp/venv-optimum/bin/python tests/exports/make_seq2seq_exports.py

A tiny random-init T5 and Whisper (1 encoder and 1 decoder layer, d_model 16, 2 heads of 8, vocab 64),
each exported by optimum-onnx with a ``*-with-past`` task, which writes ``decoder_model_merged.onnx``: one
``If`` on ``use_cache_branch`` whose else branch is the first step (it computes the cross-attention
cache) and whose then branch is every later step (it reuses the cache). Only the merged decoders are kept.

The defect they carry: the graph declares ``present.*.encoder.*`` as
``[batch_size, heads, encoder_sequence_length, head_dim]``, and the else branch returns that, but the then
branch returns a ``Constant`` placeholder of shape ``[0, heads, 1, head_dim]`` (optimum's runtime never
reads it; it keeps the cross-attention cache from the first step). The tests only read the .onnx files.

Both files are checked with ONNX Runtime before they are kept, at two sizes of every dynamic dim: on the
else branch every declared output dim holds; on the then branch every one holds except
``present.*.encoder.*``, which ONNX Runtime returns as ``[0, heads, 1, head_dim]`` (optimizations on or off).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from optimum.exporters.onnx import main_export
from transformers import T5Config, T5ForConditionalGeneration, WhisperConfig, WhisperForConditionalGeneration

HERE = Path(__file__).resolve().parent
HEADS, HEAD_DIM = 2, 8
PLACEHOLDER = [0, HEADS, 1, HEAD_DIM]  # what the then branch returns for each present.*.encoder.*
# (batch, encoder length, decoder length, past decoder length on the then branch); the else branch has no past.
SIZES = [(1, 5, 1, 3), (3, 9, 2, 6)]


def t5(folder: Path) -> Path:
    """A random-init T5 (about 150 kB merged decoder) saved to ``folder``."""
    torch.manual_seed(0)
    config = T5Config(d_model=16, d_ff=32, num_layers=1, num_decoder_layers=1, num_heads=HEADS, d_kv=HEAD_DIM,
                      vocab_size=64)
    T5ForConditionalGeneration(config).eval().save_pretrained(folder / "t5")
    main_export(str(folder / "t5"), output=str(folder / "t5-onnx"), task="text2text-generation-with-past",
                device="cpu", do_validation=False)
    return folder / "t5-onnx" / "decoder_model_merged.onnx"


def whisper(folder: Path) -> Path:
    """A random-init Whisper (about 100 kB merged decoder) saved to ``folder``.

    Whisper checks that the mel input has ``2 * max_source_positions`` frames, so optimum's dummy input
    (3000 frames by default) is shortened to match the small ``max_source_positions``. Token ids stay
    inside the 64-token vocabulary.
    """
    torch.manual_seed(0)
    config = WhisperConfig(d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=HEADS,
                           decoder_attention_heads=HEADS, encoder_ffn_dim=32, decoder_ffn_dim=32, num_mel_bins=8,
                           vocab_size=64, max_source_positions=16, max_target_positions=32, pad_token_id=0,
                           bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, suppress_tokens=[],
                           begin_suppress_tokens=[])
    WhisperForConditionalGeneration(config).eval().save_pretrained(folder / "whisper")
    main_export(str(folder / "whisper"), output=str(folder / "whisper-onnx"),
                task="automatic-speech-recognition-with-past", device="cpu", do_validation=False,
                nb_max_frames=2 * config.max_source_positions)
    return folder / "whisper-onnx" / "decoder_model_merged.onnx"


def run(path: Path, cache: bool, sizes: tuple[int, int, int, int], optimize: bool = True) -> list[str]:
    """Every output whose ORT shape contradicts its declaration, on one branch at one size.

    The then branch gets a past decoder cache of ``past`` steps; the else branch gets an empty one, as
    optimum's runtime feeds it. The cross-attention cache inputs always have the encoder length.
    """
    batch, encoder, decoder, past = sizes
    past = past if cache else 0
    dims = {"batch_size": batch, "encoder_sequence_length": encoder, "decoder_sequence_length": decoder,
            "past_decoder_sequence_length": past,
            "past_decoder_sequence_length + decoder_sequence_length": past + decoder}
    model = onnx.load(path)
    rng = np.random.default_rng(0)
    feeds: dict[str, np.ndarray] = {}
    for value in model.graph.input:
        tensor = value.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else dims[d.dim_param] for d in tensor.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if value.name == "use_cache_branch":
            feeds[value.name] = np.array([cache])
        elif np.issubdtype(dtype, np.integer):
            feeds[value.name] = np.ones(shape, dtype=dtype)  # token id 1, every encoder position attended
        else:
            feeds[value.name] = rng.standard_normal(shape).astype(dtype)
    options = ort.SessionOptions()
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    problems = []
    for value, result in zip(model.graph.output, session.run(None, feeds)):
        declared = [d.dim_value if d.HasField("dim_value") else dims[d.dim_param]
                    for d in value.type.tensor_type.shape.dim]
        if declared != list(result.shape):
            problems.append(f"{value.name}: declared {declared}, ONNX Runtime returns {list(result.shape)}")
    return problems


def check(path: Path) -> None:
    """The else branch keeps every declaration; the then branch breaks only the cross-attention cache's."""
    model = onnx.load(path)
    assert [node.op_type for node in model.graph.node] == ["If"], "not a merged decoder"
    encoder_outputs = [v.name for v in model.graph.output if v.name.startswith("present.") and ".encoder." in v.name]
    assert encoder_outputs, "no present.*.encoder.* outputs"
    for sizes in SIZES:
        assert not run(path, False, sizes), f"{path.name} else branch at {sizes}: {run(path, False, sizes)}"
        for optimize in (True, False):
            batch, encoder = sizes[:2]
            expected = [f"{name}: declared {[batch, HEADS, encoder, HEAD_DIM]}, ONNX Runtime returns {PLACEHOLDER}"
                        for name in encoder_outputs]
            problems = run(path, True, sizes, optimize)
            assert problems == expected, f"{path.name} then branch at {sizes}: {problems}"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for export, name in ((t5, "optimum_t5_merged.onnx"), (whisper, "optimum_whisper_merged.onnx")):
            shutil.copy(export(Path(tmp)), HERE / name)
    for name in ("optimum_t5_merged.onnx", "optimum_whisper_merged.onnx"):
        path = HERE / name
        size = path.stat().st_size
        assert size < 400_000, f"{name} is {size} bytes"
        model = onnx.load(path, load_external_data=False)
        assert not any(onnx.external_data_helper.uses_external_data(t) for t in model.graph.initializer), name
        onnx.checker.check_model(model, full_check=True)
        check(path)
        print(f"{name}: {size} bytes; then branch returns {PLACEHOLDER} for present.*.encoder.*")


if __name__ == "__main__":
    main()
