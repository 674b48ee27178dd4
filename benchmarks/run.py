"""Benchmark onnx-lint against the bare ONNX operations it builds on, in one run on one machine.

    python benchmarks/run.py [--repeat 3] [--smoke] [--markdown benchmarks/RESULTS.md] [--torch-python PY]

Every measurement is a whole process (start-up included), repeated, the two commands
of a pair back to back. The seconds shown are each command's median; a ratio is the median
of the pairs' ratios (``Pair.ratio``: noise here comes in spells that slow both runs of a
pair), and the targets table shows the ratio of the medians beside it. The baseline is
``benchmarks/baseline.py``: ``onnx.load(load_external_data=False)`` plus
``onnx.shape_inference.infer_shapes(data_prop=True)``. Peak memory is the
child's maximum resident set size. Both weight layouts are covered: embedded
(the MLP and transformer chains) and external (a chain whose per-layer weights,
half its node count in tensors, live in one ``.data`` file, as large exports
store them); a resnet18-sized CNN is linted as a dynamo export annotates it and
shown with ``--diff`` with one stale output. The last table checks the targets.

Each model is measured twice: on the machine as it is, and with one other CPU-bound process (a busy
loop pinned to the last core, started by the benchmark) running, as on a CI runner running two jobs
or a laptop with an editor and a browser busy. The CPU column is user + sys time of the whole
process tree (onnx-lint's forked children included), from the quiet run.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import onnx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import models  # noqa: E402

# CPU time is user + sys of the measured process and every descendant it waited for (onnx-lint reaps its
# forked children before it exits, so their time is in the total).
_MEASURE = r"""
import resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
elapsed = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(elapsed, usage.ru_maxrss, code, usage.ru_utime + usage.ru_stime)
"""
LINT = [sys.executable, "-m", "onnx_lint", "check", "--no-cache", "--jobs", "1", "-q"]
BASE = [sys.executable, str(HERE / "baseline.py")]


@dataclass
class Sample:
    seconds: float
    peak_mb: float
    code: int
    cpu: float = 0.0  # user + sys seconds, children included


# Children run this checkout's onnx_lint, whatever is installed.
_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def measure(command: list[str], prepare=None) -> Sample:
    if prepare:
        prepare()
    out = subprocess.run([sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, check=True,
                         env=_ENV)
    seconds, peak_kb, code, cpu = out.stdout.split()
    return Sample(float(seconds), int(peak_kb) / 1024, int(code), float(cpu))


@dataclass
class Pair:
    """The runs of two commands measured alternately: ``a`` and ``b`` are each one's medians, the runs kept."""

    runs_a: list[Sample]
    runs_b: list[Sample]

    @property
    def a(self) -> Sample:
        return median_sample(self.runs_a)

    @property
    def b(self) -> Sample:
        return median_sample(self.runs_b)

    def ratio(self, field: str = "seconds") -> float:
        """The median of b / a over the pairs, each pair measured back to back.

        Machine noise here comes in spells of seconds to minutes (the same command's CPU time went
        1.87-2.60 s minutes apart): a spell slows both runs of a pair, and their ratio keeps. Medians
        of each side taken apart can pair one side's slow spell with the other's quiet one.
        """
        return median_ratio(self.runs_a, self.runs_b, field)

    def ratio_of_medians(self, field: str = "seconds") -> float:
        """The ratio of the two sides' medians, the statistic earlier rounds reported (shown beside)."""
        return getattr(self.b, field) / getattr(self.a, field)


def paired(a: list[str], b: list[str], repeat: int) -> tuple[Sample, Sample]:
    """Alternate a and b so that machine noise hits both; medians of each."""
    pair = paired_runs(a, b, repeat)
    return pair.a, pair.b


def paired_runs(a: list[str], b: list[str], repeat: int, prepare=None) -> Pair:
    """Alternate a and b so that machine noise hits both; every run kept, for ratios pair by pair.
    ``prepare`` runs before each pair (a scratch copy for a command that writes)."""
    runs_a, runs_b = [], []
    for _ in range(repeat):
        runs_a.append(measure(a, prepare))
        runs_b.append(measure(b))
    return Pair(runs_a, runs_b)


def median_ratio(runs_a: Sequence[object], runs_b: Sequence[object], field: str = "seconds") -> float:
    """The median over the pairs of b's ``field`` / a's (any run records with that field: families.py's too)."""
    return statistics.median(getattr(b, field) / getattr(a, field) for a, b in zip(runs_a, runs_b))


