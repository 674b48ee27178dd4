"""The shape oracle (docs/design.md): lazy engines, no stray files, no weight bytes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import onnx

from examples import defects
from onnx_lint.engines.oracle import ShapeOracle
from onnx_lint.engines.symbolic import run_symbolic_inference
from onnx_lint.model.load import read_model

_PROBE = """
import sys
from onnx_lint.cli import main
code = main(["check", sys.argv[1], "--no-cache", "--jobs", "1", "--quiet"])
print("HEAVY:" + ",".join(m for m in ("onnxruntime", "onnxruntime.tools", "sympy", "torch") if m in sys.modules))
"""


def _heavy_modules(path, cwd, env=None) -> str:
    done = subprocess.run([sys.executable, "-c", _PROBE, str(path)], capture_output=True, text=True, cwd=cwd,
                          env=env)
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("HEAVY:")]
    assert line, done.stdout + done.stderr
    return line[0][len("HEAVY:"):]


def test_plain_lint_imports_neither_onnxruntime_nor_sympy(save, tmp_path):
    path = save(defects.stale_rank0_output())
    assert _heavy_modules(path, tmp_path) == ""


_CACHED_PROBE = """
import sys
from onnx_lint.cli import main
main(["check", sys.argv[1], "--jobs", "1", "--output-format", sys.argv[2]])
print("ONNX:" + str("onnx" in sys.modules))
"""


def test_a_run_answered_from_the_cache_does_not_import_onnx(save, tmp_path):
    """What makes a warm re-run of a big folder ~10x faster than the first: no onnx import at all."""
    path = save(defects.weakly_typed_mlp())  # fixable findings, printed with their rule metadata
    runs = [subprocess.run([sys.executable, "-c", _CACHED_PROBE, str(path), fmt], capture_output=True, text=True,
                           cwd=tmp_path) for fmt in ("full", "full", "sarif")]
    assert [r.stdout.splitlines()[-1] for r in runs] == ["ONNX:True", "ONNX:False", "ONNX:False"]
    report = [r.stdout.rsplit("ONNX:", 1)[0] for r in runs]
    assert report[0] == report[1] and "OL001" in report[1] and "rules/OL001/" in report[2]


def test_symbolic_fallback_runs_only_where_onnx_gives_up(save, tmp_path, cli):
    """ONNX Runtime's symbolic engine (it needs sympy) runs in its budgeted child, loaded from its file:
    the linting process imports neither sympy nor the runtime, yet the engine's finding is there."""
    path = save(defects.symbolic_fallback(), "gelu.onnx")
    assert _heavy_modules(path, tmp_path) == ""
    found = [(d["code"], d["engine"]) for d in cli("check", str(path), "--no-cache", "--output-format", "json").json()]
    assert ("OL001", "onnxruntime-symbolic") in found


def test_initializer_value_info_is_proven_by_the_file(save, tmp_path, cli):
    """Dynamo exports annotate initializers; the tensors prove those entries, no fallback engine runs."""
    assert _heavy_modules(save(defects.dynamo_style_conv()), tmp_path) == ""
    stale = save(defects.dynamo_style_conv(bias_declared=(5,)), "stale.onnx")
    run = cli("check", str(stale), "--no-cache", "--output-format", "json")
    assert [(d["code"], d["location"]["tensor"], d["engine"]) for d in run.json()] == [
        ("OL005", "conv.bias", "onnx")]
    assert _heavy_modules(stale, tmp_path) == ""


_TRIPWIRE = "raise ImportError('torch was imported')\n"


