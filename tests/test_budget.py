"""Every slow inference engine runs under a budget it cannot escape, and says so when it runs out.

Behaviour only: a tiny budget makes ONNX Runtime's symbolic engine give up on a small graph; the
lint goes on with what ONNX's own inference proved, names what stays unproven, and ``--fix`` writes
only the proven part. The budgeted child dies with its parent and on its own deadline.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from examples.defects import IR_VERSION, OPSET
from onnx_lint.engines.budgeted import run_in_child
from onnx_lint.model.shapes import tensor_info

TESTS = Path(__file__).resolve().parent
TINY = "0.001"
# OL003 notes the untyped Gelu output (a warning of its own); these tests are about the budget.
QUIET = ("--ignore", "OL003")


def two_outputs() -> onnx.ModelProto:
    """Two stale rank-0 outputs: ``Z`` ONNX's inference proves ``[batch, 16]``; ``Y`` sits behind a
    com.microsoft Gelu that only ONNX Runtime's symbolic engine shapes."""
    graph = h.make_graph(
        [h.make_node("Gelu", ["X"], ["g"], domain="com.microsoft", name="Gelu_0"),
         h.make_node("Relu", ["g"], ["Y"], name="Relu_0"),
         h.make_node("Relu", ["X"], ["Z"], name="Relu_1")],
        "two", [h.make_tensor_value_info("X", T.FLOAT, ["batch", 16])],
        [h.make_tensor_value_info("Y", T.FLOAT, []), h.make_tensor_value_info("Z", T.FLOAT, [])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET), h.make_opsetid("com.microsoft", 1)],
                        ir_version=IR_VERSION)


def _findings(run) -> list[tuple[str, str | None]]:
    return [(d["code"], d["location"]["tensor"]) for d in run.json()]


def test_with_room_the_symbolic_engine_proves_both_outputs(cli, save):
    path = save(two_outputs())
    found = _findings(cli("check", str(path), "--no-cache", "--output-format", "json"))
    assert ("OL001", "Y") in found and ("OL001", "Z") in found
    assert not any(code == "OL008" for code, _ in found)


def test_a_tiny_budget_stops_the_engine_and_the_lint_says_what_stays_unproven(cli, save):
    path = save(two_outputs())
    run = cli("check", str(path), "--no-cache", "--output-format", "json", "--inference-budget", TINY)
    found = _findings(run)
    assert ("OL001", "Z") in found  # ONNX's own inference proved this one: still reported
    assert ("OL001", "Y") not in found  # no claim without the proof
    budget = [d for d in run.json() if d["code"] == "OL008"]
    assert len(budget) == 1 and budget[0]["severity"] == "info"
    assert budget[0]["location"] == {"path": "graph/output[0]", "tensor": "Y", "node": None, "op_type": None}
    assert "onnxruntime-symbolic was stopped at its budget of 0.001 s" in budget[0]["message"]
    assert "1 tensor stays unproven: 'Y'" in budget[0]["message"]
    assert run.code == 1  # OL001 on Z fails the check; the budget note alone would not


def test_the_summary_does_not_read_as_clean_when_only_the_budget_note_remains(cli, save):
    path = save(two_outputs())
    assert cli("check", str(path), "--no-cache", "--fix", "--inference-budget", TINY, *QUIET).code == 0
    run = cli("check", str(path), "--no-cache", "--inference-budget", TINY, *QUIET)
    assert run.code == 0  # info notes do not fail a check
    assert "All checks passed" not in run.out
    assert "Not fully verified: 1 file where an inference engine ran out of its budget (OL008)" in run.out


def test_fix_under_a_tiny_budget_writes_only_what_was_proven(cli, save):
    path = save(two_outputs())
    run = cli("check", str(path), "--no-cache", "--fix", "--inference-budget", TINY, "--output-format", "json", *QUIET)
    fixed = onnx.load(path)
    declared = {v.name: tensor_info(v.type).dims for v in fixed.graph.output}
    assert declared == {"Y": (), "Z": ("batch", 16)}  # Z proven and fixed; Y kept exactly as declared
    assert [(d["code"], d["location"]["tensor"], d["fix"]["applied"]) for d in run.json()
            if d["code"] == "OL001"] == [("OL001", "Z", True)]
    assert run.code == 0


