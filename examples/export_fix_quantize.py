"""Export a model, repair it with ``onnx_lint.fix``, quantize it with ``onnx_lint.quantize``.

    python examples/export_fix_quantize.py [FOLDER]      # default: a temporary folder

With torch installed, a small MLP goes through ``torch.onnx.export``. Without it, the same MLP
is built with ``onnx.helper`` the way a weakly-typed exporter writes it: output ``Y`` declared as
a scalar while the graph computes ``[batch, 8]`` (OL001), the defect that breaks ONNX Runtime
calibration and FP16 conversion downstream.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnx_lint


def export_with_torch(path: Path) -> onnx.ModelProto | None:
    """``torch.onnx.export`` of a two-layer MLP with a dynamic batch; None without torch."""
    try:
        import torch
    except ImportError:
        return None
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 8)).eval()
    try:
        torch.onnx.export(mlp, (torch.randn(1, 16),), str(path), input_names=["X"], output_names=["Y"],
                          dynamic_axes={"X": {0: "batch"}, "Y": {0: "batch"}})
    except ModuleNotFoundError as exc:  # the exporter's own dependency (onnxscript) is not installed
        print(f"torch.onnx.export needs {exc.name}, which is not installed")
        return None
    return onnx.load(path)


def build_weakly_typed() -> onnx.ModelProto:
    """The same MLP written with onnx.helper, with the stale rank-0 output declaration."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array((rng.standard_normal((16, 32)) * 0.3).astype(np.float32), "W1")
    w2 = numpy_helper.from_array((rng.standard_normal((32, 8)) * 0.3).astype(np.float32), "W2")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W1"], ["hidden"], name="fc1"),
         helper.make_node("Relu", ["hidden"], ["activated"], name="act"),
         helper.make_node("MatMul", ["activated", "W2"], ["Y"], name="fc2")],
        "mlp",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [])],  # declared rank 0: stale
        [w1, w2])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def main(folder: Path) -> int:
    model = export_with_torch(folder / "mlp.onnx")
    print(f"model: {'torch.onnx.export' if model is not None else 'onnx.helper (no torch exporter here)'}")
    if model is None:
        model = build_weakly_typed()

    report = onnx_lint.check(model)
    for d in report.diagnostics:
        print(f"  found {d.code} {d.severity.value}: {d.message}")
    count = len(report.diagnostics)
    print(f"check: {'ok' if report.ok else 'problems remain'} ({count} finding{'' if count == 1 else 's'})")

    fixed = onnx_lint.fix(model)  # a new ModelProto; `model` itself is not changed
    for d in fixed.diagnostics:
        print(f"  {'fixed' if d.fix_applied else 'still'} {d.code}: {d.fix.title if d.fix else d.message}")
    print(f"fix: modified={fixed.modified}; output Y is now "
          f"{[dim.dim_param or dim.dim_value for dim in fixed.model.graph.output[0].type.tensor_type.shape.dim]}")

    rng = np.random.default_rng(1)
    samples = [{"X": rng.standard_normal((1, 16)).astype(np.float32)} for _ in range(16)]
    output = folder / "mlp.int8-fp16.onnx"
    quantized = onnx_lint.quantize(fixed.model, output, calibration_data=samples)
    print(f"quantize: wrote {output.name}: {quantized.nodes}")
    for agreement in quantized.outputs:
        print(f"  output {agreement.name}: cosine similarity {agreement.cosine:.6f}, "
              f"relative error {agreement.relative_error:.4f} against FP32")
    return 0 if quantized.written else 1


if __name__ == "__main__":
    if len(sys.argv) > 1:
        target = Path(sys.argv[1])
        target.mkdir(parents=True, exist_ok=True)
        raise SystemExit(main(target))
    with tempfile.TemporaryDirectory() as tmp:
        raise SystemExit(main(Path(tmp)))
