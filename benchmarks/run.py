"""Benchmark onnx-lint against the bare ONNX operations it builds on, in one run on one machine.

    python benchmarks/run.py [--repeat 3] [--smoke] [--markdown benchmarks/RESULTS.md]

Every measurement is a whole process (start-up included), repeated; medians and
ratios are computed pair by pair in the same run. The baseline is
``benchmarks/baseline.py``: ``onnx.load(load_external_data=False)`` plus
``onnx.shape_inference.infer_shapes(data_prop=True)``. Peak memory is the
child's maximum resident set size.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import onnx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import models  # noqa: E402

_MEASURE = r"""
import resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
elapsed = time.perf_counter() - start
print(elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)
"""
LINT = [sys.executable, "-m", "onnx_lint", "check", "--no-cache", "--jobs", "1", "-q"]
BASE = [sys.executable, str(HERE / "baseline.py")]


@dataclass
class Sample:
    seconds: float
    peak_mb: float
    code: int


def measure(command: list[str], prepare=None) -> Sample:
    if prepare:
        prepare()
    out = subprocess.run([sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, check=True)
    seconds, peak_kb, code = out.stdout.split()
    return Sample(float(seconds), int(peak_kb) / 1024, int(code))


def paired(a: list[str], b: list[str], repeat: int, prepare_a=None) -> tuple[Sample, Sample]:
    """Alternate a and b so that machine noise hits both; medians of each."""
    runs_a, runs_b = [], []
    for _ in range(repeat):
        runs_a.append(measure(a, prepare_a))
        runs_b.append(measure(b))
    pick = lambda runs: Sample(statistics.median(r.seconds for r in runs),  # noqa: E731
                               statistics.median(r.peak_mb for r in runs), runs[0].code)
    return pick(runs_a), pick(runs_b)


def build(folder: Path, smoke: bool) -> dict[str, Path]:
    sizes = (1_000, 2_000) if smoke else (1_000, 10_000, 100_000)
    found: dict[str, Path] = {}
    for size in sizes:
        for family, make in (("mlp", models.mlp_chain), ("transformer", models.transformer_blocks)):
            model = make(size)
            found[f"{family}-{size}"] = path = folder / f"{family}_{size}.onnx"
            onnx.save(model, path)
            found[f"{family}-{size}-weak"] = weak = folder / f"{family}_{size}_weak.onnx"
            onnx.save(models.weakly_typed(model), weak)
    onnx.save(models.conv_net(), conv := folder / "conv_symbolic_hw.onnx")
    found["conv-symbolic-hw"] = conv
    onnx.save(models.symbolic_fallback(400 if not smoke else 40), sym := folder / "symbolic_fallback.onnx")
    found["symbolic-fallback"] = sym
    ext = folder / "external"
    ext.mkdir()
    found["external-1gb"] = models.external_weights(ext, 0.01 if smoke else 1.0)
    many = folder / "many"
    many.mkdir()
    small = models.mlp_chain(40 if smoke else 800)
    weak = models.weakly_typed(small, stale_value_info=3)
    for i in range(60 if smoke else 500):
        onnx.save(weak if i % 5 == 0 else small, many / f"m{i:03d}.onnx")
    found["many"] = many
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat: keeps the code alive in CI")
    parser.add_argument("--markdown", help="write the tables to this Markdown file")
    args = parser.parse_args(argv)
    repeat = 1 if args.smoke else args.repeat
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="onnx-lint-bench-"))
    try:
        paths = build(work, args.smoke)
        lines = run_all(paths, work, repeat, args.smoke)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(lines) + f"\n\nTotal benchmark time: {time.perf_counter() - started:.0f} s.\n"
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 0


def run_all(paths: dict[str, Path], work: Path, repeat: int, smoke: bool) -> list[str]:
    lines = ["| model | nodes | baseline (s) | `check` (s) | ratio | `check --fix` (s) | ratio | "
             "peak MB baseline / check |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    scaling: dict[str, list[tuple[int, float, float]]] = {}
    for key, path in paths.items():
        if key == "many":
            continue
        nodes = len(onnx.load(path, load_external_data=False).graph.node)
        base, check = paired(BASE + [str(path)], LINT + [str(path)], repeat)
        fix_text, fix_ratio = "—", "—"
        if key.endswith("-weak") or key == "symbolic-fallback":
            scratch = work / "scratch.onnx"
            fix_cmd = [sys.executable, "-m", "onnx_lint", "check", "--fix", "--no-cache", "--jobs", "1", "-q",
                       "--no-runtime-check", str(scratch)]
            fix, base_again = paired(fix_cmd, BASE + [str(path)], repeat,
                                     prepare_a=lambda p=path: shutil.copy(p, scratch))
            fix_text, fix_ratio = f"{fix.seconds:.2f}", f"{fix.seconds / base_again.seconds:.2f}x"
        lines.append(f"| {key} | {nodes} | {base.seconds:.2f} | {check.seconds:.2f} | "
                     f"{check.seconds / base.seconds:.2f}x | {fix_text} | {fix_ratio} | "
                     f"{base.peak_mb:.0f} / {check.peak_mb:.0f} ({check.peak_mb / base.peak_mb:.2f}x) |")
        print(lines[-1], flush=True)
        family = key.split("-")[0]
        if family in ("mlp", "transformer") and not key.endswith("-weak"):
            scaling.setdefault(family, []).append((nodes, base.seconds, check.seconds))
    lines += ["", "| family | nodes | baseline (s) | `check` (s) | `check` µs per node |",
              "| --- | ---: | ---: | ---: | ---: |"]
    for family, rows in scaling.items():
        for nodes, base_s, check_s in rows:
            lines.append(f"| {family} | {nodes} | {base_s:.2f} | {check_s:.2f} | {1e6 * check_s / nodes:.0f} |")
    many = paths["many"]
    count = len(list(many.glob("*.onnx")))
    one, two = paired([*LINT[:-3], "--jobs", "1", "-q", str(many)], [*LINT[:-3], "--jobs", "2", "-q", str(many)],
                      repeat)
    cache_dir = Path.cwd() / ".onnx-lint-cache"  # no configuration file: the cache lives in the working folder
    cached_cmd = [sys.executable, "-m", "onnx_lint", "check", "--jobs", "1", "-q", str(many)]
    cold = [measure(cached_cmd, prepare=lambda: shutil.rmtree(cache_dir, ignore_errors=True)) for _ in range(repeat)]
    warm = [measure(cached_cmd) for _ in range(repeat)]
    cold_s = statistics.median(s.seconds for s in cold)
    warm_s = statistics.median(s.seconds for s in warm)
    lines += ["", "| many files | files | first (s) | second (s) | speed-up |", "| --- | ---: | ---: | ---: | ---: |",
              f"| `--jobs 1` vs `--jobs 2`, no cache | {count} | {one.seconds:.2f} | {two.seconds:.2f} | "
              f"{one.seconds / two.seconds:.2f}x |",
              f"| cold cache vs warm cache, `--jobs 1` | {count} | {cold_s:.2f} | {warm_s:.2f} | "
              f"{cold_s / warm_s:.1f}x |"]
    return lines


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
