"""Readiness rules (issue 15): what each predicts is what the real tools (onnx.checker, ONNX Runtime,
FP16 conversion) then do. That each fires on its defect and stays silent on its healthy twin is
``tests/test_rule_fixtures.py``'s job, over the one fixture table."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
from conftest import run_process

from examples import readiness
from onnx_lint.rules import CODES

NEW = {c for c in CODES if c >= "OL102"}


def _findings(cli, path) -> list[dict]:
    run = cli("check", str(path), "--output-format", "json")
    return [d for d in run.json() if d["code"] in NEW]


def _ort_error(path) -> str | None:
    ort = pytest.importorskip("onnxruntime")
    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("name", ["runtime_opset_too_new", "runtime_missing_kernel", "runtime_old_opset",
                                  "undefined_output"])
def test_what_the_runtime_rules_predict_is_what_onnx_runtime_does(cli, save, name):
    build = readiness.READINESS[name][0]
    bad, twin = save(build(True), "bad.onnx"), save(build(False), "twin.onnx")
    assert _findings(cli, bad) and _ort_error(bad) is not None
    assert _ort_error(twin) is None


def test_each_checker_error_gets_its_own_node_location(cli, save):
    path = save(readiness.checker_errors())
    first_only = str(pytest.raises(onnx.checker.ValidationError, onnx.checker.check_model, str(path)).value)
    found = _findings(cli, path)
    assert [(d["location"]["path"], d["location"]["node"]) for d in found] == [
        ("graph/node[0]", "relu"), ("graph/node[1]", "act")]
    assert "alpha" in found[0]["message"] and "Gelu" in found[1]["message"]
    assert "Gelu" not in first_only  # the checker alone stops at the first


def test_ir3_initializer_not_in_inputs_is_fixed_by_raising_the_ir_version(cli, save):
    model = readiness.runtime_old_opset(False)  # IR 3, opset 7
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.ones((2, 4), np.float32), "W"))
    model.graph.node[0].input[1] = "W"
    path = save(model)
    [diag] = _findings(cli, path)
    assert diag["code"] == "OL102" and diag["fix"] == {
        "applicability": "safe", "applied": False,
        "title": "Raise the IR version to 4 (initializers need not be graph inputs)"}
    assert cli("check", str(path), "--fix").code == 0
    fixed = onnx.load(path)
    assert fixed.ir_version == 4 and [i.name for i in fixed.graph.input] == ["X"]
    assert list(fixed.graph.node) == list(model.graph.node)
    onnx.checker.check_model(fixed, full_check=True)


def test_unsorted_fix_reorders_nodes_and_keeps_their_content(cli, save):
    ort = pytest.importorskip("onnxruntime")
    original = readiness.unsorted_nodes()
    path = save(original)
    with pytest.raises(onnx.checker.ValidationError, match="topologically sorted"):
        onnx.checker.check_model(str(path))
    [diag] = _findings(cli, path)
    assert diag["location"]["path"] == "graph/node[0]" and diag["location"]["tensor"] == "A"
    assert cli("check", str(path), "--fix").code == 0
    fixed = onnx.load(path)
    onnx.checker.check_model(fixed, full_check=True)
    assert [n.name for n in fixed.graph.node] == ["neg", "relu"]
    assert sorted(n.SerializeToString() for n in fixed.graph.node) == sorted(
        n.SerializeToString() for n in original.graph.node)
    x = np.arange(8, dtype=np.float32).reshape(2, 4) - 4
    [y] = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"X": x})
    assert np.array_equal(y, np.maximum(-x, 0))
    once = path.read_bytes()
    assert cli("check", str(path), "--fix").code == 0 and path.read_bytes() == once


def test_unsorted_subgraph_is_sorted_in_place(cli, save):
    from onnx import TensorProto as T
    from onnx import helper as h

    branch = h.make_graph([h.make_node("Relu", ["a"], ["out"], name="r"), h.make_node("Neg", ["X"], ["a"], name="n")],
                          "then", [], [h.make_tensor_value_info("out", T.FLOAT, [2])])
    other = h.make_graph([h.make_node("Identity", ["X"], ["out2"], name="i")], "else", [],
                         [h.make_tensor_value_info("out2", T.FLOAT, [2])])
    model = h.make_model(h.make_graph(
        [h.make_node("If", ["C"], ["Y"], name="if", then_branch=branch, else_branch=other)], "g",
        [h.make_tensor_value_info("C", T.BOOL, []), h.make_tensor_value_info("X", T.FLOAT, [2])],
        [h.make_tensor_value_info("Y", T.FLOAT, [2])]), opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    path = save(model)
    [diag] = _findings(cli, path)
    assert diag["code"] == "OL103" and diag["location"]["path"] == "graph/node[0]/then_branch/node[0]"
    assert cli("check", str(path), "--fix").code == 0
    onnx.checker.check_model(onnx.load(path), full_check=True)


def test_fp16_overflow_names_consumers_and_is_what_fp16_conversion_breaks(cli, save):
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxruntime.transformers.float16")
    from onnxruntime.transformers.float16 import convert_float_to_float16

    path = save(readiness.fp16_overflow())
    found = _findings(cli, path)
    messages = {d["location"]["tensor"]: d["message"] for d in found}
    assert set(messages) == {"mask", "eps"}
    assert "'add_mask' (Add)" in messages["mask"] and "--exclude-nodes add_mask" in messages["mask"]
    assert "all zeros" in messages["eps"] and "--exclude-nodes add_eps" in messages["eps"]
    x = {"X": np.ones((2, 4), np.float32)}
    [y32] = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, x)
    fp16 = convert_float_to_float16(onnx.load(path), keep_io_types=True)
    [y16] = ort.InferenceSession(fp16.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, x)
    assert np.allclose(y32, 1 - 1e9) and np.allclose(y16, 1 - 65504)  # converted without a word, computes else
    twin = convert_float_to_float16(readiness.fp16_overflow(False), keep_io_types=True)
    [t16] = ort.InferenceSession(twin.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, x)
    assert np.allclose(t16, 1 - 1e4, rtol=1e-3)


def test_fp16_overflow_in_external_weights_is_not_read(cli, tmp_path):
    model = readiness.fp16_overflow()
    path = tmp_path / "ext.onnx"
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="ext.data",
                    size_threshold=0)
    found = _findings(cli, path)
    assert [d["location"]["tensor"] for d in found] == ["eps"]  # the Constant lives in the file; the mask does not


def test_batch_baked_reshape_breaks_at_another_batch_size(save):
    ort = pytest.importorskip("onnxruntime")
    x = np.ones((3, 4, 8), np.float32)
    bad = ort.InferenceSession(str(save(readiness.batch_baked_reshape(True), "bad.onnx")),
                               providers=["CPUExecutionProvider"])
    [y] = bad.run(None, {"X": x})
    assert y.shape == (1, 96)  # the batch of 3 was folded into one row
    twin = ort.InferenceSession(str(save(readiness.batch_baked_reshape(False), "twin.onnx")),
                                providers=["CPUExecutionProvider"])
    assert twin.run(None, {"X": x})[0].shape == (3, 32)


def test_runtime_facts_come_from_onnx_runtime_and_are_cached_per_version(tmp_path):
    """Gathered in a child process (the lint process never imports onnxruntime) and written once."""
    pytest.importorskip("onnxruntime")
    probe = ("import json, sys\nfrom onnx_lint.engines import ort_registry as r\nf = r.runtime_facts()\n"
             "print(json.dumps([f.max_ir_version, f.max_opsets.get(''), len(f.kernels), "
             "'onnxruntime' in sys.modules]))")
    env = {**__import__("os").environ, "XDG_CACHE_HOME": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path,
                           check=True)
            for _ in range(2)]
    first, second = (json.loads(r.stdout) for r in runs)
    assert first == second and first[3] is False and first[2] > 100
    assert len(list((tmp_path / "onnx-lint").glob("ort-facts-*.json"))) == 1
    model = readiness.runtime_old_opset(False)
    model.ir_version = first[0] + 1
    path = tmp_path / "future_ir.onnx"
    onnx.save(model, path)
    assert f"max supported IR version: {first[0]}" in (_ort_error(path) or "")


def test_quantize_exclude_nodes_keeps_an_overflowing_constant_in_fp32(cli, tmp_path):
    """OL201's suggestion works: the named nodes and the constants only they read skip FP16 conversion."""
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto as T
    from onnx import helper as h

    rng = np.random.default_rng(0)
    weights = onnx.numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "W")
    divisor = onnx.numpy_helper.from_array(np.full((8,), 1e5, np.float32), "divisor")
    model = h.make_model(h.make_graph(
        [h.make_node("MatMul", ["X", "W"], ["A"], name="mm"),
         h.make_node("Div", ["A", "divisor"], ["Y"], name="scale")],
        "g", [h.make_tensor_value_info("X", T.FLOAT, [1, 16])], [h.make_tensor_value_info("Y", T.FLOAT, [1, 8])],
        [weights, divisor]), opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    path = tmp_path / "div.onnx"
    onnx.save(model, path)
    [finding] = _findings(cli, path)
    assert finding["code"] == "OL201" and finding["message"].endswith("--exclude-nodes scale")
    np.savez(tmp_path / "calib.npz", X=rng.standard_normal((8, 16)).astype(np.float32))
    out = tmp_path / "div.q.onnx"
    run = run_process("quantize", str(path), "-o", str(out), "--calibration-data", str(tmp_path / "calib.npz"),
                      "--exclude-nodes", "scale", cwd=tmp_path)
    assert run.code == 0, run.err
    kept = next(t for t in onnx.load(out).graph.initializer if t.name == "divisor")
    assert kept.data_type == T.FLOAT and onnx.numpy_helper.to_array(kept)[0] == 1e5
    x = {"X": rng.standard_normal((1, 16)).astype(np.float32)}
    [want] = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, x)
    [got] = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, x)
    assert np.allclose(got, want, rtol=0.1, atol=2e-6)  # without the exclusion the divisor becomes 65504: +53%