def test_the_symbolic_fallback_never_imports_torch(save, tmp_path):
    """``onnxruntime.tools``' package __init__ imports torch whenever it is installed (1-2 s); the
    fallback loads its module without that package. A tripwire ``torch`` stands for an installed one."""
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(_TRIPWIRE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    tripped = subprocess.run([sys.executable, "-c", "import onnxruntime.tools"], capture_output=True, text=True,
                             env=env)
    assert "torch was imported" in tripped.stderr  # the tripwire is real: the package would import it
    path = save(defects.symbolic_fallback(), "gelu.onnx")
    assert _heavy_modules(path, tmp_path, env) == ""  # the engine runs in its child, which inherits env
    run = subprocess.run([sys.executable, "-m", "onnx_lint", "check", str(path), "--no-cache",
                          "--output-format", "json"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert ("OL001", "onnxruntime-symbolic") in [(d["code"], d["engine"]) for d in json.loads(run.stdout)]


def test_symbolic_inference_writes_no_file_even_when_it_fails(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = defects.custom_op_output()  # ONNX Runtime's engine gives up on an unknown op
    result = run_symbolic_inference(model)
    assert result is not None
    assert list(tmp_path.iterdir()) == []


def test_lint_never_loads_weight_bytes(tmp_path):
    path = defects.with_external_data(tmp_path)
    oracle = ShapeOracle(read_model(path))
    inferred = oracle.inferred
    assert all(not init.raw_data for init in inferred.graph.initializer)
    # W[64,256] stays an external initializer (no bytes in memory); inference reads only its type.
    assert [i.name for i in inferred.graph.initializer] == ["W"] and inferred.graph.initializer[0].external_data
    assert oracle.derived("graph", "Y")[0].dims == ("batch", 256)


def test_large_embedded_initializers_are_not_fed_to_inference(tmp_path):
    model = defects.healthy_matmul()
    big = onnx.numpy_helper.from_array(__import__("numpy").zeros((256, 256), "float32"), "big")
    model.graph.initializer.append(big)
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    oracle = ShapeOracle(read_model(path))
    assert "big" not in {i.name for i in oracle.inferred.graph.initializer}


def _external_concat_behind_gelu(folder):
    """Two external weight matrices concatenated, then a com.microsoft Gelu and a stale rank-0 output:
    only ONNX Runtime's symbolic engine derives the output, and its Concat handler reads initializer values."""
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h

    weights = [onnx.numpy_helper.from_array(np.full((4, 8), i, np.float32), f"w{i}") for i in range(2)]
    graph = h.make_graph(
        [h.make_node("Concat", ["w0", "w1"], ["table"], axis=0),
         h.make_node("MatMul", ["X", "table"], ["mm"]),
         h.make_node("Gelu", ["mm"], ["Y"], domain="com.microsoft")],
        "g", [h.make_tensor_value_info("X", T.FLOAT, ["batch", 8])], [h.make_tensor_value_info("Y", T.FLOAT, [])],
        weights)
    model = h.make_model(graph, ir_version=8,
                         opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)])
    path = folder / "model.onnx"
    onnx.save_model(model, path, save_as_external_data=True, location="weights.bin", size_threshold=0)
    return path


def test_no_engine_reads_external_weights(tmp_path):
    """External weight matrices stay initializers for ONNX's inference (it never reads them); ONNX Runtime's
    engine gets them as typed inputs, since it would read them relative to the working folder."""
    from inotify import FileWatch

    folder, cwd = tmp_path / "m", tmp_path / "cwd"
    folder.mkdir()
    cwd.mkdir()
    path = _external_concat_behind_gelu(folder)
    (cwd / "weights.bin").write_bytes((folder / "weights.bin").read_bytes())  # what a relative read would hit
    watches = [FileWatch(folder / "weights.bin"), FileWatch(cwd / "weights.bin")]
    try:
        run = subprocess.run([sys.executable, "-m", "onnx_lint", "check", str(path), "--no-cache",
                              "--output-format", "json"], capture_output=True, text=True, cwd=cwd)
        events = [e for w in watches for e in w.events()]
    finally:
        for w in watches:
            w.close()
    assert events == []
    found = {(d["code"], d["engine"]) for d in json.loads(run.stdout)}
    assert ("OL001", "onnxruntime-symbolic") in found, run.stdout + run.stderr
    oracle = ShapeOracle(read_model(path))
    assert {i.name for i in oracle.inferred.graph.initializer} == {"w0", "w1"}  # rank 2: left as they are
    assert oracle.derived("graph", "table")[0].dims == (8, 8)
