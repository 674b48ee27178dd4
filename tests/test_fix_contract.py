"""The --fix contract (docs/design.md): atomic, idempotent, external data untouched, proven before written."""

from __future__ import annotations

import os
from pathlib import Path

import onnx
import pytest
from conftest import output_dims
from inotify import FileWatch

from examples import defects
from onnx_lint.fixes import fixer
from onnx_lint.model import write as model_io


def test_fix_is_idempotent(cli, save):
    path = save(defects.stale_value_info())
    assert cli("check", str(path), "--fix").code == 0
    once = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == once and path.stat().st_mtime_ns == mtime


def test_fix_changes_annotations_only(cli, save):
    original = defects.rank0_feeding_reduce_mean()
    path = save(original)
    cli("check", str(path), "--fix")
    fixed = onnx.load(path)
    assert list(fixed.graph.node) == list(original.graph.node)
    assert list(fixed.graph.initializer) == list(original.graph.initializer)
    assert list(fixed.graph.input) == list(original.graph.input)


def test_external_data_file_is_never_opened_by_check_or_fix(cli, tmp_path):
    path = defects.with_external_data(tmp_path)
    data = tmp_path / "external.onnx.data"
    size = data.stat().st_size
    watch = FileWatch(data)
    try:
        assert cli("check", str(path), "--no-cache").code == 1
        assert cli("check", str(path), "--fix", "--no-cache").code == 0
        events = watch.events()
    finally:
        watch.close()
    assert events == [], "the weights file was opened or read"
    assert data.stat().st_size == size
    assert output_dims(path) == ["batch", 256]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".onnx-lint")) == [
        "external.onnx", "external.onnx.data"]


def test_the_checker_still_judges_models_with_external_data(tmp_path):
    """With external data the full checker runs on the model with its external tensors as typed inputs
    (their references were checked on load): it still refuses a broken graph, and reads no weight."""
    path = defects.with_external_data(tmp_path)
    watch = FileWatch(tmp_path / "external.onnx.data")
    try:
        stale = fixer._checker_error(path, ["graph"])  # the stale rank-0 output
        model = onnx.load(path, load_external_data=False)
        model.graph.output[0].CopyFrom(onnx.helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, ["batch", 256]))
        onnx.save(model, tmp_path / "fixed.onnx")
        fixed = fixer._checker_error(tmp_path / "fixed.onnx", ["graph"])
        model.graph.node[0].input[0] = "nowhere"
        onnx.save(model, tmp_path / "broken.onnx")
        broken = fixer._checker_error(tmp_path / "broken.onnx", ["graph"])
        events = watch.events()
    finally:
        watch.close()
    assert stale is not None and "differ in rank: (2) vs (0)" in stale
    assert fixed is None
    assert broken is not None and "nowhere" in broken
    assert events == []


def test_failed_write_leaves_original_and_no_temporary_file(cli, save, monkeypatch):
    path = save(defects.stale_rank0_output())
    before = path.read_bytes()

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(model_io.os, "fsync", full_disk)
    run = cli("check", str(path), "--fix")
    assert run.code == 2
    assert "No space left on device" in run.err and str(path) in run.err
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir() if p.suffix == ".tmp"] == []