@pytest.mark.parametrize(("elem_type", "flagged"),
                         [(onnx.TensorProto.FLOAT16, False), (onnx.TensorProto.BFLOAT16, True)])
def test_float16_nodes_are_cast_by_onnx_runtime_but_bfloat16_ones_are_not(cli, save, elem_type, flagged):
    """Relu has no FLOAT16 CPU kernel, yet ONNX Runtime loads the node (it inserts Casts); BFLOAT16 it refuses."""
    model = readiness.runtime_missing_kernel(False)
    for value in (model.graph.input[0], model.graph.output[0]):
        value.type.tensor_type.elem_type = elem_type
    path = save(model)
    assert bool(_findings(cli, path)) is flagged
    assert (_ort_error(path) is not None) is flagged


def test_lint_cache_is_keyed_on_the_onnx_runtime_version(tmp_path):
    """OL106/OL107 answers change with the installed ONNX Runtime: a cached result must not outlive it."""
    import importlib.metadata

    from onnx_lint.commands.cache import LintCache

    pytest.importorskip("onnxruntime")
    assert f"onnxruntime={importlib.metadata.version('onnxruntime')}" in LintCache(tmp_path, "settings").salt


def test_onnx_runtime_fp16_converter_output_is_unsorted_and_fixed_by_reordering(cli, save):
    """ONNX Runtime's float16 converter with keep_io_types appends its input Casts after their readers."""
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxruntime.transformers.float16")
    from onnxruntime.transformers.float16 import convert_float_to_float16

    from examples import defects

    converted = convert_float_to_float16(defects.healthy_matmul(), keep_io_types=True)
    path = save(converted, "fp16.onnx")
    with pytest.raises(onnx.checker.ValidationError, match="topologically sorted"):
        onnx.checker.check_model(str(path))
    assert [(d["code"], d["location"]["tensor"]) for d in _findings(cli, path)] == [("OL103", "graph_input_cast_0")]
    x = {"X": np.arange(12, dtype=np.float32).reshape(3, 4) / 10}
    [before] = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, x)
    assert cli("check", str(path), "--fix").code == 0
    onnx.checker.check_model(str(path), full_check=True)
    [after] = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, x)
    assert np.array_equal(before, after)


