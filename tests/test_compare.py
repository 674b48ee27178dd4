"""``onnx-lint compare``: what the tools users chain did to a model, said as a reader of the twin would check it.

Each twin is written by the real tool (``--fix``, ``onnx-lint quantize``, ONNX Runtime's dynamic quantizer
and FP16 converter, onnxslim); the report must name what the tool changed and nothing it did not.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import run_process
from onnx import TensorProto, helper, numpy_helper

from examples import defects


def _compare(*args: str | Path) -> tuple[int, str, str]:
    done = run_process("compare", *map(str, args), cwd=Path.cwd())
    return done.code, done.out, done.err


def _json(before: Path, after: Path) -> dict:
    code, out, err = _compare(before, after, "--output-format", "json")
    assert code == 0, err
    return json.loads(out)


def _mlp(path: Path) -> Path:
    """X[batch, 16] -> MatMul(W1) -> Relu -> MatMul(W2) -> Add(b) -> Y, weights big enough to quantize."""
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
               for name, shape in (("W1", (16, 64)), ("W2", (64, 8)), ("b", (8,)))]
    nodes = [helper.make_node("MatMul", ["X", "W1"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["r"], name="act"),
             helper.make_node("MatMul", ["r", "W2"], ["p"], name="fc2"),
             helper.make_node("Add", ["p", "b"], ["Y"], name="bias")]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 16])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 8])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)
    return path


def _fixed_twin(model: onnx.ModelProto, folder: Path, stem: str) -> tuple[Path, Path]:
    """``stem.onnx`` and ``stem.fixed.onnx``, the second as ``onnx-lint check --fix`` rewrote it."""
    before, after = folder / f"{stem}.onnx", folder / f"{stem}.fixed.onnx"
    onnx.save(model, before)
    onnx.save(model, after)
    assert run_process("check", "--fix", str(after), cwd=folder).code == 0
    return before, after


def test_fix_changes_one_declaration_and_nothing_else(tmp_path):
    before, after = _fixed_twin(defects.stale_rank0_output(), tmp_path, "model")
    code, out, _err = _compare(before, after)
    assert code == 0
    assert "Declarations changed (1)\n  output 'Y': float → float[3, 5]" in out
    for section in ("Precision changed", "Removed", "Added", "Rewritten"):
        assert section not in out
    assert _compare(before, after, "--exit-code")[0] == 1


def test_identical_models_say_so_and_exit_zero_with_exit_code(tmp_path):
    model = _mlp(tmp_path / "mlp.onnx")
    code, out, _err = _compare(model, model, "--exit-code")
    assert code == 0
    assert "no node, declaration, operator count or weight type differs" in out
    assert _json(model, model)["identical"] is True


def test_onnx_lint_quantize_int8_and_fp16_nodes(tmp_path):
    before, after = _mlp(tmp_path / "mlp.onnx"), tmp_path / "mlp.int8.onnx"
    done = run_process("quantize", str(before), "-o", str(after), "--int8-output-layers", cwd=tmp_path)
    assert done.code == 0, done.err
    found = _json(before, after)
    precision = {c["name"]: c["precision"] for c in found["nodes"] if c["kind"] == "precision"}
    written = onnx.load(after)
    dequantized = {n.output[0] for n in written.graph.node if n.op_type == "DequantizeLinear"}
    int8 = {n.name for n in written.graph.node if n.op_type == "MatMul" and set(n.input) & dequantized}
    assert int8, "the quantizer wrapped no MatMul in Q/DQ"
    assert {name for name, p in precision.items() if p == "INT8"} == int8
    assert all(precision[n] == "FP16" for n in ("act", "bias"))  # the rest runs in FP16
    assert found["before"]["precision"] == {"FP32": 4}
    assert found["after"]["weightBytes"] < found["before"]["weightBytes"]
    # The Q/DQ and Casts are counted by op, never listed as nodes of their own.
    ops = {op: (a, b) for op, a, b in found["ops"]}
    assert ops["QuantizeLinear"][0] == 0 and ops["DequantizeLinear"][1] > 0
    assert not [c for c in found["nodes"] if c["op"] in ("QuantizeLinear", "DequantizeLinear", "Cast")]
    assert not [c for c in found["nodes"] if c["kind"] in ("removed", "added", "rewritten")]


def test_dynamic_quantization_names_the_integer_kernel(tmp_path):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    before, after = _mlp(tmp_path / "mlp.onnx"), tmp_path / "mlp.dynamic.onnx"
    quantize_dynamic(str(before), str(after), weight_type=QuantType.QInt8)
    changes = {c["name"]: c for c in _json(before, after)["nodes"]}
    kernels = {n.op_type for n in onnx.load(after).graph.node}
    assert "MatMulInteger" in kernels or "DynamicQuantizeMatMul" in kernels
    for name in ("fc1", "fc2"):
        assert changes[name]["kind"] == "precision" and changes[name]["precision"] == "INT8", changes[name]
        assert changes[name]["detail"].startswith("MatMul → ")
    assert set(changes) == {"fc1", "fc2"}  # the scales' Mul and the Casts are the kernels' plumbing


def test_fp16_converter_nodes_it_kept_in_fp32(tmp_path):
    from onnxruntime.transformers.float16 import convert_float_to_float16

    before, after = _mlp(tmp_path / "mlp.onnx"), tmp_path / "mlp.fp16.onnx"
    converted = convert_float_to_float16(onnx.load(before), keep_io_types=True, node_block_list=["fc2"])
    onnx.save(converted, after)
    code, out, _err = _compare(before, after)
    assert code == 0
    assert "MatMul 'fc1': FP32 → FP16" in out
    assert "Kept in FP32 (1 node)\n  MatMul 'fc2': stays FP32" in out
    assert "initializers float → float16" in out


def test_onnxslim_removed_nodes(tmp_path):
    onnxslim = pytest.importorskip("onnxslim")
    before, after = tmp_path / "foldable.onnx", tmp_path / "foldable.slim.onnx"
    shape = numpy_helper.from_array(np.array([-1, 16], dtype=np.int64), "shape")
    nodes = [helper.make_node("Identity", ["X"], ["x1"], name="copy"),
             helper.make_node("Reshape", ["x1", "shape"], ["x2"], name="flatten"),
             helper.make_node("Relu", ["x2"], ["Y"], name="act")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 16])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 16])], [shape])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), before)
    onnx.save(onnxslim.slim(onnx.load(before)), after)
    slim_ops = [n.op_type for n in onnx.load(after).graph.node]
    found = _json(before, after)
    removed = {c["name"] for c in found["nodes"] if c["kind"] == "removed"}
    assert "Identity" not in slim_ops and "copy" in removed
    assert removed == {"copy", "flatten"} - {n.name for n in onnx.load(after).graph.node}


def test_unreadable_model_names_the_file(tmp_path):
    model = _mlp(tmp_path / "mlp.onnx")
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    code, out, err = _compare(model, broken)
    assert code == 2 and out == ""
    assert str(broken) in err and "Traceback" not in err
    code, _out, err = _compare(model, tmp_path / "missing.onnx")
    assert code == 2 and "missing.onnx: no such file" in err


def test_a_declaration_inside_a_branch_says_which_graph(tmp_path):
    before, after = _fixed_twin(defects.if_branch_stale(), tmp_path, "if")
    code, out, _err = _compare(before, after)
    assert code == 0
    assert "output 'then_out' in graph/node[0]/then_branch: float → float[batch, 4]" in out
