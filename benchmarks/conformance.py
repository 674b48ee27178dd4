"""Benchmark `onnx-lint check` on a folder of ONNX's own operator conformance cases against the bare operations.

    python benchmarks/conformance.py [--repeat 3] [--markdown FILE]

The folder (~1,900 one-operator models, ``onnx.backend.test.case.node``) is generated from the installed
onnx into ``benchmarks/.cache/conformance`` on first use. The baseline is what a careful CI script
would do for each model, in one process: ``onnx.load`` + ``infer_shapes(data_prop=True)`` + an ONNX
Runtime session. ``check`` runs with ``--jobs`` at its default (one process per core) and no cache.
Both are whole processes, alternated, medians of ``--repeat`` runs; wall time and CPU time (user +
system, children included) are shown, and the load average, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / ".cache" / "conformance"
TARGET = 3.0  # the folder within 3x the bare operations

_BARE = r"""
import glob, sys
import onnx, onnx.shape_inference
import onnxruntime as ort
options = ort.SessionOptions()
options.log_severity_level = 4
for path in sorted(glob.glob(sys.argv[1] + "/*.onnx")):
    model = onnx.load(path, load_external_data=False)
    try:
        onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:
        pass
    try:
        ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    except Exception:
        pass
"""
_MEASURE = r"""
import resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
wall = time.perf_counter() - start
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, used.ru_utime + used.ru_stime, code)
"""
_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def generate(folder: Path) -> int:
    """Write the node cases of the installed onnx (once per onnx version); how many there are."""
    import onnx
    import onnx.backend.test.case.node as node_cases

    marker = folder / f".onnx-{onnx.__version__}"
    if marker.exists():
        return len(list(folder.glob("*.onnx")))
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.onnx"):
        old.unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    for case in cases:
        onnx.save(case.model, folder / f"{case.name}.onnx")
    marker.touch()
    return len(cases)


def measure(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, children included) of one whole process."""
    out = subprocess.run([sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, check=True,
                         env=_ENV)
    wall, cpu, _code = out.stdout.split()
    return float(wall), float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    count = generate(CACHE)
    lint = [sys.executable, "-m", "onnx_lint", "check", "--no-cache", "--exit-zero", "-q", str(CACHE)]
    bare = [sys.executable, "-c", _BARE, str(CACHE)]
    runs: dict[str, list[tuple[float, float]]] = {"bare": [], "check": []}
    for _ in range(args.repeat):
        runs["check"].append(measure(lint))
        runs["bare"].append(measure(bare))
    median = {name: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r))
              for name, r in runs.items()}
    (bare_wall, bare_cpu), (lint_wall, lint_cpu) = median["bare"], median["check"]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        f"ONNX conformance cases: {count} models; {os.cpu_count()} cores; load average {load}; "
        f"medians of {args.repeat}",
        "",
        "| | wall s | CPU s (user + sys) |",
        "|---|---:|---:|",
        f"| bare: load + infer_shapes + ORT session, per model | {bare_wall:.2f} | {bare_cpu:.2f} |",
        f"| onnx-lint check (default --jobs) | {lint_wall:.2f} | {lint_cpu:.2f} |",
        f"| ratio (target <= {TARGET:g}x wall) | {lint_wall / bare_wall:.2f}x | {lint_cpu / bare_cpu:.2f}x |",
    ]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")


if __name__ == "__main__":
    main()