def test_a_large_graph_is_checked_per_operator_and_still_names_the_node(cli, save):
    """Above 20k nodes OL107 asks ONNX Runtime's registry once per operator, then names each node that lacks
    a kernel: one Add at opset 6 among 20,001 Relus (Relu-6 has a kernel, Add-6 none)."""
    h = onnx.helper
    nodes = [h.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"relu{i}") for i in range(20_001)]
    nodes.insert(7, h.make_node("Add", ["t7", "t7"], ["t7b"], name="old_add"))
    nodes[8] = h.make_node("Relu", ["t7b"], ["t8"], name="relu7")
    value = h.make_tensor_value_info
    graph = h.make_graph(nodes, "chain", [value("t0", onnx.TensorProto.FLOAT, [2])],
                         [value("t20001", onnx.TensorProto.FLOAT, [2])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 6)], ir_version=3)
    found = [d for d in _findings(cli, save(model, "large.onnx")) if d["code"] == "OL107"]
    assert [(d["location"]["path"], d["location"]["node"]) for d in found] == [("graph/node[7]", "old_add")]


def _branching(then_nodes: list, then_initializers: list) -> onnx.ModelProto:
    """``If`` over an INT16 input ``X``: the then branch is given, the else branch passes ``X`` on."""
    h, T = onnx.helper, onnx.TensorProto
    then_branch = h.make_graph(then_nodes, "then", [], [h.make_tensor_value_info("t", T.INT16, [2])],
                               then_initializers)
    else_branch = h.make_graph([h.make_node("Identity", ["X"], ["e"])], "else", [],
                               [h.make_tensor_value_info("e", T.INT16, [2])])
    graph = h.make_graph([h.make_node("If", ["c"], ["Y"], name="branch", then_branch=then_branch,
                                      else_branch=else_branch)], "g",
                         [h.make_tensor_value_info("X", T.INT16, [2]), h.make_tensor_value_info("c", T.BOOL, [])],
                         [h.make_tensor_value_info("Y", T.INT16, [2])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def test_kernel_types_resolve_inside_subgraphs_as_onnx_runtime_resolves_them(cli, save):
    """A branch's Relu on the outer graph's INT16 input has no CPU kernel; on the branch's own INT8
    initializer it has one. OL107 reads each scope's element types in bulk, the branch's own before the
    enclosing graph's, and says what ONNX Runtime then says."""
    h, T = onnx.helper, onnx.TensorProto
    outer = save(_branching([h.make_node("Relu", ["X"], ["t"], name="outer_relu")], []), "outer.onnx")
    found = [d for d in _findings(cli, outer) if d["code"] == "OL107"]
    assert [(d["location"]["path"], d["location"]["node"]) for d in found] == [
        ("graph/node[0]/then_branch/node[0]", "outer_relu")]
    assert "Relu(14) node with name 'outer_relu'" in (_ort_error(outer) or "")
    own = save(_branching([h.make_node("Relu", ["X8"], ["t0"], name="inner_relu"),
                           h.make_node("Cast", ["t0"], ["t"], name="widen", to=T.INT16)],
                          [onnx.numpy_helper.from_array(np.ones((2,), np.int8), "X8")]), "own.onnx")
    assert not [d for d in _findings(cli, own) if d["code"] == "OL107"]
    assert _ort_error(own) is None


def test_fp16_overflow_read_in_bulk_flags_exactly_the_tensors_one_by_one_would(cli, save):
    """Thousands of small weights are range-checked together; the verdicts are those of each tensor alone."""
    from onnx import TensorProto, helper, numpy_helper

    from onnx_lint.rules.ol201_fp16_overflow import fp16_problem

    rng = np.random.default_rng(7)
    special = {17: [1e9], 230: [np.nan, 1.0], 999: [1e-12, -3e-13], 1500: [0.0, 0.0], 2048: [-7e4, 2.0],
               2500: [np.inf, 1.0], 2999: [5e-8, 0.0]}
    inits, nodes, expected = [], [], set()
    for i in range(3000):
        dtype = np.float64 if i % 7 == 0 else np.float32
        values = np.array(special.get(i, rng.standard_normal(4)), dtype=dtype)
        tensor = numpy_helper.from_array(values, f"w{i}")
        if i % 11 == 0:  # the float_data form is read one by one, and must agree as well
            tensor = helper.make_tensor(f"w{i}", TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT,
                                        values.shape, values.tolist())
        inits.append(tensor)
        nodes.append(helper.make_node("Size", [f"w{i}"], [f"s{i}"], name=f"size{i}"))
        if fp16_problem(values) is not None:
            expected.add(f"w{i}")
    inits.append(numpy_helper.from_array(np.zeros(0, np.float32), "empty"))
    nodes.append(helper.make_node("Size", ["empty"], ["s_empty"], name="size_empty"))
    nodes.append(helper.make_node("Sum", [f"s{i}" for i in range(3000)] + ["s_empty"], ["Y"], name="sum"))
    graph = helper.make_graph(nodes, "bulk", [], [helper.make_tensor_value_info("Y", TensorProto.INT64, [])], inits)
    path = save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8))
    flagged = {d["location"]["tensor"] for d in _findings(cli, path) if d["code"] == "OL201"}
    assert expected == {"w17", "w999", "w2048"}  # NaN, inf and a value just above the flush line are not flagged
    assert flagged == expected


