"""Make the small torch.onnx exports in this folder (run with a Python that has torch).

    /work/venvs/torch/bin/python tests/exports/make_exports.py

The tests only read the committed .onnx files; they never need torch. Each model is what a
user gets from ``torch.onnx.export`` with ``dynamic_axes`` that reuse an input's dim name on
an output whose size differs (the TorchScript exporter writes the lie as given), plus healthy
twins and ``dynamo=True`` exports of the same modules.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent


class ConcatSeq(nn.Module):
    """[batch, seq, 8] -> [batch, 2*seq, 8]: concatenation along the sequence."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.proj(x)
        return torch.cat([y, y], dim=1)


class Upsample(nn.Module):
    """[batch, 4, h, w] -> [batch, 4, 2*h, 2*w]: a 2x upsample."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.interpolate(self.conv(x), scale_factor=2.0, mode="nearest")


class ShortenSeq(nn.Module):
    """[batch, seq, 8] -> [batch, seq - 1, 8]: a slice that drops the last step."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, 1:, :] * 2.0


class Classifier(nn.Module):
    """[batch, 16] -> [batch, 10]: the batch passes through (a correct `batch`)."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def export_ts(module: nn.Module, example: torch.Tensor, name: str, in_axes: dict, out_axes: dict) -> None:
    torch.onnx.export(module.eval(), (example,), HERE / name, dynamo=False, opset_version=17,
                      input_names=["x"], output_names=["y"], dynamic_axes={"x": in_axes, "y": out_axes})


def export_dynamo(module: nn.Module, example: torch.Tensor, name: str, dims: dict) -> None:
    shapes = {"x": {axis: torch.export.Dim(dim, min=2, max=512) for axis, dim in dims.items()}}
    program = torch.onnx.export(module.eval(), (example,), dynamo=True, input_names=["x"], output_names=["y"],
                                dynamic_shapes=shapes)
    program.save(str(HERE / name))


def main() -> None:
    torch.manual_seed(0)
    seq = torch.randn(2, 5, 8)
    image = torch.randn(2, 4, 6, 6)
    # The lies: an output reuses an input's dim name for a size the graph changes.
    export_ts(ConcatSeq(), seq, "ts_concat_seq_lie.onnx", {0: "batch", 1: "seq"}, {0: "batch", 1: "seq"})
    export_ts(Upsample(), image, "ts_upsample_hw_lie.onnx", {0: "batch", 2: "h", 3: "w"}, {0: "batch", 2: "h", 3: "w"})
    export_ts(ShortenSeq(), seq, "ts_shorten_seq_lie.onnx", {0: "batch", 1: "seq"}, {0: "batch", 1: "seq"})
    # Healthy twins: a correct seq and batch, a renamed output dim, a slice shortening seq by one.
    export_ts(Classifier(), torch.randn(2, 16), "ts_classifier_batch.onnx", {0: "batch"}, {0: "batch"})
    export_ts(ShortenSeq(), seq, "ts_shorten_seq_renamed.onnx", {0: "batch", 1: "seq"}, {0: "batch", 1: "seq_out"})
    export_ts(ConcatSeq(), seq, "ts_concat_seq_renamed.onnx", {0: "batch", 1: "seq"}, {0: "batch", 1: "seq2"})
    # dynamo=True writes the derived expressions itself.
    export_dynamo(ConcatSeq(), seq, "dynamo_concat_seq.onnx", {0: "batch", 1: "seq"})
    export_dynamo(Upsample(), image, "dynamo_upsample_hw.onnx", {0: "batch", 2: "h", 3: "w"})


if __name__ == "__main__":
    main()
