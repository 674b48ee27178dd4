"""Bad input (docs/security.md, issue 6): one clear OL000 per file, exit 2, no traceback, nothing written.

Each corpus case runs as its own ``onnx-lint check --fix`` process, as a user's
shell would; the processes run in parallel so the whole corpus stays quick.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import onnx
import pytest
from conftest import Run, run_process
from corpus import CASES, EDGE_CASES, NEGATIVE_DIM_CASES, build_corpus
from model_checks import checker_error, computation

from examples import defects


def _snapshot(folder: Path) -> dict[str, bytes | tuple[int, int]]:
    """Every regular file's bytes; a huge (sparse) one by its size and modification time."""
    snapshot: dict[str, bytes | tuple[int, int]] = {}
    for p in folder.iterdir():
        if p.is_file() and not p.is_symlink():
            info = p.stat()
            snapshot[p.name] = p.read_bytes() if info.st_size < 2**26 else (info.st_size, info.st_mtime_ns)
    return snapshot


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@dataclass
class Outcome:
    path: Path
    before: dict[str, bytes]
    names_before: list[str]
    run: Run
    after: dict[str, bytes]
    names_after: list[str]
    again: Run | None = None  # a second --fix, when the first one wrote


def _run_case(root: Path, name: str, build) -> Outcome:
    folder = root / name
    folder.mkdir(parents=True)
    path = build(folder)
    before, names = _snapshot(folder), _names(folder)
    run = run_process("check", str(path), "--fix", "--no-cache", "--output-format", "json", cwd=folder)
    outcome = Outcome(path, before, names, run, _snapshot(folder), _names(folder))
    if outcome.after != before:
        outcome.again = run_process("check", str(path), "--fix", "--no-cache", "--output-format", "json", cwd=folder)
    return outcome


def _run_all(root: Path, cases) -> dict[str, Outcome]:
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = {case.name: pool.submit(_run_case, root, case.name, case.build) for case in cases}
        return {name: future.result() for name, future in futures.items()}


@pytest.fixture(scope="module")
def refused(tmp_path_factory) -> dict[str, Outcome]:
    return _run_all(tmp_path_factory.mktemp("refused"), CASES)


@pytest.fixture(scope="module")
def edges(tmp_path_factory) -> dict[str, Outcome]:
    return _run_all(tmp_path_factory.mktemp("edges"), EDGE_CASES)


def test_the_corpus_covers_at_least_forty_distinct_cases():
    names = [c.name for c in CASES + EDGE_CASES + NEGATIVE_DIM_CASES]
    assert len(names) == len(set(names)) >= 40


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_each_broken_file_gets_one_clear_message(refused, case):
    outcome = refused[case.name]
    run = outcome.run
    assert run.code == 2, run.err
    assert "Traceback" not in run.err + run.out
    [diag] = run.json()
    assert diag["code"] == "OL000" and diag["file"] == str(outcome.path)
    assert case.problem in diag["message"], diag["message"]
    assert "\n" not in diag["message"]
    assert outcome.after == outcome.before, "a refused file was written"
    assert outcome.names_after == outcome.names_before, "a file was left behind"


@pytest.mark.parametrize("case", EDGE_CASES, ids=lambda c: c.name)
def test_each_odd_but_readable_file_is_linted_and_fixed_safely(edges, case):
    outcome = edges[case.name]
    run = outcome.run
    assert run.code in (0, 1), run.err
    assert "Traceback" not in run.err + run.out and "internal error" not in run.err, run.err
    found = {d["code"] for d in run.json()}
    assert found == case.codes, run.out
    assert outcome.names_after == outcome.names_before, "a file was left behind"
    if outcome.after == outcome.before:
        return
    # It was fixed: the computation is untouched, the checker is no less happy, a second fix writes nothing.
    original = onnx.ModelProto.FromString(outcome.before[outcome.path.name])
    fixed = onnx.ModelProto.FromString(outcome.after[outcome.path.name])
    assert computation(fixed) == computation(original)
    if checker_error(original) is None:
        assert checker_error(fixed) is None
    assert outcome.again is not None and outcome.again.code in (0, 1)
    assert not any(d["fix"] for d in outcome.again.json()), "something was left to fix"
    assert outcome.path.read_bytes() == outcome.after[outcome.path.name], "a second --fix wrote again"


def test_fields_from_a_future_onnx_survive_a_fix(edges):
    outcome = edges["unknown-fields"]
    assert outcome.after != outcome.before  # the stale output was fixed...
    assert b"future-graph-field" in outcome.after[outcome.path.name]  # ...and the unknown fields kept


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
    from corpus import _external

    folder = tmp_path / "m"
    folder.mkdir()
    fifo = tmp_path / "trap.fifo"
    os.mkfifo(fifo)
    path = _external(folder, "fifo.onnx", "../trap.fifo")
    run = run_process("check", str(path), "--no-cache", cwd=tmp_path, timeout=60)
    assert run.code == 2 and "escapes the model folder" in run.out


def test_no_byte_outside_the_model_folder_is_read(tmp_path):
    """inotify sees every open and read of the files the hostile cases point at: there are none."""
    from inotify import FileWatch

    root = tmp_path / "hostile"
    paths = build_corpus(root)
    outside = sorted(p for p in tmp_path.iterdir() if p.name.startswith("hostile-"))
    targets = [p for p in outside if p.is_file()] + [q for p in outside if p.is_dir() for q in p.iterdir()]
    assert len(targets) >= 2
    watches = [FileWatch(t) for t in targets]
    try:
        run = run_process("check", *(str(p) for p in paths.values()), "--fix", "--no-cache", cwd=tmp_path)
        events = [(t.name, e) for t, w in zip(targets, watches) for e in w.events()]
    finally:
        for w in watches:
            w.close()
    assert run.code == 2 and "Traceback" not in run.err
    assert events == []


@pytest.mark.parametrize("case", NEGATIVE_DIM_CASES, ids=lambda c: c.name)
def test_negative_dims_get_their_own_rule_and_a_safe_fix(cli, tmp_path, case):
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


def test_sub_byte_tensors_are_sized_by_their_packing(cli, tmp_path):
    """FLOAT4E2M1 and INT4 pack two values a byte: three of them take two bytes, and that is valid."""
    import ml_dtypes
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper

    weights = [numpy_helper.from_array(np.zeros(3, ml_dtypes.float4_e2m1fn), "F4"),
               numpy_helper.from_array(np.zeros(3, ml_dtypes.int4), "I4")]
    graph = h.make_graph([h.make_node("Identity", ["F4"], ["Y"]), h.make_node("Identity", ["I4"], ["Z"])], "packed",
                         [], [h.make_tensor_value_info("Y", T.FLOAT4E2M1, [3]),
                              h.make_tensor_value_info("Z", T.INT4, [3])], weights)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 23)], ir_version=11)
    onnx.checker.check_model(model, full_check=True)
    path = tmp_path / "packed.onnx"
    onnx.save(model, path)
    run = cli("check", str(path), "--output-format", "json")
    # Read and linted (no OL000); ONNX Runtime 1.32 has no CPU Identity kernel for these types (OL107, measured).
    assert {d["code"] for d in run.json()} <= {"OL107"}, run.out