def test_the_budget_comes_from_the_configuration_too(cli, save, tmp_path):
    path = save(two_outputs())
    (tmp_path / "onnx-lint.toml").write_text("inference-budget = 0.001\n")
    found = _findings(cli("check", str(path), "--no-cache", "--output-format", "json"))
    assert ("OL008", "Y") in found and ("OL001", "Y") not in found
    (tmp_path / "onnx-lint.toml").write_text('inference-budget = "soon"\n')
    bad = cli("check", str(path), "--no-cache")
    assert bad.code == 2 and "'inference-budget'" in bad.err


@pytest.mark.parametrize("value", ["0", "-3", "soon"])
def test_a_budget_that_is_not_a_positive_number_is_a_usage_error(cli, save, value):
    path = save(two_outputs())
    run = cli("check", str(path), "--inference-budget", value)
    assert run.code == 2 and "--inference-budget: must be a positive number of seconds" in run.err


# -- the killable child ---------------------------------------------------------------------------

def _env() -> dict[str, str]:
    paths = [str(TESTS), str(TESTS.parent), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _wait_for(condition, seconds: float = 60.0) -> bool:
    """Poll ``condition`` until it holds or ``seconds`` pass (bounded: never a bare sleep)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


_PARENT = """
import sys
from onnx_lint.engines.budgeted import run_in_child
print("started", flush=True)
run_in_child("budget_targets:sleep_forever", b"", 3600)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal and /proc are Linux's")
def test_killing_the_parent_leaves_no_budgeted_child_behind():
    parent = subprocess.Popen([sys.executable, "-c", _PARENT], env=_env(), stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None and parent.stdout.readline().strip() == "started"
        assert _wait_for(lambda: bool(_children(parent.pid))), "the budgeted child never started"
        children = _children(parent.pid)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert _wait_for(lambda: not any(_alive(c) for c in children)), f"survivors: {children}"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups and /proc are Linux's")
def test_an_expired_budget_kills_the_child_and_everything_it_started(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", _env()["PYTHONPATH"])
    marker = tmp_path / "grandchild.pid"
    outcome = run_in_child("budget_targets:sleep_with_grandchild", str(marker).encode(), 5.0)
    assert outcome.expired and outcome.payload is None
    assert "did not finish within its budget of 5 s" in outcome.reason
    if marker.exists():  # it had started its grandchild before the budget ran out
        grandchild = int(marker.read_text())
        assert _wait_for(lambda: not _alive(grandchild)), "the grandchild survived"


def test_a_cancelled_run_stops_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", _env()["PYTHONPATH"])
    outcome = run_in_child("budget_targets:sleep_forever", b"", 3600, cancelled=lambda: True)
    assert outcome.reason == "cancelled" and not outcome.expired


def test_the_child_answers_through_its_pipe():
    request = json.dumps({"large": "x" * 1_000_000}).encode()  # more than a pipe buffer holds, both ways
    outcome = run_in_child("zlib:compress", request, 60)  # any importable function of bytes works
    assert outcome.ok and zlib.decompress(outcome.payload) == request
    failed = run_in_child("zlib:decompress", b"not zlib data", 60)
    assert not failed.ok and not failed.expired and "zlib.error" in failed.reason


# -- the root cause: dim expressions that grow without bound ------------------------------------------

def test_a_dim_expression_too_long_to_check_becomes_a_fresh_symbol():
    """Concat along a dim of 40 inputs, each with a dynamic dim of its own: ORT's engine would carry
    their 40-term sum onward (and hand it to sympy at every Slice); capped, it is one fresh symbol."""
    pytest.importorskip("sympy")
    from onnx_lint.engines.symbolic import MAX_DIM_CHARS, run_symbolic_inference

    names = [f"input_number_{i:02d}" for i in range(40)]
    graph = h.make_graph(
        [h.make_node("Concat", names, ["joined"], axis=0, name="Concat_0"),
         h.make_node("Relu", ["joined"], ["Y"], name="Relu_0")], "wide",
        [h.make_tensor_value_info(n, T.FLOAT, [f"length_of_{n}", 8]) for n in names],
        [h.make_tensor_value_info("Y", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], ir_version=IR_VERSION)
    assert sum(len(f"length_of_{n} + ") for n in names) > MAX_DIM_CHARS
    result = run_symbolic_inference(model)
    assert not isinstance(result, str), result
    dims = tensor_info(next(v for v in result.graph.output if v.name == "Y").type).dims
    assert dims[1] == 8 and isinstance(dims[0], str) and len(dims[0]) < 40 and "length_of" not in dims[0]
