"""Benchmark the torchvision detection family: check and --fix against the bare baseline, with ORT's word.

    python benchmarks/detection.py [--torch-python PY] [--repeat 3] [--only NAME ...]
        [--before ROOT --before-timeout 120] [--markdown FILE]

The models (random weights, dynamic image height and width, see ``make_detection_exports.py``) are
exported on demand with ``--torch-python`` into ``benchmarks/.cache/detection`` and reused. Each row
measures whole processes, paired and alternated with the baseline (``baseline.py``: ``onnx.load``
without weights + ``infer_shapes(data_prop=True)``): ``check`` and ``check --fix`` (on a fresh copy).
It lists the findings, the engines that were stopped at their budget (OL008), and whether ONNX
Runtime, run at two image sizes, confirms every output declaration of the fixed model (same rank,
same number wherever the declaration has one). ``--before ROOT`` also times another checkout's
``check`` (for example the commit before the budget), stopped after ``--before-timeout`` seconds.
The load average is printed beside the numbers: the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / ".cache" / "detection"
sys.path.insert(0, str(HERE))

from run import BASE, LINT, measure, median_sample  # noqa: E402

SIZES = ((320, 320), (384, 288))
_CONFIRM = r"""
import json, sys
import numpy as np
import onnx
import onnxruntime as ort
path, sizes = sys.argv[1], json.loads(sys.argv[2])
model = onnx.load(path, load_external_data=False)
declared = {}
for v in model.graph.output:
    dims = v.type.tensor_type.shape.dim
    declared[v.name] = [d.dim_value if d.HasField("dim_value") else None for d in dims]
options = ort.SessionOptions()
options.log_severity_level = 3
session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
feed = session.get_inputs()[0]
verdicts = []
for h, w in sizes:
    shape = [3, h, w] if len(feed.shape) == 3 else [1, 3, h, w]
    results = session.run(None, {feed.name: np.random.default_rng(0).random(shape, dtype=np.float32)})
    for out, value in zip(session.get_outputs(), results):
        want = declared[out.name]
        ok = len(want) == value.ndim and all(d is None or d == s for d, s in zip(want, value.shape))
        verdicts.append([out.name, [h, w], list(value.shape), want, ok])
print(json.dumps(verdicts))
"""


def _load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def _env(root: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}


def _findings(path: Path) -> tuple[list[dict], int]:
    done = subprocess.run([*LINT[:-1], "--output-format", "json", str(path)], capture_output=True, text=True,
                          env=_env(ROOT))
    return (json.loads(done.stdout) if done.stdout.strip() else []), done.returncode


def bench(path: Path, repeat: int, work: Path) -> dict:
    copy = work / path.name

    def fresh() -> None:
        shutil.copyfile(path, copy)

    base, check, fix = [], [], []
    for _ in range(repeat):
        base.append(measure([*BASE, str(path)]))
        check.append(measure([*LINT, str(path)]))
        fix.append(measure([*LINT, "--fix", str(copy)], fresh))
    b, c, f = median_sample(base), median_sample(check), median_sample(fix)
    findings, code = _findings(path)
    fresh()
    subprocess.run([*LINT, "--fix", str(copy)], capture_output=True, env=_env(ROOT))
    confirm = subprocess.run([sys.executable, "-c", _CONFIRM, str(copy), json.dumps(SIZES)], capture_output=True,
                             text=True)
    verdicts = json.loads(confirm.stdout) if confirm.returncode == 0 else []
    return {"base": b.seconds, "check": c.seconds, "fix": f.seconds, "peak_mb": c.peak_mb,
            "check_ratio": c.seconds / b.seconds, "fix_ratio": f.seconds / b.seconds, "exit": code,
            "findings": sorted({d["code"] for d in findings}),
            "gave_up": sorted({d["message"].split(" was stopped")[0] for d in findings if d["code"] == "OL008"}),
            "ort": (all(v[4] for v in verdicts) if verdicts else f"no run: {confirm.stderr.strip()[-200:]}"),
            "ort_detail": verdicts}


def before(path: Path, root: Path, timeout: float) -> str:
    start = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-m", "onnx_lint", "check", "--no-cache", "--jobs", "1", "-q", str(path)],
                       capture_output=True, env=_env(root), timeout=timeout, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return f"> {timeout:.0f} s (stopped)"
    return f"{time.perf_counter() - start:.1f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--torch-python", help="an interpreter with torch + torchvision, to export missing models")
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--before", type=Path, help="another onnx-lint checkout to time check with")
    parser.add_argument("--before-timeout", type=float, default=120.0)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--json", type=Path, help="write every row, ORT's verdicts included")
    args = parser.parse_args(argv)
    if args.torch_python:
        subprocess.run([args.torch_python, str(HERE / "make_detection_exports.py"), "--out", str(args.cache),
                        *(["--only", *args.only] if args.only else [])], check=False)
    models = sorted(p for p in args.cache.glob("*.onnx") if ".partial." not in p.name
                    and (not args.only or p.name.split(".")[0] in args.only))
    lines = [f"load average at start: {_load()} ({os.cpu_count()} cores)", "",
             "| model | nodes | bare (s) | check (s) | ratio | --fix (s) | ratio | peak MB | findings | engine gave up "
             "| ORT at 2 sizes |" + (" before: check |" if args.before else ""),
             "|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if args.before else "")]
    rows = {}
    with tempfile.TemporaryDirectory(prefix="onnx-lint-detection-") as tmp:
        for path in models:
            import onnx

            nodes = len(onnx.load(path, load_external_data=False).graph.node)
            row = bench(path, args.repeat, Path(tmp))
            rows[path.name] = row
            ort = "confirms" if row["ort"] is True else ("refutes" if row["ort"] is False else row["ort"])
            line = (f"| {path.name.removesuffix('.onnx')} | {nodes} | {row['base']:.2f} | {row['check']:.2f} | "
                    f"{row['check_ratio']:.2f}x | {row['fix']:.2f} | {row['fix_ratio']:.2f}x | {row['peak_mb']:.0f} | "
                    f"{', '.join(row['findings']) or 'none'} | {', '.join(row['gave_up']) or '-'} | {ort} |")
            if args.before:
                line += f" {before(path, args.before, args.before_timeout)} |"
            lines.append(line)
            print(line, flush=True)
    lines += ["", f"load average at end: {_load()}"]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