def median_sample(runs: list[Sample]) -> Sample:
    """Each field's median over the runs (the exit code of the first)."""
    return Sample(statistics.median(r.seconds for r in runs), statistics.median(r.peak_mb for r in runs),
                  runs[0].code, statistics.median(r.cpu for r in runs))


class BusyCore:
    """One other CPU-bound process, pinned to the last core, for the length of a ``with`` block.

    It stands for what shares a user's machine (a CI runner's second job, an editor and a browser):
    the measured processes are not pinned, so they get what the scheduler leaves them, as users do.
    """

    _LOOP = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True:\n    pass\n"

    def __enter__(self) -> BusyCore:
        core = max(os.sched_getaffinity(0))
        self._process = subprocess.Popen([sys.executable, "-c", self._LOOP, str(core)])
        time.sleep(0.2)  # running before the first measurement
        return self

    def __exit__(self, *_: object) -> None:
        self._process.kill()
        self._process.wait()


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
    chains = folder / "chains"
    chains.mkdir()
    for size in (1_000, 2_000) if smoke else (1_000, 100_000):
        found[f"external-chain-{size}"] = chain = models.external_chain(chains, size)
        found[f"external-chain-{size}-weak"] = weak = chain.with_name(f"{chain.stem}_weak.onnx")
        onnx.save(models.weakly_typed(onnx.load(chain, load_external_data=False)), weak)  # same .data file
    resnet = models.resnet18()
    onnx.save(models.dynamo_style(resnet), dynamo := folder / "resnet18_dynamo_style.onnx")
    found["resnet18-dynamo-style"] = dynamo
    onnx.save(models.stale_output(resnet), stale := folder / "resnet18_stale_output.onnx")
    found["resnet18-stale-output"] = stale
    onnx.save(models.conv_net(), conv := folder / "conv_symbolic_hw.onnx")
    found["conv-symbolic-hw"] = conv
    onnx.save(models.symbolic_fallback(400 if not smoke else 40), sym := folder / "symbolic_fallback.onnx")
    found["symbolic-fallback"] = sym
    ext = folder / "external"
    ext.mkdir()
    found["external-1gb"] = models.external_weights(ext, 0.01 if smoke else 1.0)
    found["small-initializers-" + str(small_size := 2_000 if smoke else 100_000)] = sic = folder / "small_inits.onnx"
    onnx.save(models.small_initializer_chain(small_size), sic)
    found[f"small-initializers-{small_size}-weak"] = sic_weak = folder / "small_inits_weak.onnx"
    onnx.save(models.weakly_typed(onnx.load(sic), stale_value_info=200), sic_weak)
    llm = folder / "llm"
    llm.mkdir()
    layers = 2 if smoke else 32
    found["llm-7b-shaped"] = models.llm_decoder(llm, layers=layers)
    stale = models.stale_output(onnx.load(found["llm-7b-shaped"], load_external_data=False))
    found["llm-7b-shaped-weak"] = llm / "llm_decoder_weak.onnx"  # the same sparse .data file
    found["llm-7b-shaped-weak"].write_bytes(stale.SerializeToString())
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
    parser.add_argument("--only", nargs="+", metavar="SUBSTR",
                        help="measure only the main table's models whose key contains one of these (no targets)")
    parser.add_argument("--torch-python", help="an interpreter with torch installed: adds the dynamo-style "
                        "model and the symbolic engine's import time as PyTorch users see them")
    args = parser.parse_args(argv)
    repeat = 1 if args.smoke else args.repeat
    started = time.perf_counter()
    # An installed onnx-lint runs from bytecode pip compiled at install time; a checkout run with
    # PYTHONDONTWRITEBYTECODE would compile every module in every measured process instead.
    compileall.compile_dir(str(ROOT / "onnx_lint"), quiet=1)
    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="onnx-lint-bench-"))
    try:
        paths = build(work, args.smoke)
        if args.only:
            picked = {k: v for k, v in paths.items() if k != "many" and any(o in k for o in args.only)}
            lines = run_table(picked, repeat).lines
        else:
            lines = run_all(paths, work, repeat, args.smoke, args.torch_python)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    text = "\n".join(lines) + (f"\n\nTotal benchmark time: {time.perf_counter() - started:.0f} s on "
                               f"{os.cpu_count()} cores; load average (1/5/15 min) "
                               f"{'/'.join(f'{x:.2f}' for x in load_before)} at the start, "
                               f"{'/'.join(f'{x:.2f}' for x in load_after)} at the end.\n")
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 0


