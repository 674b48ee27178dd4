"""Make the exports whose output dims are set by the *value* of a graph input (run with a Python that has torch).

    /tmp/venv-exporters/bin/python tests/exports/make_value_input_exports.py

``torch.onnx.export`` (TorchScript exporter, no ``dynamic_axes``) writes each output's dims as traced:
- ``ts_topk_k_input.onnx``: ``torch.topk(x, k)`` with ``k`` a graph input; traced at k = 3, so the
  outputs are declared [2, 3]: true for k = 3, which is what the model's users feed it;
- ``ts_resize_sizes_input.onnx``: ``F.interpolate(x, size=...)`` with the size read from a graph input
  ``hw``; traced at (6, 10), the output is declared [1, 4, 6, 10].
The tests only read the committed .onnx files; they never need torch.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

HERE = Path(__file__).resolve().parent


class TopK(nn.Module):
    def forward(self, x: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.topk(x, k, dim=1)


class ResizeTo(nn.Module):
    def forward(self, x: torch.Tensor, hw: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, size=(hw[0], hw[1]), mode="nearest")


def main() -> None:
    torch.onnx.export(TopK(), (torch.randn(2, 10), torch.tensor(3)), HERE / "ts_topk_k_input.onnx",
                      input_names=["x", "k"], output_names=["values", "indices"], opset_version=17, dynamo=False)
    torch.onnx.export(ResizeTo(), (torch.randn(1, 4, 3, 5), torch.tensor([6, 10])),
                      HERE / "ts_resize_sizes_input.onnx", input_names=["x", "hw"], output_names=["y"],
                      opset_version=17, dynamo=False)


if __name__ == "__main__":
    main()
