"""Bad input (SPEC 9): one clear OL000 per file, exit 2, no traceback, nothing written."""

from __future__ import annotations

import pytest
from conftest import run_process
from corpus import CASES, NEGATIVE_DIM_CASES, build_corpus

from examples import defects


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and not p.is_symlink()}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_each_broken_file_gets_one_clear_message(cli, tmp_path, case):
    folder = tmp_path / "models"
    folder.mkdir()
    path = case.build(folder)
    before = _snapshot(folder)
    run = cli("check", str(path), "--fix", "--output-format", "json")
    assert run.code == 2
    [diag] = run.json()
    assert diag["code"] == "OL000" and diag["file"] == str(path)
    assert case.problem in diag["message"], diag["message"]
    assert _snapshot(folder) == before
    assert sorted(p.name for p in folder.iterdir()) == sorted(before) + (
        ["weights_link.bin"] if case.name == "symlink-external" else [])


def test_other_files_in_the_same_run_are_still_linted_and_fixed(tmp_path):
    folder = tmp_path / "mixed"
    paths = build_corpus(folder)
    good = folder / "stale.onnx"
    good.write_bytes(defects.stale_rank0_output().SerializeToString())
    before = _snapshot(folder)
    run = run_process("check", str(folder), "--fix", "--no-cache", cwd=tmp_path)
    assert run.code == 2
    assert "Traceback" not in run.err and "Traceback" not in run.out
    for path in paths.values():
        assert path.name in run.out, path.name
    after = _snapshot(folder)
    assert after.pop("stale.onnx") != before.pop("stale.onnx")
    assert after == before


def test_missing_path_is_named(cli, tmp_path):
    run = cli("check", str(tmp_path / "nope.onnx"))
    assert run.code == 2 and "nope.onnx" in run.out and "no such file" in run.out


def test_external_data_escape_is_refused_before_any_read(tmp_path):
    """The loader only stats: a FIFO outside the folder would block any reader forever."""
    import os

    folder = tmp_path / "m"
    folder.mkdir()
    fifo = tmp_path / "trap.fifo"
    os.mkfifo(fifo)
    from corpus import _external

    path = _external(folder, "fifo.onnx", "../trap.fifo")
    run = run_process("check", str(path), "--no-cache", cwd=tmp_path, timeout=60)
    assert run.code == 2 and "escapes the model folder" in run.out


@pytest.mark.parametrize("case", NEGATIVE_DIM_CASES, ids=lambda c: c.name)
def test_negative_dims_get_their_own_rule_and_a_safe_fix(cli, tmp_path, case):
    import onnx

    path = case.build(tmp_path)
    run = cli("check", str(path), "--output-format", "json")
    assert run.code == 1
    found = run.json()
    assert [d["code"] for d in found if d["code"] == "OL101"] == ["OL101"]
    assert case.problem in next(d["message"] for d in found if d["code"] == "OL101")
    assert cli("check", str(path), "--fix").code == 0
    model = onnx.load(path)
    for value in list(model.graph.input) + list(model.graph.output):
        assert all(d.dim_value >= 0 for d in value.type.tensor_type.shape.dim)
    onnx.checker.check_model(model, full_check=True)