def test_fix_that_would_break_the_checker_is_refused(cli, save, monkeypatch):
    path = save(defects.pinned_batch())  # passes the full checker before the fix
    before = path.read_bytes()
    real = fixer._checker_error
    monkeypatch.setattr(fixer, "_checker_error", lambda p: "forced failure" if p != path else real(p))
    run = cli("check", str(path), "--fix")
    assert run.code == 2 and "onnx.checker" in run.err and "nothing was written" in run.err
    assert path.read_bytes() == before
    assert [p for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_fixed_model_loads_in_onnx_runtime(cli, save):
    ort = pytest.importorskip("onnxruntime")
    path = save(defects.stale_rank0_output())
    cli("check", str(path), "--fix")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [list(o.shape) for o in session.get_outputs()] == [[3, 5]]


def test_diff_shows_the_change_and_writes_nothing(cli, save):
    path = save(defects.stale_rank0_output())
    before = path.read_bytes()
    run = cli("check", str(path), "--diff")
    assert run.code == 1
    assert "-" in run.out and "float[3,5] Y" in run.out
    assert path.read_bytes() == before


def test_file_mode_is_preserved(cli, save):
    path = save(defects.stale_rank0_output())
    os.chmod(path, 0o640)
    cli("check", str(path), "--fix")
    assert (path.stat().st_mode & 0o777) == 0o640


def test_concurrent_fixes_never_corrupt_the_file(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "model.onnx"
    onnx.save(defects.rank0_feeding_reduce_mean(), path)
    procs = [subprocess.Popen([sys.executable, "-m", "onnx_lint", "check", str(path), "--fix", "--no-cache"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path) for _ in range(4)]
    for proc in procs:
        proc.wait(timeout=120)
    onnx.checker.check_model(onnx.load(path), full_check=True)
    assert output_dims(path) == ["batch", 5]
    assert [p for p in Path(tmp_path).iterdir() if p.name.endswith(".tmp")] == []


def test_a_fix_that_makes_another_possible_is_applied_in_the_same_run(cli, save):
    """Found by the fuzzer: the output fix lets inference type TopK's outputs, which a second --fix then
    fixed. Fixing now repeats until nothing new is fixable, so the second --fix writes nothing."""
    model = defects.topk_untyped()
    model.graph.output[0].name = "X"  # the graph input, passed through, declared [1, 5]
    next(a for a in model.graph.node[1].attribute if a.name == "to").i = 0
    path = save(model)
    first = cli("check", str(path), "--fix", "--output-format", "json")
    fixed = [d["code"] for d in first.json() if d["fix"] and d["fix"]["applied"]]
    assert sorted(fixed) == ["OL002", "OL003"]
    once = path.read_bytes()
    again = cli("check", str(path), "--fix", "--output-format", "json")
    assert not any(d["fix"] for d in again.json())
    assert path.read_bytes() == once


def test_a_follow_on_fix_that_fails_keeps_the_fixes_before_it(cli, save, monkeypatch):
    """If the second round cannot be proven, the first round's fixes are still written, and only those."""
    model = defects.topk_untyped()
    model.graph.output[0].name = "X"
    next(a for a in model.graph.node[1].attribute if a.name == "to").i = 0
    path = save(model)
    real = fixer._fix_round
    rounds = []

    def second_round_fails(ctx, before, chosen, *args, **kwargs):
        rounds.append([d.code for d in chosen])
        if len(rounds) == 2:
            raise fixer.FixError(f"{ctx.display}: forced failure")
        return real(ctx, before, chosen, *args, **kwargs)

    monkeypatch.setattr(fixer, "_fix_round", second_round_fails)
    run = cli("check", str(path), "--fix", "--output-format", "json")
    assert rounds == [["OL002"], ["OL003"]]
    fixed = [d["code"] for d in run.json() if d["fix"] and d["fix"]["applied"]]
    assert fixed == ["OL002"] and run.code in (0, 1)
    assert output_dims(path) == [1, 3]


def test_fix_may_reorder_nodes_but_never_changes_their_content(cli, save):
    """The fix contract (docs/design.md) with OL103: "nodes untouched" means their content; order may change."""
    from model_checks import checker_error, computation

    from examples import readiness

    original = readiness.unsorted_nodes()
    original.graph.output[0].type.tensor_type.shape.ClearField("dim")  # also a stale rank-0 output (OL001)
    path = save(original)
    assert checker_error(original) is not None
    run = cli("check", str(path), "--fix", "--output-format", "json")
    assert run.code == 0, run.out
    assert {d["code"] for d in run.json() if d["fix"] and d["fix"]["applied"]} >= {"OL103", "OL001"}
    fixed = onnx.load(path)
    assert [n.name for n in fixed.graph.node] != [n.name for n in original.graph.node]
    assert computation(fixed) == computation(original)
    assert list(fixed.graph.initializer) == list(original.graph.initializer)
    assert checker_error(fixed) is None and output_dims(path) == ["batch", 4]


_FORKED_FIX = r"""
import sys
from onnx_lint.engines import checker as checker_errors
from onnx_lint.engines import forked
from onnx_lint import cli
from onnx_lint.fixes import fixer
started = []
real = checker_errors.ForkedFullCheck.start
def recording(*args):
    call = real(*args)
    started.append(call is not None)
    return call
checker_errors.ForkedFullCheck.start = recording
fixer.worth_forking = lambda graph: True  # every model counts as large: the full checks run in a forked child
forked.room_for_child = lambda: True  # and the machine has room for them, however busy it is
code = cli.main(["check", "--no-cache", "--jobs", "1", "--fix", sys.argv[1]])
sys.stderr.write(f"forked={started}\n")
sys.exit(code)
"""


@pytest.mark.parametrize("builder", ["stale_output", "fails_before_and_after", "keeps_a_concrete_dim"])
def test_large_model_fix_proves_in_a_forked_child_with_the_same_verdict(builder, cli, tmp_path):
    """On a large model the write's full checks run in children (the fixed bytes' started before the
    re-lint; the original's with the plan where a failure is likely, else when the write waits); the
    file written, the exit code and the notes are those of the in-process checks."""
    import subprocess
    import sys

    from test_verdict_after_fix import half_converted_gemm

    from benchmarks import models as bench

    if builder == "keeps_a_concrete_dim":  # value_info pins dims inference leaves unknown: fails before and after
        model = bench.weakly_typed(bench.transformer_blocks(300), stale_value_info=40)
    else:
        model = defects.stale_rank0_output() if builder == "stale_output" else half_converted_gemm()
    in_process, forked = tmp_path / "a" / "model.onnx", tmp_path / "b" / "model.onnx"
    for path in (in_process, forked):
        path.parent.mkdir()
        onnx.save_model(model, path)
    expected = cli("check", str(in_process), "--fix")
    run = subprocess.run([sys.executable, "-c", _FORKED_FIX, str(forked)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(Path(fixer.__file__).parents[2])})  # onnx_lint/fixes/
    # The fixed bytes' check, and the original's only where the fixed bytes fail.
    assert f"forked={[True] if builder == 'stale_output' else [True, True]}" in run.stderr, run.stderr
    assert run.returncode == expected.code
    assert forked.read_bytes() == in_process.read_bytes()
    assert run.stdout.replace(str(forked), "M") == expected.out.replace(str(in_process), "M")


def test_findings_a_fix_cannot_change_are_kept_as_a_fresh_lint_gives_them(cli, save):
    """The re-lint after a fix keeps the findings of rules that read no declaration (OL201 here)
    instead of running them again: they are exactly what a fresh lint of the written file reports."""
    from examples import readiness

    model = readiness.fp16_overflow()
    model.graph.output[0].type.tensor_type.shape.ClearField("dim")  # also a stale rank-0 output (OL001)
    path = save(model)
    fixed = cli("check", str(path), "--fix", "--output-format", "json").json()
    assert any(d["code"] == "OL001" and d["fix"]["applied"] for d in fixed)
    kept = [d for d in fixed if d["code"] == "OL201"]
    fresh = [d for d in cli("check", str(path), "--output-format", "json").json() if d["code"] == "OL201"]
    assert len(kept) == 2 and kept == fresh


def test_a_fix_that_raises_the_ir_version_runs_every_rule_again(cli, save, monkeypatch):
    """The IR version is what OL106 reads: after OL102's fix raises it, no finding is carried over, and
    the findings after the fix are those of a fresh lint of the written file."""
    import numpy as np

    from examples import readiness

    model = readiness.runtime_old_opset(False)  # IR 3, opset 7: the initializer below must be an input
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.ones((2, 4), np.float32), "W"))
    model.graph.node[0].input[1] = "W"
    path = save(model)
    carried = []
    real = fixer.run_rules
    monkeypatch.setattr(fixer, "run_rules", lambda *args: carried.append(args[3]) or real(*args))
    fixed = cli("check", str(path), "--fix", "--output-format", "json").json()
    assert onnx.load(path).ir_version == 4 and carried == [None]
    assert [d for d in fixed if not d["fix"] or not d["fix"]["applied"]] == cli(
        "check", str(path), "--output-format", "json").json()
