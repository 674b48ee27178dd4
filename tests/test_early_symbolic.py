"""ONNX Runtime's symbolic engine started before it is asked (engines/budgeted.py ``EarlyChild``).

A small model with ONNX Runtime's own operators needs the engine almost always, so the lint starts it
first, beside the rules that ask ONNX Runtime for a session. Started early or when asked, the user sees
the same findings; a lint that never asks leaves no child process behind. Each case runs in a fresh
interpreter, as the command line does: a test process that has imported onnxruntime may not fork.
"""

from __future__ import annotations

import json
import subprocess
import sys

import onnx
import pytest
from conftest import REPO
from onnx import TensorProto as T
from onnx import helper as h

pytest.importorskip("sympy")

_RUN = r"""
import json, os, sys
from onnx_lint import api
from onnx_lint.engines import budgeted, forked
from onnx_lint.engines.oracle import ShapeOracle

forked.room_for_child = lambda: True  # room for a child, however busy the test machine is
started = []
start = budgeted.EarlyChild.start.__func__
def recording(cls, target, request):
    child = start(cls, target, request)
    if child is not None:
        started.append(child)
    return child
budgeted.EarlyChild.start = classmethod(recording)
ignore = sys.argv[2:] or None

def findings():
    return [[d.code, d.message, d.engine] for d in api.check(sys.argv[1], ignore=ignore).diagnostics]

early = findings()
early_children = len(started)
ShapeOracle.start_symbolic_early = lambda self: None
asked = findings()
try:
    os.waitpid(-1, os.WNOHANG)
    left = True
except ChildProcessError:
    left = False
print(json.dumps({"early": early, "asked": asked, "early_children": early_children, "all_children": len(started),
                  "children_left": left}))
"""


def _fast_gelu(declared) -> onnx.ModelProto:
    """x[batch, 8] -> com.microsoft FastGelu -> y, y declared ``declared``."""
    graph = h.make_graph([h.make_node("FastGelu", ["x"], ["y"], domain="com.microsoft")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, ["batch", 8])],
                         [h.make_tensor_value_info("y", T.FLOAT, declared)])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)],
                        ir_version=8)


def _run(path, *ignore: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _RUN, str(path), *ignore], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_stale_output_found_by_the_engine_started_early_is_the_one_found_when_asked(tmp_path):
    path = tmp_path / "gelu.onnx"
    onnx.save(_fast_gelu([]), path)
    run = _run(path)
    assert run["early_children"] == 1
    [finding] = [f for f in run["early"] if f[0] == "OL001"]
    assert "float[batch, 8]" in finding[1] and finding[2] == "onnxruntime-symbolic"
    assert run["asked"] == run["early"]
    assert run["all_children"] == 2  # the second lint forked the engine when it asked, as before
    assert not run["children_left"]


def test_an_engine_started_early_that_nobody_asks_is_stopped(tmp_path):
    path = tmp_path / "gelu.onnx"
    onnx.save(_fast_gelu(["batch", 8]), path)  # healthy: no declaration needs the engine
    run = _run(path, "OL107")
    assert run["early"] == [] and run["early_children"] == 1
    assert not run["children_left"]
