"""ONNX Runtime's symbolic engine started before it is asked (engines/budgeted.py ``EarlyChild``).

A small model with ONNX Runtime's own operators needs the engine almost always, so the lint starts it
first, beside the rules that ask ONNX Runtime for a session. Started early or when asked, the user sees
the same findings; a lint that never asks leaves no child process behind.
"""

from __future__ import annotations

import os

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from onnx_lint import api
from onnx_lint.engines import budgeted, forked
from onnx_lint.engines.oracle import ShapeOracle

pytest.importorskip("sympy")


def _fast_gelu(declared) -> onnx.ModelProto:
    """x[batch, 8] -> com.microsoft FastGelu -> y, y declared ``declared``."""
    graph = h.make_graph([h.make_node("FastGelu", ["x"], ["y"], domain="com.microsoft")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, ["batch", 8])],
                         [h.make_tensor_value_info("y", T.FLOAT, declared)])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)],
                        ir_version=8)


@pytest.fixture
def started(monkeypatch) -> list[budgeted.EarlyChild]:
    """Every engine started early during the test (a core counts as idle however busy the machine is)."""
    children: list[budgeted.EarlyChild] = []
    start = budgeted.EarlyChild.start.__func__  # type: ignore[attr-defined]

    def recording(cls, target, request):
        child = start(cls, target, request)
        if child is not None:
            children.append(child)
        return child

    monkeypatch.setattr(forked, "idle_core", lambda: True)
    monkeypatch.setattr(budgeted.EarlyChild, "start", classmethod(recording))
    return children


def _no_children_left() -> bool:
    """No child process of this one is left, running or unreaped."""
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_a_stale_output_found_by_the_engine_started_early_is_the_one_found_when_asked(tmp_path, monkeypatch,
                                                                                      started):
    path = tmp_path / "gelu.onnx"
    onnx.save(_fast_gelu([]), path)
    early = api.check(path).diagnostics
    assert len(started) == 1
    [finding] = [d for d in early if d.code == "OL001"]
    assert "float[batch, 8]" in finding.message and finding.engine == "onnxruntime-symbolic"
    monkeypatch.setattr(ShapeOracle, "start_symbolic_early", lambda self: None)
    assert api.check(path).diagnostics == early
    assert len(started) == 2  # the engine forked when asked, as before
    assert _no_children_left()


def test_an_engine_started_early_that_nobody_asks_is_stopped(tmp_path, started):
    path = tmp_path / "gelu.onnx"
    onnx.save(_fast_gelu(["batch", 8]), path)  # healthy: no declaration needs the engine
    assert [d.code for d in api.check(path, ignore=["OL107"]).diagnostics] == []
    assert len(started) == 1
    assert _no_children_left()
