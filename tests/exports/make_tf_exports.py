"""Make the tf2onnx export in this folder, with a Python that has tensorflow-cpu, tf2onnx, onnx and onnxruntime:

    python3 -m venv /tmp/venv-tf
    /tmp/venv-tf/bin/pip install tensorflow-cpu tf2onnx onnx==1.23.2 onnxruntime==1.32.0 numpy
    /tmp/venv-tf/bin/python tests/exports/make_tf_exports.py

(made with tensorflow-cpu 2.21.0, tf2onnx 1.17.0, onnx 1.23.2, onnxruntime 1.32.0). The tests only read the
committed .onnx file; they never need TensorFlow. The function is written here, nothing is downloaded.

``tf2onnx_loop_passthrough.onnx``: a ``tf.while_loop`` whose carried ``x`` goes through each iteration unchanged
beside an accumulator. tf2onnx writes such a value as a Loop body output with the same name as the body input
(the loop-invariant captures ``n`` and the 0.5 constant are carried the same way). That is valid ONNX: the checker
and ONNX Runtime accept it, so a linter must not report it as a model that they refuse.

The file is checked before it is kept: the body must have such a pass-through, the full checker must pass, and
ONNX Runtime must match TensorFlow at batch 1 and 3, at the default optimization level and with none.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # before TensorFlow loads: keep its start-up chatter out

import numpy as np
import onnx
import onnxruntime as ort
import tensorflow as tf
import tf2onnx

HERE = Path(__file__).resolve().parent
NAME = "tf2onnx_loop_passthrough.onnx"
SPEC = [tf.TensorSpec([None, 4], tf.float32, name="x"), tf.TensorSpec([], tf.int32, name="n")]


@tf.function
def accumulate(x: tf.Tensor, n: tf.Tensor) -> tf.Tensor:
    """[batch, 4] -> [batch, 4]: n steps of acc += tanh(0.5 x), with x carried through the loop untouched."""

    def cond(i: tf.Tensor, acc: tf.Tensor, carried: tf.Tensor) -> tf.Tensor:
        return i < n

    def body(i: tf.Tensor, acc: tf.Tensor, carried: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        return i + 1, acc + tf.tanh(carried * 0.5), carried

    _, acc, _ = tf.while_loop(cond, body, [tf.constant(0), tf.zeros_like(x), x])
    return tf.identity(acc, name="y")


def passthrough_names(model: onnx.ModelProto) -> list[str]:
    """The Loop body outputs named like a body input: the pattern this fixture exists for."""
    loops = [node for node in model.graph.node if node.op_type == "Loop"]
    assert len(loops) == 1, f"expected one Loop, got {len(loops)}"
    body = next(attr.g for attr in loops[0].attribute if attr.name == "body")
    inputs = {value.name for value in body.input}
    return [value.name for value in body.output if value.name in inputs]


def check(model: onnx.ModelProto, path: Path) -> None:
    """Refuse to keep a file that lacks the pattern, that the checker refuses, or that ORT runs differently from TF."""
    assert passthrough_names(model), "the Loop body has no output named like a body input"
    assert model.ir_version <= 10, model.ir_version  # what onnxruntime 1.32 loads
    assert all(op.version <= 18 for op in model.opset_import if op.domain in ("", "ai.onnx")), model.opset_import
    onnx.checker.check_model(model, full_check=True)
    levels = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    rng = np.random.default_rng(0)
    for level in levels:
        options = ort.SessionOptions()
        options.graph_optimization_level = level
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        for batch in (1, 3):
            x = rng.standard_normal((batch, 4)).astype(np.float32)
            n = np.array(3, dtype=np.int32)
            (got,) = session.run(None, {"x": x, "n": n})
            want = accumulate(tf.constant(x), tf.constant(n)).numpy()
            assert got.shape == (batch, 4), got.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def main() -> None:
    model, _ = tf2onnx.convert.from_function(accumulate, input_signature=SPEC, opset=15)
    path = HERE / NAME
    onnx.save(model, str(path))
    check(model, path)
    print(f"{NAME}: {path.stat().st_size} bytes, pass-through body outputs {passthrough_names(model)}")


if __name__ == "__main__":
    main()
