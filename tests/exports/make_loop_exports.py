"""Make the TorchScript ``Loop`` exports in this folder, with a Python that has torch, onnx and onnxruntime:

    /tmp/venv-exporters/bin/python tests/exports/make_loop_exports.py

A scripted module (``torch.jit.script``) whose loop runs ``n`` times (an int64 input) over a carried state
``h: [batch, 16]`` that starts at zeros, exported by the TorchScript exporter (``dynamo=False``, opset 17)
with batch dynamic (it declares ``x: [batch, 16]``, ``h: [batch, Looph_dim_1]``). Scripting keeps the loop,
so the graph has a real ``Loop`` node whose body takes and returns the carried tensor. The exporter does not
pin the body to the example batch: the body's carried input is ``[h.11_dim_0, h.11_dim_1]`` and its output
``[batch, Looph_dim_1]``.

Beside it, its stale twin, made the way users make it: ONNX Runtime's ``make_dim_param_fixed`` pins batch 2,
ONNX Runtime's symbolic shape inference (the step ``quant_pre_process`` runs before quantization) writes
value_info and the body's input and output shapes at that size, then the main graph's inputs and outputs get
their dynamic dims back. The body's carried input and output, and its value_info, keep ``[2, 16]``.
(``onnx.shape_inference.infer_shapes`` is not enough here: it pins the body output and ``Add`` but leaves
the body's carried input symbolic.) The main graph's value_info also keeps batch 2 (the ``ConstantOfShape``
that starts the state, and ``h``). The tests only read the .onnx files.

Both files are checked with ONNX Runtime before they are kept: at batch 1 and 3 (and 2) with 0, 1 and 4
iterations, with optimizations on and off, both return ``[batch, 16]`` and match torch; the twin runs
(ORT 1.32 logs a ``VerifyOutputSizes`` warning for the body output at each iteration of a batch other than 2).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnxruntime.tools.onnx_model_utils import make_dim_param_fixed
from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
from torch import nn

HERE = Path(__file__).resolve().parent
HEALTHY = HERE / "ts_loop_carried.onnx"
STALE = HERE / "ts_loop_carried_pinned.onnx"
PINNED_BATCH = 2


class Recurrent(nn.Module):
    """``h = tanh(lin(h) + x)``, ``n`` times from zeros: the loop does not depend on the data."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        h = x.new_zeros(x.shape[0], 16)
        for _ in range(int(n)):
            h = torch.tanh(self.lin(h) + x)
        return h


def export(module: nn.Module) -> None:
    """Scripted, not traced: tracing would unroll the loop for the example ``n``."""
    scripted = torch.jit.script(module)
    example = (torch.randn(PINNED_BATCH, 16), torch.tensor(3))
    torch.onnx.export(scripted, example, HEALTHY, dynamo=False, opset_version=17, input_names=["x", "n"],
                      output_names=["h"], dynamic_axes={"x": {0: "batch"}, "h": {0: "batch"}})


def fix_then_dynamic(healthy: onnx.ModelProto) -> onnx.ModelProto:
    """Pin the batch, infer shapes at the pinned size, then hand the main inputs and outputs their dims back."""
    model = onnx.ModelProto()
    model.CopyFrom(healthy)
    make_dim_param_fixed(model.graph, "batch", PINNED_BATCH)
    model = SymbolicShapeInference.infer_shapes(model)
    for stale, original in [*zip(model.graph.input, healthy.graph.input),
                            *zip(model.graph.output, healthy.graph.output)]:
        stale.type.CopyFrom(original.type)
    return model


def body(model: onnx.ModelProto) -> onnx.GraphProto:
    (loop,) = [node for node in model.graph.node if node.op_type == "Loop"]
    return onnx.helper.get_attribute_value(loop.attribute[0])


def dims(value: onnx.ValueInfoProto) -> list[int | str]:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in value.type.tensor_type.shape.dim]


def check(module: nn.Module, model: onnx.ModelProto) -> None:
    """At batch 1, 2 and 3 and 0, 1 and 4 iterations, with and without optimizations, ORT matches torch."""
    for level in (ort.GraphOptimizationLevel.ORT_ENABLE_ALL, ort.GraphOptimizationLevel.ORT_DISABLE_ALL):
        options = ort.SessionOptions()
        options.graph_optimization_level = level
        options.log_severity_level = 3  # the twin's VerifyOutputSizes warnings are expected
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        for batch in (1, PINNED_BATCH, 3):
            x = np.random.default_rng(batch).standard_normal((batch, 16), dtype=np.float32)
            for n in (0, 1, 4):
                (h,) = session.run(["h"], {"x": x, "n": np.array(n, dtype=np.int64)})
                with torch.no_grad():
                    expected = module(torch.from_numpy(x), torch.tensor(n)).numpy()
                assert h.shape == (batch, 16), h.shape
                np.testing.assert_allclose(h, expected, rtol=1e-5, atol=1e-5)


def main() -> None:
    torch.manual_seed(0)
    module = Recurrent().eval()
    export(module)
    healthy = onnx.load(HEALTHY)
    assert all(not isinstance(d, int) or d == 16 for v in (*body(healthy).input, *body(healthy).output)
               for d in dims(v)), "the exporter pinned the body"
    check(module, healthy)
    stale = fix_then_dynamic(healthy)
    onnx.checker.check_model(stale, full_check=True)
    carried_in, carried_out = body(stale).input[2], body(stale).output[1]
    assert dims(carried_in) == dims(carried_out) == [PINNED_BATCH, 16], (dims(carried_in), dims(carried_out))
    assert dims(stale.graph.input[0]) == ["batch", 16], dims(stale.graph.input[0])
    check(module, stale)
    onnx.save(stale, STALE)


if __name__ == "__main__":
    main()
