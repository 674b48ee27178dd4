"""The floor under `check`'s ratios: the work no check can skip, timed against the baseline and `check`.

    python benchmarks/required_work.py [--repeat 5] [--smoke] [--markdown FILE] [MODEL ...]

"Required" is what any check that keeps onnx-lint's guarantees runs on a model: onnx-lint's imports,
one parse of the file, ``onnx.checker`` (whose verdict OL102-OL104 report, so it is the checker's
own; run on the weight-free copy where weights are external, as `check` runs it) and ONNX's
inference of the stripped copy (the derived shapes every stale-annotation rule compares with).
Nothing else: no validation, no rule, no report. It runs two ways: with the inference in a forked
child beside the checker, as `check` runs a large model (what its quiet wall time rests on), and
all in one process, the inference after the checker. Each is a whole process, measured like
``run.py``'s (wall and user + sys time of the process tree, each pair back to back, ratios the median
of the pairs'). Without MODEL paths it generates the 100k-node benchmark models whose ratios are the
highest (``models.py``: the external-data chain and the small-initializer chain with their weakly
typed twins, and the transformer's twin).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import onnx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import models  # noqa: E402
import run  # noqa: E402

# The required work alone; argv: the model, then "fork" or "in-process".
_REQUIRED = r"""
import os, sys
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the command line sets it
import onnx, onnx.checker
import onnx_lint.cli, onnx_lint.commands.check, onnx_lint.fixes.fixer, onnx_lint.rules  # a check's imports
from onnx_lint.engines.checker import light_copy
from onnx_lint.engines.forked import ForkedCall
from onnx_lint.engines.onnx_inference import run_onnx_inference_serialized
from onnx_lint.engines.strip import strip_model
from onnx_lint.model.graphs import ROOT
from onnx_lint.model.load import read_unvalidated

def infer():
    strip_model(loaded.model, [ROOT])  # the child's own copy-on-write copy, as check's child strips it
    return run_onnx_inference_serialized(loaded.model.SerializeToString())

loaded = read_unvalidated(sys.argv[1])
child = ForkedCall.start(infer) if sys.argv[2] == "fork" else None
external = any(t.data_location == onnx.TensorProto.EXTERNAL for t in loaded.model.graph.initializer)
onnx.checker.check_model(light_copy(loaded, sort=False).SerializeToString() if external else loaded.data)
inferred = child.result()[1] if child is not None else infer()
onnx.ModelProto.FromString(inferred)
sys.stdout.flush()
os._exit(0)
"""


def build(folder: Path, nodes: int = 100_000) -> list[Path]:
    chains = folder / "chains"
    chains.mkdir()
    chain = models.external_chain(chains, nodes)
    chain_weak = chain.with_name(f"{chain.stem}_weak.onnx")
    onnx.save(models.weakly_typed(onnx.load(chain, load_external_data=False)), chain_weak)
    small = folder / "small_inits.onnx"
    onnx.save(models.small_initializer_chain(nodes), small)
    small_weak = folder / "small_inits_weak.onnx"
    onnx.save(models.weakly_typed(onnx.load(small)), small_weak)
    transformer_weak = folder / f"transformer_{nodes}_weak.onnx"
    onnx.save(models.weakly_typed(models.transformer_blocks(nodes)), transformer_weak)
    return [chain, chain_weak, small, small_weak, transformer_weak]


def measure_model(path: Path, repeat: int) -> dict[str, tuple[float, float, float, float]]:
    """Per command: median wall s, median CPU s, and the medians of the pairs' wall and CPU ratios."""
    commands = {
        "required, in one process": [sys.executable, "-c", _REQUIRED, str(path), "in-process"],
        "required, inference forked": [sys.executable, "-c", _REQUIRED, str(path), "fork"],
        "check": run.LINT + [str(path)],
    }
    base_runs: list[run.Sample] = []
    runs: dict[str, list[run.Sample]] = {name: [] for name in commands}
    for _ in range(repeat):  # each round: the baseline, then each command, back to back
        base_runs.append(run.measure(run.BASE + [str(path)]))
        for name, command in commands.items():
            runs[name].append(run.measure(command))
    base = run.median_sample(base_runs)
    found = {"baseline": (base.seconds, base.cpu, 1.0, 1.0)}
    for name, samples in runs.items():
        if any(s.code != 0 for s in samples) and name != "check":
            raise SystemExit(f"{name} failed on {path}")
        median = run.median_sample(samples)
        found[name] = (median.seconds, median.cpu, run.median_ratio(base_runs, samples),
                       run.median_ratio(base_runs, samples, "cpu"))
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="2k-node models, one repeat: keeps the code alive in CI")
    parser.add_argument("--markdown", help="write the table to this Markdown file")
    args = parser.parse_args(argv)
    repeat = 1 if args.smoke else args.repeat
    work = None
    if not args.models:
        work = Path(tempfile.mkdtemp(prefix="onnx-lint-required-"))
    try:
        paths = args.models or build(work, 2_000 if args.smoke else 100_000)  # type: ignore[arg-type]
        lines = ["| model | command | wall (s) | wall ratio | CPU (s) | CPU ratio |",
                 "| --- | --- | ---: | ---: | ---: | ---: |"]
        for path in paths:
            for name, (seconds, cpu, wall_ratio, cpu_ratio) in measure_model(path, repeat).items():
                lines.append(f"| {path.stem} | {name} | {seconds:.2f} | {wall_ratio:.2f}x | {cpu:.2f} | "
                             f"{cpu_ratio:.2f}x |")
                print(lines[-1], flush=True)
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    if args.markdown:
        Path(args.markdown).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
