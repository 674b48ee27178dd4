"""The runtime probe writes only what follows the inputs, and runs models with integer and bool inputs.

Ground truth is ONNX Runtime on real data that differs from anything the probe drew: a fixed
declaration must hold for it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import output_dims
from hostile_models import branch_model, data_dependent, one_row_table, token_model, topk_from_input

pytest.importorskip("onnxruntime")


def _contradictions(path: Path, feeds: dict[str, np.ndarray]) -> list[str]:
    """Declared output dims that ONNX Runtime's results on ``feeds`` contradict."""
    import onnxruntime as ort

    model = onnx.load(path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    found = []
    for value, result in zip(model.graph.output, session.run(None, feeds)):
        declared = [d.dim_value if d.HasField("dim_value") else None for d in value.type.tensor_type.shape.dim]
        actual = np.asarray(result).shape
        if len(declared) != len(actual) or any(d is not None and d != a for d, a in zip(declared, actual)):
            found.append(f"{value.name}: declared {declared}, ONNX Runtime returns {list(actual)}")
    return found


def test_no_data_dependent_dim_is_written_as_a_number(cli, save):
    """NonZero(X > 5), Unique and a TopK whose k is computed: their sizes depend on X's values."""
    path = save(data_dependent())
    run = cli("check", str(path), "--output-format", "json")
    found = {d["location"]["tensor"]: d for d in run.json() if d["code"] == "OL001"}
    assert set(found) == {"nonzero", "unique", "topk"}
    assert all(d["engine"] == "onnxruntime run" for d in found.values())
    assert "float[2, ?]" in found["nonzero"]["message"] and "float[?]" in found["unique"]["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert [output_dims(path, i) for i in range(3)] == [[2, None], [None], [None]]
    rng = np.random.default_rng(123)
    for feed in (np.full((2, 12), 10.0), rng.uniform(-20, 20, (2, 30)), rng.standard_normal((2, 7))):
        assert _contradictions(path, {"X": feed.astype(np.float32)}) == []


def test_a_declared_number_for_a_data_dependent_dim_is_refuted(cli, save):
    model = data_dependent()
    dims = model.graph.output[0].type.tensor_type.shape.dim
    for size in (2, 0):
        dims.add().dim_value = size  # what the probe wrote before: standard normal X is never above 5
    path = save(model)
    [diag] = [d for d in cli("check", str(path), "--output-format", "json").json()
              if d["location"]["tensor"] == "nonzero"]
    assert diag["code"] == "OL002" and "it depends on the input data" in diag["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path, 0) == [2, None]


def test_a_model_with_token_ids_a_mask_and_a_bool_condition_is_probed(cli, save):
    """int64 input_ids get 0 (a valid row of any table), the attention mask 1, the bool both values."""
    path = save(token_model())
    run = cli("check", str(path), "--output-format", "json")
    [diag] = run.json()
    assert diag["code"] == "OL001" and diag["engine"] == "onnxruntime run"
    assert "float[batch, seq, 8]" in diag["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == ["batch", "seq", 8]
    rng = np.random.default_rng(7)
    for batch, seq, use_cache in ((1, 9, True), (5, 2, False)):
        feeds = {"input_ids": rng.integers(0, 50, (batch, seq)), "attention_mask": rng.integers(0, 2, (batch, seq)),
                 "use_cache": np.array(use_cache)}
        assert _contradictions(path, feeds) == []


def test_dims_that_depend_on_the_if_branch_are_named_in_an_info_note(cli, save):
    """A bool condition runs both ways; the dim that differs is named, and no fix picks one branch's size."""
    path = save(branch_model())
    before = path.read_bytes()
    run = cli("check", str(path), "--output-format", "json")
    [note] = run.json()
    assert note["code"] == "OL007" and note["severity"] == "info" and run.code == 0
    assert "depends on which If branch runs (onnxruntime run: dim 1 is 8 with 'use_cache' true and 16 with it " \
           "false)" in note["message"]
    assert cli("check", str(path), "--fix").code == 0 and path.read_bytes() == before
    for use_cache, width in ((True, 8), (False, 16)):
        import onnxruntime as ort

        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        [y] = session.run(None, {"X": np.ones((3, 8), np.float32), "use_cache": np.array(use_cache)})
        assert y.shape == (3, width)


def test_a_size_read_from_an_integer_input_is_not_a_constant(cli, save):
    """TopK's k is a graph input: its value sets the output's size, so no run on values nobody promised answers
    for that output (the probe fed k = 0 and 1), nothing is written, and the note names the input."""
    path = save(topk_from_input())
    [note] = [d for d in cli("check", str(path), "--output-format", "json").json() if d["code"] == "OL007"]
    assert "not asked, since its shape is set by the value of input 'k'" in note["message"]
    assert cli("check", str(path), "--fix").code == 0
    assert output_dims(path) == []  # as declared: only the untyped tensors' element types were written


def test_ids_past_a_one_row_table_cost_no_facts(cli, save):
    """The run with ids of 1 fails on a one-row table; the other runs still shape the output."""
    path = save(one_row_table())
    [diag] = cli("check", str(path), "--output-format", "json").json()
    assert diag["code"] == "OL001" and diag["engine"] == "onnxruntime run" and "float[batch, 4]" in diag["message"]