# Targets: `check` on every model of 10k nodes and more, every layout, on a quiet machine and beside one busy
# core; CPU time on every model; `--fix` on the weakly-typed twins; the LLM-shaped model in time and peak
# memory; no rule above a share of a 100k-node run; `--diff` on the resnet18-sized model against its `check`.
CHECK_TARGET = 1.2
BUSY_TARGET = 1.35
CPU_TARGET = 1.5
FIX_TARGET = 2.0
LLM_TARGET = 1.1
LLM_MEMORY_TARGET = 1.2
RULE_SHARE_TARGET = 0.05
DIFF_TARGET = 1.5
DIFF_BYTES_TARGET = 100_000
_LARGE = 10_000


def _is_weak(key: str) -> bool:
    return key.endswith("-weak") or key == "symbolic-fallback"


def run_all(paths: dict[str, Path], work: Path, repeat: int, smoke: bool, torch_python: str | None = None
            ) -> list[str]:
    table = run_table({k: v for k, v in paths.items() if k != "many"}, repeat)
    lines, ratios, sizes, memory, scaling = table.lines, table.ratios, table.sizes, table.memory, table.scaling
    lines += ["", "| family | nodes | baseline (s) | `check` (s) | `check` µs per node |",
              "| --- | ---: | ---: | ---: | ---: |"]
    for family, rows in scaling.items():
        for nodes, base_s, check_s in rows:
            lines.append(f"| {family} | {nodes} | {base_s:.2f} | {check_s:.2f} | {1e6 * check_s / nodes:.0f} |")
    diff_ratio, diff_bytes = _diff_table(paths["resnet18-stale-output"], repeat, lines)
    if torch_python:
        _torch_table(torch_python, paths["resnet18-dynamo-style"], repeat, lines)
    _many_table(paths["many"], repeat, lines)
    largest = [k for k in paths if k != "many" and not _is_weak(k) and sizes[k] == max(sizes.values())]
    rule_share = _timings_table([paths[k] for k in largest], lines)
    if not smoke:
        _targets(lines, ratios, table.of_medians, diff_ratio, diff_bytes, sizes, memory, rule_share)
    return lines


@dataclass
class MainTable:
    """The main table's rows and the figures the targets read: ratios by kind ("check", "busy", "cpu", "fix")."""

    lines: list[str]
    ratios: dict[str, dict[str, float]]  # the median of the pairs' ratios (``Pair.ratio``)
    of_medians: dict[str, dict[str, float]]  # the same figures as ratios of medians, shown beside
    sizes: dict[str, int]
    memory: dict[str, float]
    scaling: dict[str, list[tuple[int, float, float]]]


