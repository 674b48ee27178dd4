"""Export the torch models the quantize benchmarks use (run with a Python that has torch + timm).

    /work/venvs/torch/bin/python benchmarks/make_torch_exports.py

timm's ``test_*`` architectures are small real networks (the layers, blocks and
exports of the full-size ones); weights are timm's random initialization with a
fixed seed, and BatchNorm statistics are warmed on random batches so that the
activations are not trivially normalized. The .onnx files are committed, so the
benchmarks never need torch.
"""

from __future__ import annotations

from pathlib import Path

import timm
import torch

OUT = Path(__file__).resolve().parent / "data"
MODELS = {"test_efficientnet": 160, "test_convnext": 160}


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for name, size in MODELS.items():
        torch.manual_seed(0)
        model = timm.create_model(name, pretrained=False)
        model.train()
        with torch.no_grad():
            for _ in range(8):  # BatchNorm running statistics from data, not the 0/1 defaults
                model(torch.randn(8, 3, size, size))
        model.eval()
        example = torch.randn(1, 3, size, size)
        torch.onnx.export(model, (example,), OUT / f"timm_{name}.onnx", input_names=["image"],
                          output_names=["logits"], dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                          opset_version=17, dynamo=False)
        print(OUT / f"timm_{name}.onnx")


if __name__ == "__main__":
    main()
