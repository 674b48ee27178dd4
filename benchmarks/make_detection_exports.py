"""Export torchvision's detection and segmentation family with random weights (run with a torch Python).

    /work/venv-torch/bin/python benchmarks/make_detection_exports.py [--out DIR] [--only NAME ...] [--dynamo]

Every model is built with ``weights=None, weights_backbone=None`` and exported with dynamic image
height and width (opset 17). The files are generated on demand into a cache folder
(``benchmarks/.cache/detection`` by default, git-ignored) and reused when present; they are never
committed. Each export runs in its own process so that one exporter crash does not lose the others.
Prints one JSON line per model: name, exporter, path or error, seconds.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache" / "detection"
FAMILY = {
    "fasterrcnn_mobilenet_v3_large_320_fpn": ("detection", 320),
    "fasterrcnn_resnet50_fpn": ("detection", 320),
    "maskrcnn_resnet50_fpn": ("detection", 320),
    "keypointrcnn_resnet50_fpn": ("detection", 320),
    "retinanet_resnet50_fpn": ("detection", 320),
    "ssdlite320_mobilenet_v3_large": ("detection", 320),
    "deeplabv3_mobilenet_v3_large": ("segmentation", 256),
}


def export_one(name: str, dynamo: bool, path: Path) -> None:
    """Build one model with random weights and export it (runs in a child process)."""
    import torch
    import torchvision

    torch.manual_seed(0)
    kind, size = FAMILY[name]
    module = torchvision.models.detection if kind == "detection" else torchvision.models.segmentation
    model = getattr(module, name)(weights=None, weights_backbone=None).eval()
    if kind == "detection":
        args: tuple = ([torch.rand(3, size, size)],)
        inputs, outputs = ["image"], None
        dynamic = {"image": {1: "height", 2: "width"}}
    else:
        args = (torch.rand(1, 3, size, size),)
        inputs, outputs = ["image"], None
        dynamic = {"image": {2: "height", 3: "width"}}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".partial.onnx")
    if dynamo:
        shapes = {"images" if kind == "detection" else "x": None}
        del shapes
        torch.onnx.export(model, args, str(tmp), input_names=inputs, opset_version=17, dynamo=True,
                          dynamic_shapes=None if kind == "detection" else
                          ({2: torch.export.Dim("height", min=64, max=1024),
                            3: torch.export.Dim("width", min=64, max=1024)},),
                          external_data=False)
    else:
        torch.onnx.export(model, args, str(tmp), input_names=inputs, output_names=outputs,
                          dynamic_axes=dynamic, opset_version=17, dynamo=False)
    tmp.replace(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=CACHE)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--dynamo", action="store_true", help="also try the dynamo exporter")
    parser.add_argument("--child", nargs=3, metavar=("NAME", "EXPORTER", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args()
    if args.child:
        export_one(args.child[0], args.child[1] == "dynamo", Path(args.child[2]))
        return
    exporters = ["torchscript", "dynamo"] if args.dynamo else ["torchscript"]
    for name in args.only or list(FAMILY):
        for exporter in exporters:
            path = args.out / f"{name}.{exporter}.onnx"
            start = time.perf_counter()
            record: dict = {"name": name, "exporter": exporter, "path": str(path)}
            if not path.exists():
                try:
                    done = subprocess.run([sys.executable, __file__, "--child", name, exporter, str(path)],
                                          capture_output=True, text=True, timeout=args.timeout)
                    if done.returncode != 0:
                        record["error"] = (done.stderr.strip().splitlines() or ["?"])[-1][:300]
                except subprocess.TimeoutExpired:
                    record["error"] = f"export exceeded {args.timeout:.0f} s"
            record["seconds"] = round(time.perf_counter() - start, 1)
            if "error" in record:
                record.pop("path")
            print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