def run_table(paths: dict[str, Path], repeat: int) -> MainTable:
    """Each model quiet and beside a busy core, its CPU time, and (weak twins) ``--fix``."""
    lines = ["| model | nodes | baseline (s) | `check` (s) | ratio | busy core: baseline (s) | busy core: `check` (s) "
             "| ratio | CPU s baseline / `check` | CPU ratio | `check --fix` (s) | ratio | peak MB baseline / check |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    scaling: dict[str, list[tuple[int, float, float]]] = {}
    ratios: dict[str, dict[str, float]] = {"check": {}, "busy": {}, "cpu": {}, "fix": {}}
    of_medians: dict[str, dict[str, float]] = {kind: {} for kind in ratios}
    sizes: dict[str, int] = {}
    memory: dict[str, float] = {}
    for key, path in paths.items():
        nodes = sizes[key] = len(onnx.load(path, load_external_data=False).graph.node)
        quiet = paired_runs(BASE + [str(path)], LINT + [str(path)], repeat)
        with BusyCore():
            busy = paired_runs(BASE + [str(path)], LINT + [str(path)], repeat)
        base, check, busy_base, busy_check = quiet.a, quiet.b, busy.a, busy.b
        ratios["check"][key], ratios["busy"][key], ratios["cpu"][key] = quiet.ratio(), busy.ratio(), quiet.ratio("cpu")
        of_medians["check"][key], of_medians["busy"][key] = quiet.ratio_of_medians(), busy.ratio_of_medians()
        of_medians["cpu"][key] = quiet.ratio_of_medians("cpu")
        memory[key] = check.peak_mb / base.peak_mb
        fix_text, fix_ratio = "—", "—"
        if _is_weak(key):
            scratch = path.parent / ".bench-scratch.onnx"  # beside the model: its external data resolves
            fix_cmd = [sys.executable, "-m", "onnx_lint", "check", "--fix", "--no-cache", "--jobs", "1", "-q",
                       "--no-runtime-check", str(scratch)]
            fixed = paired_runs(BASE + [str(path)], fix_cmd, repeat,
                                prepare=lambda p=path, s=scratch: shutil.copy(p, s))
            scratch.unlink(missing_ok=True)
            fix = fixed.b
            ratios["fix"][key], of_medians["fix"][key] = fixed.ratio(), fixed.ratio_of_medians()
            fix_text, fix_ratio = f"{fix.seconds:.2f}", f"{ratios['fix'][key]:.2f}x"
        lines.append(f"| {key} | {nodes} | {base.seconds:.2f} | {check.seconds:.2f} | {ratios['check'][key]:.2f}x | "
                     f"{busy_base.seconds:.2f} | {busy_check.seconds:.2f} | {ratios['busy'][key]:.2f}x | "
                     f"{base.cpu:.2f} / {check.cpu:.2f} | {ratios['cpu'][key]:.2f}x | {fix_text} | {fix_ratio} | "
                     f"{base.peak_mb:.0f} / {check.peak_mb:.0f} ({check.peak_mb / base.peak_mb:.2f}x) |")
        print(lines[-1], flush=True)
        family = key.split("-")[0]
        if family in ("mlp", "transformer") and not key.endswith("-weak"):
            scaling.setdefault(family, []).append((nodes, base.seconds, check.seconds))
    return MainTable(lines, ratios, of_medians, sizes, memory, scaling)


def _timings_table(paths: list[Path], lines: list[str]) -> tuple[str, float]:
    """`check --timings` on the largest healthy models: where the time goes, and the costliest rule's share."""
    worst = ("", 0.0)
    breakdowns = []
    for path in paths:
        done = subprocess.run([*LINT[:-1], "--timings-format", "json", str(path)], capture_output=True, text=True,
                              env=_ENV, check=False)
        report = json.loads(done.stderr.strip().splitlines()[-1])
        steps = report["total"]
        whole = sum(steps.values())
        breakdowns.append((path, whole, steps))
        for name, seconds in steps.items():
            if name.startswith("rule ") and seconds / whole > worst[1]:
                worst = (f"{name} on {path.stem}", seconds / whole)
    path, whole, steps = max(breakdowns, key=lambda b: b[1])
    lines += ["", f"`check --timings` on the slowest of the largest models ({path.stem}, {whole:.2f} s in all; "
              "the five costliest steps):", "", "| step | seconds | share |", "| --- | ---: | ---: |"]
    for name, seconds in sorted(steps.items(), key=lambda kv: -kv[1])[:5]:
        lines.append(f"| {name} | {seconds:.3f} | {100 * seconds / whole:.1f}% |")
    return worst


def _diff_table(path: Path, repeat: int, lines: list[str]) -> tuple[float, int]:
    """`--diff` against `check` on the same model, and how much it prints."""
    diff_cmd = [*LINT[:-1], "--diff", str(path)]
    diff, check = paired(diff_cmd, LINT + [str(path)], repeat)
    printed = len(subprocess.run(diff_cmd, capture_output=True, env=_ENV, check=False).stdout)
    ratio = diff.seconds / check.seconds
    lines += ["", "| `--diff` | `check` (s) | `--diff` (s) | ratio | printed | peak MB check / diff |",
              "| --- | ---: | ---: | ---: | ---: | ---: |",
              f"| {path.stem} | {check.seconds:.2f} | {diff.seconds:.2f} | {ratio:.2f}x | {printed:,} bytes | "
              f"{check.peak_mb:.0f} / {diff.peak_mb:.0f} |"]
    return ratio, printed


_IMPORT = r"""
import sys, time
import onnx
start = time.perf_counter()
if sys.argv[1] == "package":
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
else:
    from onnx_lint.engines.ort_symbolic_loader import symbolic_shape_infer
    symbolic_shape_infer()
print(time.perf_counter() - start, "torch" in sys.modules)
"""


def _torch_table(torch_python: str, dynamo: Path, repeat: int, lines: list[str]) -> None:
    """The dynamo-style model and the symbolic engine's import with and without torch installed."""
    lines += ["", "| interpreter | symbolic engine import: `onnxruntime.tools` (s) | onnx-lint's loader (s) | "
              "torch imported by the loader | `check` dynamo-style resnet18 (s) | baseline (s) |",
              "| --- | ---: | ---: | --- | ---: | ---: |"]
    for label, python in (("without torch", sys.executable), ("with torch", torch_python)):
        times: dict[str, list[float]] = {"package": [], "loader": []}
        torch_seen = False
        for _ in range(repeat):
            for how in times:
                out = subprocess.run([python, "-c", _IMPORT, how], capture_output=True, text=True, env=_ENV,
                                     check=True).stdout.split()
                times[how].append(float(out[0]))
                torch_seen |= how == "loader" and out[1] == "True"
        lint = [python, *LINT[1:], str(dynamo)]
        base = [python, *BASE[1:], str(dynamo)]
        check, baseline = paired(lint, base, repeat)
        lines.append(f"| {label} | {statistics.median(times['package']):.2f} | "
                     f"{statistics.median(times['loader']):.2f} | {'yes' if torch_seen else 'no'} | "
                     f"{check.seconds:.2f} | {baseline.seconds:.2f} |")


def _many_table(many: Path, repeat: int, lines: list[str]) -> None:
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


def _targets(lines: list[str], ratios: dict[str, dict[str, float]], of_medians: dict[str, dict[str, float]],
             diff_ratio: float, diff_bytes: int, sizes: dict[str, int], memory: dict[str, float],
             rule_share: tuple[str, float]) -> None:
    large = [k for k in ratios["check"] if sizes[k] >= _LARGE]

    def worst(kind: str, keys: list[str]) -> tuple[str, float, str]:
        """The model with the largest ratio, that ratio, and the largest ratio of medians (``Pair``) beside it."""
        key = max(keys, key=lambda k: ratios[kind][k])
        other = max(keys, key=lambda k: of_medians[kind][k])
        return key, ratios[kind][key], f"{of_medians[kind][other]:.2f}x ({other})"

    quiet, busy = worst("check", large), worst("busy", large)
    cpu = worst("cpu", list(ratios["cpu"]))
    cpu_large = worst("cpu", large)
    fix = worst("fix", [k for k in large if k in ratios["fix"]])
    llm = "llm-7b-shaped"
    single = f"{of_medians['check'][llm]:.2f}x"
    rows = [(f"`check` on every model of 10k+ nodes, healthy and weakly typed, embedded and external weights "
             f"(worst: {quiet[0]})", f"<= {CHECK_TARGET}x", quiet[1], quiet[2], CHECK_TARGET),
            (f"the same with one other CPU-bound process running (worst: {busy[0]})", f"<= {BUSY_TARGET}x",
             busy[1], busy[2], BUSY_TARGET),
            (f"CPU time (user + sys, children included) on every model of 10k+ nodes (worst: {cpu_large[0]})",
             f"<= {CPU_TARGET}x", cpu_large[1], cpu_large[2], CPU_TARGET),
            (f"CPU time on every model (worst: {cpu[0]})", f"<= {CPU_TARGET}x", cpu[1], cpu[2], CPU_TARGET),
            (f"`check --fix` on the weakly-typed 10k+-node models (worst: {fix[0]})", f"<= {FIX_TARGET}x",
             fix[1], fix[2], FIX_TARGET),
            ("healthy `check` on the 7B-LLM-shaped decoder (13 GB sparse external data)", f"<= {LLM_TARGET}x",
             ratios["check"][llm], single, LLM_TARGET),
            ("peak memory of that `check` against the baseline's", f"<= {LLM_MEMORY_TARGET}x", memory[llm], "—",
             LLM_MEMORY_TARGET),
            ("`--diff` on resnet18-sized, against its `check`", f"<= {DIFF_TARGET}x", diff_ratio, "—", DIFF_TARGET)]
    lines += ["", "| target | goal | this run (median of the pairs' ratios) | met | ratio of medians (worst) |",
              "| --- | --- | ---: | --- | --- |"]
    lines += [f"| {what} | {goal} | {got:.2f}x | {'yes' if got <= limit else '**no**'} | {beside} |"
              for what, goal, got, beside, limit in rows]
    lines.append(f"| costliest rule's share of a largest-model run ({rule_share[0]}) | <= {RULE_SHARE_TARGET:.0%} | "
                 f"{rule_share[1]:.1%} | {'yes' if rule_share[1] <= RULE_SHARE_TARGET else '**no**'} | — |")
    lines.append(f"| `--diff` output on resnet18-sized | < {DIFF_BYTES_TARGET // 1000} KB | {diff_bytes / 1000:.1f} KB "
                 f"| {'yes' if diff_bytes < DIFF_BYTES_TARGET else '**no**'} | — |")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
