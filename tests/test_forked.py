"""ONNX's inference run in a forked child beside the loader and the checker: same findings, no process left\nbehind."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onnx_lint.engines import forked, prefetch
from onnx_lint.engines.forked import ForkedCall
from onnx_lint.engines.oracle import ShapeOracle
from onnx_lint.lint.linter import lint_file
from onnx_lint.model.load import read_unvalidated
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


_ROOM_FOR_CHILD = forked.room_for_child
EXTERNAL = 40  # nodes, and external tensors, in the test chain; the threshold is lowered to it


@pytest.fixture(autouse=True)
def _small_threshold(monkeypatch):
    monkeypatch.setattr(prefetch, "PREFETCH_MIN_ENTRIES", EXTERNAL)
    monkeypatch.setattr(forked, "room_for_child", lambda: True)  # however busy the test machine is


def test_no_child_overlaps_work_when_every_core_is_busy(tmp_path, monkeypatch, spawned):
    """A child started to overlap work only adds the fork's cost when it must take turns with this process: with
    a busy loop on every core, more tasks are runnable than there are cores."""
    monkeypatch.setattr(forked, "room_for_child", _ROOM_FOR_CHILD)
    path = _chain(tmp_path / "chain.onnx")
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in os.sched_getaffinity(0)]
    try:
        time.sleep(0.3)
        assert not forked.room_for_child()
        assert prefetch.prefetch_inference(read_unvalidated(path)) is None and not spawned
        assert _findings(path) == []  # inference ran in this process
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def _chain(path, undefined: bool = False, negative_dim: bool = False):
    """An Add chain whose biases are external data; ``undefined`` makes one node read a tensor nothing
    defines, ``negative_dim`` gives a bias a dim the loader refuses."""
    nodes = [helper.make_node("Add", [f"t{i}", f"b{i}"], [f"t{i + 1}"], name=f"add{i}") for i in range(EXTERNAL)]
    if undefined:
        nodes[EXTERNAL // 2] = helper.make_node("Add", ["nowhere", f"b{EXTERNAL // 2}"], [f"t{EXTERNAL // 2 + 1}"],
                                                name="reads_nowhere")
    bias = np.array([0.5, 1.5], np.float32).tobytes()
    biases = [helper.make_tensor(f"b{i}", TensorProto.FLOAT, [2], bias, raw=True) for i in range(EXTERNAL)]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info(f"t{EXTERNAL}", TensorProto.FLOAT, [2])], biases)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="chain.data",
              size_threshold=0)
    if negative_dim:
        saved = onnx.load(path, load_external_data=False)
        saved.graph.initializer[3].dims[0] = -3
        onnx.save(saved, path)
    return path


def _findings(path):
    result, _ = lint_file(path, str(path), ALL_RULES, lambda code: True)
    return sorted((d.code, d.location.path, d.message) for d in result.diagnostics)


@pytest.fixture
def spawned(monkeypatch) -> list[ForkedCall]:
    """Every child started to infer a model ahead (other forked children, such as the symbolic engine's
    budgeted one, are not counted)."""
    calls: list[ForkedCall] = []
    start = ForkedCall.start

    def recording(cls, fn, **options):
        call = start(fn, **options)
        if getattr(fn, "func", None) is prefetch._infer_serialized and call is not None:
            calls.append(call)
        return call

    monkeypatch.setattr(ForkedCall, "start", classmethod(recording))
    return calls


@pytest.mark.parametrize("undefined", [False, True], ids=["healthy", "undefined-tensor"])
def test_a_large_model_gets_the_same_findings_with_inference_in_a_child(tmp_path, monkeypatch, spawned, undefined):
    path = _chain(tmp_path / "chain.onnx", undefined)
    forked = _findings(path)
    assert len(spawned) == 1 and _reaped(spawned[0])
    monkeypatch.setattr(prefetch, "PREFETCH_MIN_ENTRIES", 10**9)  # inference in this process
    assert _findings(path) == forked
    assert len(spawned) == 1
    if undefined:
        assert "OL104" in {code for code, _, _ in forked}
    else:
        assert forked == []  # the child's inference typed every output: nothing to report


def test_a_model_the_loader_refuses_stops_its_child(tmp_path, spawned):
    path = _chain(tmp_path / "chain.onnx", negative_dim=True)
    findings = _findings(path)
    assert [code for code, _, _ in findings] == ["OL000"] and "negative dim" in findings[0][2]
    assert len(spawned) == 1 and _reaped(spawned[0])


def test_a_child_that_dies_leaves_inference_to_this_process(tmp_path):
    path = _chain(tmp_path / "chain.onnx")
    loaded = read_unvalidated(path)
    call = prefetch.prefetch_inference(loaded)
    assert call is not None
    os.kill(call._pid, 9)
    oracle = ShapeOracle(loaded)
    assert oracle.derived("graph", f"t{EXTERNAL}")[0] is not None
    assert not oracle.notes
    assert _reaped(call)


def _chain_with_stale_branch(path):
    """The external chain followed by an If whose branches hold a value_info that lies about a rank:
    the child must strip the subgraphs too, or the lie would feed its own check."""
    model = onnx.load(_chain(path), load_external_data=False)

    def branch(name: str) -> onnx.GraphProto:
        nodes = [helper.make_node("Relu", [f"t{EXTERNAL}"], [f"{name}_mid"]),
                 helper.make_node("Neg", [f"{name}_mid"], [f"{name}_out"])]
        stale = helper.make_tensor_value_info(f"{name}_mid", TensorProto.FLOAT, [])
        out = helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, [2])
        return helper.make_graph(nodes, name, [], [out], value_info=[stale])

    graph = model.graph
    graph.input.append(helper.make_tensor_value_info("cond", TensorProto.BOOL, []))
    graph.node.append(helper.make_node("If", ["cond"], ["picked"], then_branch=branch("then"),
                                       else_branch=branch("else")))
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info("picked", TensorProto.FLOAT, [2]))
    onnx.save(model, path)
    return path


def test_stale_annotations_inside_subgraphs_are_found_with_inference_in_a_child(tmp_path, monkeypatch, spawned):
    path = _chain_with_stale_branch(tmp_path / "chain.onnx")
    forked = _findings(path)
    assert len(spawned) == 1 and _reaped(spawned[0])
    assert [(code, where) for code, where, _ in forked] == [
        ("OL005", "graph/node[40]/else_branch/value_info[0]"), ("OL005", "graph/node[40]/then_branch/value_info[0]")]
    monkeypatch.setattr(prefetch, "PREFETCH_MIN_ENTRIES", 10**9)
    assert _findings(path) == forked
