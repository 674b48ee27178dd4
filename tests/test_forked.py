"""ONNX's inference run in a forked child beside the loader and the checker: same findings, no process left\nbehind."""

from __future__ import annotations

import os
import sys
import threading
import time

import onnx
import pytest
from onnx import TensorProto, helper

from onnx_lint import forked, inference
from onnx_lint.forked import ForkedCall
from onnx_lint.linter import lint_file
from onnx_lint.model_io import read_unvalidated
from onnx_lint.rules import ALL_RULES

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="onnx-lint forks only on Linux")


@pytest.fixture(autouse=True)
def _fork_allowed(monkeypatch):
    """Earlier tests in this process may have loaded ONNX Runtime or left threads behind; these tests
    are about what happens once a child is started."""
    monkeypatch.setattr(forked, "fork_is_safe", lambda: True)


def test_no_child_starts_while_another_thread_runs(monkeypatch):
    monkeypatch.undo()
    monkeypatch.delitem(sys.modules, "onnxruntime", raising=False)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert ForkedCall.start(lambda: 1) is None
    finally:
        stop.set()
        thread.join()


def _reaped(call: ForkedCall | None) -> bool:
    """Whether the call's child is gone and reaped (waiting for it again finds no such child)."""
    assert call is not None
    try:
        os.waitpid(call._pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_a_forked_call_returns_what_the_function_returns():
    call = ForkedCall.start(lambda: {"verdict": None, "n": 3})
    assert call is not None
    assert call.result() == (True, {"verdict": None, "n": 3})
    assert _reaped(call)


def test_a_failing_or_dying_child_gives_no_result_and_is_reaped():
    def fail() -> None:
        raise RuntimeError("boom")

    def die() -> None:
        os.kill(os.getpid(), 9)

    for fn in (fail, die):
        call = ForkedCall.start(fn)
        assert call is not None
        assert call.result() == (False, None)
        assert _reaped(call)


def test_an_abandoned_child_is_stopped_at_once():
    call = ForkedCall.start(lambda: time.sleep(60))
    assert call is not None
    started = time.monotonic()
    call.abandon()
    assert time.monotonic() - started < 10
    assert _reaped(call)


def _chain(path, nodes: int, undefined: bool = False, negative_dim: bool = False):
    """A Relu chain of ``nodes`` nodes; ``undefined`` makes one node read a tensor nothing defines,
    ``negative_dim`` adds an initializer the loader refuses."""
    made = [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"relu{i}") for i in range(nodes)]
    if undefined:
        made[nodes // 2] = helper.make_node("Relu", ["nowhere"], [f"t{nodes // 2 + 1}"], name="reads_nowhere")
    initializers = []
    if negative_dim:
        bad = helper.make_tensor("bad", TensorProto.FLOAT, [1], [0.0])
        bad.dims[0] = -3
        initializers.append(bad)
    graph = helper.make_graph(made, "chain", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info(f"t{nodes}", TensorProto.FLOAT, [2])], initializers)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _findings(path):
    result, _ = lint_file(path, str(path), ALL_RULES, lambda code: True)
    return sorted((d.code, d.location.path, d.message) for d in result.diagnostics)


@pytest.fixture
def spawned(monkeypatch) -> list[ForkedCall]:
    """Every ForkedCall started while the test runs."""
    calls: list[ForkedCall] = []
    start = ForkedCall.start
    monkeypatch.setattr(ForkedCall, "start", classmethod(lambda cls, fn: calls.append(start(fn)) or calls[-1]))
    return calls


@pytest.mark.parametrize("undefined", [False, True], ids=["healthy", "undefined-tensor"])
def test_a_large_model_gets_the_same_findings_with_inference_in_a_child(tmp_path, monkeypatch, spawned, undefined):
    path = _chain(tmp_path / "chain.onnx", inference.PREFETCH_MIN_ENTRIES, undefined)
    forked = _findings(path)
    assert len(spawned) == 1 and _reaped(spawned[0])
    monkeypatch.setattr(inference, "PREFETCH_MIN_ENTRIES", 10**9)  # inference in this process
    assert _findings(path) == forked
    assert len(spawned) == 1
    if undefined:
        assert "OL104" in {code for code, _, _ in forked}
    else:
        assert forked == []  # the child's inference typed every output: nothing to report


def test_a_model_the_loader_refuses_stops_its_child(tmp_path, spawned):
    path = _chain(tmp_path / "chain.onnx", inference.PREFETCH_MIN_ENTRIES, negative_dim=True)
    findings = _findings(path)
    assert [code for code, _, _ in findings] == ["OL000"] and "negative dim" in findings[0][2]
    assert len(spawned) == 1 and _reaped(spawned[0])


def test_a_child_that_dies_leaves_inference_to_this_process(tmp_path):
    path = _chain(tmp_path / "chain.onnx", inference.PREFETCH_MIN_ENTRIES)
    loaded = read_unvalidated(path)
    assert inference.prefetch_inference(loaded)
    _, call = inference._PREFETCHED[id(loaded)]
    os.kill(call._pid, 9)
    oracle = inference.ShapeOracle(loaded)
    assert oracle.derived("graph", f"t{inference.PREFETCH_MIN_ENTRIES}")[0] is not None
    assert not oracle.notes
    assert _reaped(call)
