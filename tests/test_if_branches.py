"""An If steered by a graph input is judged on both branches, by ONNX Runtime.

optimum's merged seq2seq decoders (tests/exports/make_seq2seq_exports.py: T5 and Whisper, tiny random
init) hold one If on ``use_cache_branch``. The static engines merge its branches into one shape, so
the declarations of ``present.*.encoder.*`` looked right, yet in the cache branch ONNX Runtime returns
empty placeholders ``(0, heads, 1, head_dim)``. onnx-lint now runs the model on both branches and
says so, naming both sizes and the condition; it offers no fix, since no one declaration holds on both.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

EXPORTS = Path(__file__).resolve().parent / "exports"


def _cache_branch_shape(path: Path, output: str) -> tuple[int, ...]:
    """What ONNX Runtime returns for ``output`` in the cache branch, at batch 2, 5 encoder steps, past 3."""
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    sizes = {"batch_size": 2, "encoder_sequence_length": 5, "decoder_sequence_length": 1,
             "past_decoder_sequence_length": 3}
    feeds = {}
    for value in session.get_inputs():
        shape = [d if isinstance(d, int) else sizes[d] for d in value.shape]
        if value.type == "tensor(bool)":
            feeds[value.name] = np.ones(shape, bool)
        elif value.type == "tensor(int64)":
            feeds[value.name] = np.ones(shape, np.int64)
        else:
            feeds[value.name] = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    names = [o.name for o in session.get_outputs()]
    return session.run(None, feeds)[names.index(output)].shape


@pytest.mark.parametrize("name", ["optimum_t5_merged", "optimum_whisper_merged"])
def test_merged_seq2seq_encoder_cache_outputs_are_noted_on_both_branches(cli, tmp_path, name):
    path = Path(shutil.copy(EXPORTS / f"{name}.onnx", tmp_path / "decoder.onnx"))
    assert _cache_branch_shape(path, "present.0.encoder.key") == (0, 2, 1, 8)  # the declaration says [2, 2, 5, 8]
    found = cli("check", str(path), "--output-format", "json").json()
    notes = {d["location"]["tensor"]: d for d in found if d["code"] == "OL007"}
    for output in ("present.0.encoder.key", "present.0.encoder.value"):
        note = notes[output]
        assert note["severity"] == "info" and note["fix"] is None
        assert "depends on which If branch runs (onnxruntime run: dim 0 is 0 with 'use_cache_branch' true" in \
            note["message"]
        assert "dim 2 is 1 with 'use_cache_branch' true" in note["message"]
    assert "logits" not in notes
    assert [d for d in found if d["severity"] in ("error", "warning") and d["code"] != "OL201"] == []
    before = path.read_bytes()
    cli("check", "--fix", str(path))
    assert path.read_bytes() == before  # no declaration is true of both branches: nothing is written


def test_a_model_without_an_input_steered_if_is_not_run(cli, tmp_path):
    """The probe runs only where the static engines cannot judge: a plain healthy model stays unrun."""
    from onnx_lint.lint.context import LintContext
    from onnx_lint.model.load import read_model

    path = tmp_path / "plain.onnx"
    onnx.save(onnx.load(EXPORTS / "ts_classifier_batch.onnx"), path)
    ctx = LintContext(read_model(path), path.name)
    assert ctx.declarations is not None and ctx.input_conditioned_ifs == []
    assert ctx.oracle.probe_result is None