def test_fp16_overflow_bulk_read_finds_what_reading_each_tensor_finds(cli, tmp_path, monkeypatch):
    """The bulk range check (raw bytes joined per element type, in batches) flags exactly the
    initializers that ``to_array`` one by one flags, whatever the batch size: in range, overflowing,
    all-tiny, NaN, all-zero, float64, typed ``float_data`` storage and raw bytes of a wrong length."""
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper

    from onnx_lint.model.graphs import iter_scopes
    from onnx_lint.rules import ol201_fp16_overflow as ol201

    rng = np.random.default_rng(3)
    inits = []
    for i in range(120):
        kind = i % 8
        values = rng.standard_normal(int(rng.integers(1, 40))).astype(np.float64 if kind == 5 else np.float32)
        if kind == 1:
            values[int(rng.integers(values.size))] = 1e6
        elif kind == 2:
            values = values * np.float32(1e-9)
        elif kind == 3:
            values[0] = np.nan
        elif kind == 4:
            values = np.zeros_like(values)
        tensor = numpy_helper.from_array(values, f"w{i}")
        if kind == 6:
            tensor = h.make_tensor(f"w{i}", T.FLOAT, [values.size], values.tolist())  # float_data
        elif kind == 7:
            tensor.raw_data = tensor.raw_data[:-1]  # not a whole number of values
        inits.append(tensor)
    graph = h.make_graph([h.make_node("Identity", ["X"], ["Y"])], "g",
                         [h.make_tensor_value_info("X", T.FLOAT, [1])], [h.make_tensor_value_info("Y", T.FLOAT, [1])],
                         inits)
    [scope] = iter_scopes(h.make_model(graph))

    def flagged() -> set[str]:
        return {c.name for c in ol201.suspect_constants(scope)
                if c.tensor.data_type in (T.FLOAT, T.DOUBLE) and len(c.tensor.raw_data) % 4 == 0
                and ol201.fp16_problem(numpy_helper.to_array(c.tensor)) is not None}

    truth = set()
    for tensor in inits:
        try:
            values = numpy_helper.to_array(tensor)
        except Exception:
            continue
        if ol201.fp16_problem(values) is not None:
            truth.add(tensor.name)
    suspects = {c.name for c in ol201.suspect_constants(scope)}
    assert truth and truth <= suspects
    assert {f"w{i}" for i in range(7, 120, 8)} <= suspects  # wrong byte length: left to the full check
    assert flagged() == truth
    monkeypatch.setattr(ol201, "_BATCH_BYTES", 64)  # many batches, some of one tensor
    assert {c.name for c in ol201.suspect_constants(scope)} == suspects
