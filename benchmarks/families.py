"""Benchmark check and check --fix on real exports of common model families and the tools users chain after them.

    python benchmarks/families.py --torch-python /work/venvs/torch/bin/python [--repeat 5] [--only SUBSTR ...]
        [--markdown FILE] [--json FILE] [--timings-top 3] [--timeout 300] [--smoke]

The base models (random weights, tiny configurations where the family is large, dynamic batch and
sequence or image size) are exported on demand by ``make_family_exports.py`` run with ``--torch-python``
into ``benchmarks/.cache/families`` (git-ignored) and reused: torchvision resnet18, timm
efficientnet_b0, transformers BERT and GPT-2, a Whisper encoder, each by the TorchScript and the dynamo
exporter. Each base is then passed through the ONNX Runtime tools users chain after an export, by this
interpreter (``--derive``, one child process each, cached beside the base): ``quantize_static`` (QDQ,
four random calibration inputs), ``quantize_dynamic``, the 4-bit ``MatMulNBitsQuantizer`` (block 32,
symmetric) and the transformer ``optimize_model``. A tool that refuses a model is a row with its error.

Every measurement is a whole process (start-up included): the baseline (``baseline.py``: ``onnx.load``
without weights + ``infer_shapes(data_prop=True)``), ``check`` and ``check --fix`` (on a fresh copy
beside the original, so that external data resolves), alternated in each repeat so that machine noise
hits all three; the seconds are medians, a ratio the median of the repeats' ratios. CPU is user+sys
of the measured process and its children. Targets: ``check`` <= 1.5x and ``--fix`` <= 2.5x the
baseline. A command that runs past ``--timeout`` is stopped and its row says so. ``--smoke`` needs
no torch: two tiny models (one built here with ``onnx.helper``, one committed timm export) through
the same code paths, one repeat, in a temporary folder.
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
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / ".cache" / "families"
sys.path.insert(0, str(HERE))

import make_family_exports as exports  # noqa: E402  (stdlib imports only at module level: no torch here)
from run import BASE, LINT, median_ratio  # noqa: E402

CHECK_TARGET = 1.5
FIX_TARGET = 2.5
VARIANTS = ("qdq", "qdynamic", "int4", "ortopt")
TOOLS = {"qdq": "quantize_static (QDQ)", "qdynamic": "quantize_dynamic", "int4": "MatMulNBitsQuantizer 4-bit",
         "ortopt": "optimize_model"}
DERIVE_TIMEOUT = 900.0

# run.py's measure() cannot stop a command that runs too long, so this snippet measures the same way (peak RSS and
# CPU = user + sys from RUSAGE_CHILDREN: the command and every descendant it waited for) and adds a timeout. The
# command runs in its own session so that a stopped check takes its own children (ONNX Runtime probes) with it.
# A timer thread stops it, not Popen.wait(timeout=...): that polls with sleeps of up to 50 ms, which rounded every
# time measured up to the next 50 ms step.
_MEASURE = r"""
import os, resource, signal, subprocess, sys, threading, time
timeout = float(sys.argv[1])
start = time.perf_counter()
child = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
late = []
def stop():
    late.append(1)
    os.killpg(child.pid, signal.SIGKILL)
timer = threading.Timer(timeout, stop)
timer.start()
code = child.wait()
elapsed = time.perf_counter() - start
timer.cancel()
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(elapsed, usage.ru_maxrss, code, usage.ru_utime + usage.ru_stime, len(late))
"""
_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


@dataclass
class Timed:
    """One whole-process run: wall seconds, peak RSS, exit code, CPU seconds, and whether it was stopped."""

    seconds: float
    peak_mb: float
    code: int
    cpu: float
    stopped: bool = False


def measure(command: list[str], timeout: float, prepare: Callable[[], None] | None = None) -> Timed:
    """Time one command in a fresh measuring process, so that RUSAGE_CHILDREN holds that command alone."""
    if prepare:
        prepare()
    out = subprocess.run([sys.executable, "-c", _MEASURE, str(timeout), *command], capture_output=True, text=True,
                         check=True, env=_ENV)
    seconds, peak_kb, code, cpu, late = out.stdout.split()
    return Timed(float(seconds), int(peak_kb) / 1024, int(code), float(cpu), late == "1")


def _median(runs: list[Timed]) -> Timed:
    return Timed(statistics.median(r.seconds for r in runs), statistics.median(r.peak_mb for r in runs),
                 runs[0].code, statistics.median(r.cpu for r in runs), any(r.stopped for r in runs))


# ---------------------------------------------------------------- derived variants (run in a child: --derive)


def _feeds(spec: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """Random inputs of the right dtypes and shapes: token ids below the vocabulary, masks of ones."""
    import numpy as np

    rng = np.random.default_rng(0)
    feeds = []
    for _ in range(count):
        feed = {}
        for name, entry in spec["inputs"].items():
            shape, dtype = entry["shape"], np.dtype(entry["dtype"])
            if "high" in entry:
                feed[name] = rng.integers(0, entry["high"], size=shape).astype(dtype)
            elif "fill" in entry:
                feed[name] = np.full(shape, entry["fill"], dtype=dtype)
            elif dtype.kind == "f":
                feed[name] = rng.standard_normal(shape).astype(dtype)
            else:
                feed[name] = np.zeros(shape, dtype=dtype)
        feeds.append(feed)
    return feeds


def spec_from_graph(path: Path) -> dict[str, Any]:
    """An input description for a model without an exporter's sidecar (the committed exports, smoke models)."""
    import onnx

    model = onnx.load(path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    inputs = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type).name
        inputs[value.name] = {"shape": [d.dim_value if d.HasField("dim_value") else 1 for d in tensor.shape.dim],
                              "dtype": dtype}
    return {"inputs": inputs, "config": {"kind": "other", "optimizer": "bert", "opt_level": 1, "num_heads": 0,
                                         "hidden_size": 0}}


def _spec(base: Path) -> dict[str, Any]:
    sidecar = base.with_suffix(".json")
    return json.loads(sidecar.read_text()) if sidecar.exists() else spec_from_graph(base)


class Skipped(Exception):
    """The tool has nothing to do on this model (said in the row, not an error)."""


def _constant_matmuls(path: Path) -> tuple[int, str]:
    """The MatMuls whose weight is an initializer (all that MatMulNBitsQuantizer takes), and why there are none."""
    import onnx

    model = onnx.load(path, load_external_data=False)
    constants = {t.name for t in model.graph.initializer}
    producers = {o: n.op_type for n in model.graph.node for o in n.output}
    matmuls = [n for n in model.graph.node if n.op_type == "MatMul" and len(n.input) > 1]
    found = sum(1 for n in matmuls if n.input[1] in constants)
    computed = sorted({producers.get(n.input[1], "a graph input") for n in matmuls if n.input[1] not in constants})
    gemms = sum(1 for n in model.graph.node if n.op_type == "Gemm")
    why = (f"no MatMul with a constant weight: {len(matmuls)} MatMuls, all reading computed weights "
           f"(from {', '.join(computed)})" if matmuls else "no MatMul at all")
    why += f"; {gemms} Gemm(s), which the quantizer does not take" if gemms else ""
    return found, why


def derive(variant: str, base: Path, out: Path) -> str:
    """Make one variant of ``base`` with this interpreter's ONNX Runtime; return a note for the table."""
    import onnx

    spec = _spec(base)
    config = spec["config"]
    if variant == "qdq":
        from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quant_pre_process, quantize_static

        class Reader(CalibrationDataReader):
            """Four random inputs: enough for ranges that make a realistic QDQ graph, not accurate ones."""

            def __init__(self) -> None:
                self.feeds = iter(_feeds(spec, 4))

            def get_next(self) -> dict[str, Any] | None:
                return next(self.feeds, None)

        try:
            quantize_static(str(base), str(out), Reader(), quant_format=QuantFormat.QDQ)
            return "4 random calibration inputs"
        except Exception as error:  # retried after ORT's pre-processing, the error kept in the note
            first = f"{type(error).__name__}: {error}".splitlines()[0][:200]
        staged = out.with_name(out.name + ".pre.onnx")
        try:
            quant_pre_process(str(base), str(staged))
            quantize_static(str(staged), str(out), Reader(), quant_format=QuantFormat.QDQ)
        finally:
            staged.unlink(missing_ok=True)
        return f"needed quant_pre_process (without it: {first})"
    if variant == "qdynamic":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        # ONNX Runtime's CPU ConvInteger takes uint8 weights only: QUInt8 for convolutional nets, QInt8 elsewhere.
        weight = QuantType.QUInt8 if config.get("kind") == "vision" else QuantType.QInt8
        quantize_dynamic(str(base), str(out), weight_type=weight)
        return f"weights {weight.name}"
    if variant == "int4":
        found, why = _constant_matmuls(base)
        if not found:
            raise Skipped(why)
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

        quantizer = MatMulNBitsQuantizer(onnx.load(base), block_size=32, is_symmetric=True)
        quantizer.process()
        quantizer.model.save_model_to_file(str(out), use_external_data_format=False)
        made = sum(1 for n in onnx.load(out, load_external_data=False).graph.node if n.op_type == "MatMulNBits")
        return f"{made} of {found} constant-weight MatMuls to MatMulNBits"
    if variant == "ortopt":
        from onnxruntime.transformers.optimizer import optimize_model

        optimized = optimize_model(str(base), model_type=config["optimizer"], num_heads=config["num_heads"],
                                   hidden_size=config["hidden_size"], opt_level=config.get("opt_level"))
        optimized.save_model_to_file(str(out), use_external_data_format=False)
        fused = {k: v for k, v in (optimized.get_fused_operator_statistics() or {}).items() if v}
        level = config.get("opt_level")
        return (f"model_type {config['optimizer']}" + (f", opt_level {level}" if level is not None else "")
                + (f"; fused {', '.join(f'{k} {v}' for k, v in sorted(fused.items()))}" if fused else "; no fusion"))
    raise ValueError(f"unknown variant {variant}")


def _derive_child(variant: str, base: Path, out: Path) -> int:
    """Run ``derive`` and leave ``out`` + ``out.json`` only when it succeeded (a partial file is never reused)."""
    staged = out.with_name(out.name.replace(".onnx", ".partial.onnx"))
    try:
        note = derive(variant, base, staged)
    except Skipped as skip:
        print(json.dumps({"skipped": str(skip)}))
        return 0
    except Exception as error:  # the tool's words and where it raised them (a bare IndexError says little)
        frame = traceback.extract_tb(error.__traceback__)[-1]
        where = f" (at {Path(frame.filename).parent.name}/{Path(frame.filename).name}:{frame.lineno} in {frame.name})"
        text = " ".join(f"{type(error).__name__}: {error}".split())[:400] + where
        print(json.dumps({"error": text}))
        return 0
    finally:
        for leftover in staged.parent.glob(staged.name + "*.data"):
            leftover.unlink()
    staged.replace(out)
    out.with_suffix(".json").write_text(json.dumps({"variant": variant, "base": base.name, "note": note}))
    print(json.dumps({"note": note}))
    return 0


@dataclass
class Model:
    """A row of the table: a file to measure, or a failure to report in its place."""

    name: str
    made_by: str
    path: Path | None = None
    note: str = ""
    error: str = ""
    result: dict[str, Any] = field(default_factory=dict)


def _run_derive(python: str, variant: str, base: Path, out: Path) -> dict[str, str]:
    """One ``--derive`` child: its JSON answer, or the error that stopped it."""
    try:
        done = subprocess.run([python, __file__, "--derive", variant, str(base), str(out)], capture_output=True,
                              text=True, timeout=DERIVE_TIMEOUT, env=_ENV)
    except subprocess.TimeoutExpired:
        return {"error": f"{TOOLS[variant]} exceeded {DERIVE_TIMEOUT:.0f} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {
        "error": f"exit {done.returncode}: {(done.stderr.strip().splitlines() or ['no output'])[-1][:300]}"}


def _onnxruntime_version(python: str) -> str:
    done = subprocess.run([python, "-c", "import onnxruntime; print(onnxruntime.__version__)"], capture_output=True,
                          text=True)
    return done.stdout.strip() or "none"


def variants(base: Path, wanted: Callable[[str], bool], torch_python: str | None) -> list[Model]:
    """The variants of one base, made when missing; errors and skips kept as rows.

    ONNX Runtime's ``optimize_model`` imports torch whenever it runs ONNX Runtime's own graph optimizer
    (opt_level >= 1, the default of every model type used here). Where this interpreter has no torch, that
    variant is made by the torch interpreter instead when its onnxruntime is the same version, and the
    row says so; otherwise the row carries the error.
    """
    rows = []
    for variant in VARIANTS:
        name = f"{base.name.removesuffix('.onnx')}.{variant}"
        if not wanted(name):
            continue
        out = base.with_name(f"{name}.onnx")
        row = Model(name, TOOLS[variant])
        if out.exists() and out.with_suffix(".json").exists():
            row.path, row.note = out, json.loads(out.with_suffix(".json").read_text()).get("note", "")
            rows.append(row)
            continue
        answer = _run_derive(sys.executable, variant, base, out)
        if "No module named 'torch'" in answer.get("error", "") and torch_python:
            import onnxruntime

            theirs = _onnxruntime_version(torch_python)
            if theirs == onnxruntime.__version__:
                answer = _run_derive(torch_python, variant, base, out)
                if "note" in answer:
                    answer["note"] += f" (by the torch interpreter's onnxruntime {theirs}: it imports torch)"
                    sidecar = out.with_suffix(".json")
                    sidecar.write_text(json.dumps({**json.loads(sidecar.read_text()), "note": answer["note"]}))
            else:
                answer["error"] += f" (the torch interpreter has onnxruntime {theirs}, not {onnxruntime.__version__})"
        if "note" in answer:
            row.path, row.note = out, answer["note"]
        elif "skipped" in answer:
            row.note = "skipped: " + answer["skipped"]
        else:
            row.error = answer["error"]
        print(f"  {name}: {row.note or row.error}", flush=True)
        rows.append(row)
    return rows


# ---------------------------------------------------------------- measuring


def _findings(path: Path, timeout: float) -> str:
    """How many findings ``check`` reports, by rule (from ``--output-format json``)."""
    try:
        done = subprocess.run([*LINT[:-1], "--output-format", "json", str(path)], capture_output=True, text=True,
                              env=_ENV, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"> {timeout:.0f} s"
    try:
        found = json.loads(done.stdout) if done.stdout.strip() else []
    except json.JSONDecodeError:
        return f"exit {done.returncode}, no JSON"
    codes: dict[str, int] = {}
    for finding in found:
        codes[finding["code"]] = codes.get(finding["code"], 0) + 1
    detail = ", ".join(f"{code}" + (f"×{n}" if n > 1 else "") for code, n in sorted(codes.items()))
    return f"{len(found)}" + (f" ({detail})" if detail else "")


def bench(path: Path, repeat: int, timeout: float) -> dict[str, Any]:
    """Baseline, check and check --fix alternated in every repeat; the fix on a fresh copy beside the model."""
    scratch = path.with_name(f".bench-fix-{path.name}")

    def fresh() -> None:
        shutil.copyfile(path, scratch)

    data = sorted(path.parent.glob(path.name + ".data"))
    before = [(p.stat().st_size, p.stat().st_mtime_ns) for p in data]
    base: list[Timed] = []
    check: list[Timed] = []
    fix: list[Timed] = []
    try:
        for _ in range(repeat):
            base.append(measure([*BASE, str(path)], timeout))
            if not (check and check[-1].stopped):  # one stop is enough to say so: no second 300 s
                check.append(measure([*LINT, str(path)], timeout))
            if not (fix and fix[-1].stopped):
                fix.append(measure([*LINT, "--fix", str(scratch)], timeout, fresh))
    finally:
        scratch.unlink(missing_ok=True)
    if [(p.stat().st_size, p.stat().st_mtime_ns) for p in data] != before:
        raise RuntimeError(f"--fix on a copy of {path.name} changed the original's external data")
    b, c, f = _median(base), _median(check), _median(fix)
    return {"base": b.seconds, "check": c.seconds, "fix": f.seconds, "check_ratio": median_ratio(base, check),
            "fix_ratio": median_ratio(base, fix), "check_ratio_of_medians": c.seconds / b.seconds,
            "fix_ratio_of_medians": f.seconds / b.seconds, "cpu": [b.cpu, c.cpu, f.cpu],
            "peak_mb": [b.peak_mb, c.peak_mb],
            "check_stopped": c.stopped, "fix_stopped": f.stopped, "codes": [b.code, c.code, f.code],
            "findings": _findings(path, timeout)}


def timings(path: Path, timeout: float) -> tuple[float, list[tuple[str, float]]] | str:
    """``check --timings-format json``: the steps by cost (the JSON is stderr's last line)."""
    try:
        done = subprocess.run([*LINT[:-1], "--timings-format", "json", str(path)], capture_output=True, text=True,
                              env=_ENV, timeout=timeout)
        steps = json.loads(done.stderr.strip().splitlines()[-1])["total"]
    except subprocess.TimeoutExpired:
        return f"stopped after {timeout:.0f} s"
    except (IndexError, ValueError, KeyError) as error:
        return f"no timings: {error}"
    return sum(steps.values()), sorted(steps.items(), key=lambda kv: -kv[1])


# ---------------------------------------------------------------- models


def smoke_models(folder: Path) -> list[Path]:
    """Two tiny bases without torch: an MLP built here (a MatMul with constant weights for the 4-bit
    quantizer) and the committed timm test_efficientnet export (a real exporter's CNN)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)
               for name, shape in (("w1", (64, 128)), ("b1", (128,)), ("w2", (128, 64)), ("b2", (64,)))]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["o"]),
             helper.make_node("Add", ["o", "b2"], ["y"])]
    graph = helper.make_graph(nodes, "tiny_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 64])], weights)
    mlp = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(mlp)
    onnx.save(mlp, mlp_path := folder / "tiny_mlp.helper.onnx")
    timm = folder / "timm_test_efficientnet.committed.onnx"
    shutil.copyfile(HERE / "data" / "timm_test_efficientnet.onnx", timm)
    # optimize_model at opt_level 0 (its fusions only): levels 1+ import torch, which CI does not have.
    for path, kind in ((mlp_path, "other"), (timm, "vision")):
        path.with_suffix(".json").write_text(json.dumps({**spec_from_graph(path), "config": {
            "kind": kind, "optimizer": "bert", "opt_level": 0, "num_heads": 0, "hidden_size": 0}}))
    return [mlp_path, timm]


def _is_base(path: Path) -> bool:
    return not path.name.startswith(".") and ".partial." not in path.name and path.name.count(".") == 2


def versions(torch_python: str | None) -> list[str]:
    """The versions in play: this interpreter's (measuring, deriving) and the torch interpreter's (exporting)."""
    import onnx
    import onnxruntime

    try:  # MatMulNBitsQuantizer imports onnx_ir, which onnxruntime does not install
        import onnx_ir

        ir = f", onnx_ir {onnx_ir.__version__}"
    except ImportError:
        ir = ", no onnx_ir"
    lines = [f"this interpreter: Python {sys.version.split()[0]}, onnx {onnx.__version__}, "
             f"onnxruntime {onnxruntime.__version__}{ir}"]
    if torch_python:
        done = subprocess.run([torch_python, str(HERE / "make_family_exports.py"), "--versions"], capture_output=True,
                              text=True)
        if done.returncode == 0:
            found = json.loads(done.stdout.strip().splitlines()[-1])
            lines.append(f"exporting interpreter ({torch_python}): " + ", ".join(f"{k} {v}" for k, v in found.items()))
        else:
            lines.append(f"exporting interpreter ({torch_python}): no versions ({done.stderr.strip()[-200:]})")
    return lines


def collect(cache: Path, torch_python: str | None, only: list[str] | None, smoke: bool) -> list[Model]:
    """Export (or reuse) the bases, derive (or reuse) their variants; every failure a row."""

    def wanted(name: str) -> bool:
        return not only or any(part in name for part in only)

    rows: list[Model] = []
    if smoke:
        bases = smoke_models(cache)
    else:
        names = [f"{f}.{e}" for f in exports.FAMILIES for e in exports.EXPORTERS]
        needed = [n for n in names if wanted(n) or any(wanted(f"{n}.{v}") for v in VARIANTS)]
        failed: dict[str, str] = {}
        if torch_python and needed:
            done = subprocess.run([torch_python, str(HERE / "make_family_exports.py"), "--out", str(cache), "--only",
                                   *needed], capture_output=True, text=True)
            for line in done.stdout.splitlines():
                if line.startswith("{"):
                    record = json.loads(line)
                    if record["name"] in needed:  # --only matches substrings: gpt2 would also match gpt2_x
                        print(f"  export {line}", flush=True)
                        if "error" in record:
                            failed[record["name"]] = record["error"]
            if done.returncode:
                print(f"  make_family_exports.py exited {done.returncode}: {done.stderr.strip()[-500:]}", flush=True)
        for name, error in failed.items():
            rows.append(Model(name, f"{name.split('.')[1]} export", error=error))
        bases = sorted(p for p in cache.glob("*.onnx") if _is_base(p) and p.stem in needed)
    for base in bases:
        stem = base.name.removesuffix(".onnx")
        exporter = stem.split(".")[1]
        if wanted(stem):
            rows.append(Model(stem, {"helper": "onnx.helper", "committed": "committed export"}.get(
                exporter, f"{exporter} export"), path=base))
        rows.extend(variants(base, wanted, torch_python))
    return rows


# ---------------------------------------------------------------- report


def _cell(seconds: float, stopped: bool, timeout: float) -> str:
    return f"> {timeout:.0f} (stopped)" if stopped else f"{seconds:.2f}"


def table(rows: list[Model], timeout: float) -> list[str]:
    lines = ["| model | made by | nodes | baseline (s) | `check` (s) | ratio | `check --fix` (s) | ratio | "
             "CPU (s) base / check / fix | peak MB base / check | findings | check <= 1.5x | fix <= 2.5x | note |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- |"]
    for row in rows:
        r = row.result
        if not r:
            why = row.error or row.note
            lines.append(f"| {row.name} | {row.made_by} | — | — | — | — | — | — | — | — | — | — | — | "
                         f"{'**failed**: ' if row.error else ''}{why.replace('|', '/')} |")
            continue
        ok_check = "yes" if r["check_ratio"] <= CHECK_TARGET and not r["check_stopped"] else "**no**"
        ok_fix = "yes" if r["fix_ratio"] <= FIX_TARGET and not r["fix_stopped"] else "**no**"
        codes = r["codes"]
        note = row.note + ("" if codes[0] == 0 else f"; baseline exit {codes[0]}")
        note += "" if codes[2] in (0, 1) else f"; --fix exit {codes[2]}"
        lines.append(f"| {row.name} | {row.made_by} | {r['nodes']} | {r['base']:.2f} | "
                     f"{_cell(r['check'], r['check_stopped'], timeout)} | {r['check_ratio']:.2f}x | "
                     f"{_cell(r['fix'], r['fix_stopped'], timeout)} | {r['fix_ratio']:.2f}x | "
                     f"{' / '.join(f'{c:.2f}' for c in r['cpu'])} | {r['peak_mb'][0]:.0f} / {r['peak_mb'][1]:.0f} | "
                     f"{r['findings']} | {ok_check} | {ok_fix} | {note.replace('|', '/')} |")
    return lines


def summary(rows: list[Model]) -> list[str]:
    measured = [row for row in rows if row.result]
    if not measured:
        return ["", "No model was measured."]
    worst_check = max(measured, key=lambda row: row.result["check_ratio"])
    worst_fix = max(measured, key=lambda row: row.result["fix_ratio"])
    met_check = sum(row.result["check_ratio"] <= CHECK_TARGET and not row.result["check_stopped"] for row in measured)
    met_fix = sum(row.result["fix_ratio"] <= FIX_TARGET and not row.result["fix_stopped"] for row in measured)
    failed = [row.name for row in rows if row.error]
    return ["", "| target | goal | met on | worst |", "| --- | --- | --- | --- |",
            f"| `check` against the baseline | <= {CHECK_TARGET}x | {met_check} of {len(measured)} | "
            f"{worst_check.result['check_ratio']:.2f}x ({worst_check.name}) |",
            f"| `check --fix` against the baseline | <= {FIX_TARGET}x | {met_fix} of {len(measured)} | "
            f"{worst_fix.result['fix_ratio']:.2f}x ({worst_fix.name}) |",
            "", f"Rows that could not be made: {', '.join(failed) if failed else 'none'}."]


def timings_section(rows: list[Model], top: int, timeout: float) -> list[str]:
    """Where the time goes in the slowest models (by check ratio): the eight costliest steps of each."""
    measured = sorted((row for row in rows if row.result), key=lambda row: -row.result["check_ratio"])[:top]
    lines: list[str] = []
    for row in measured:
        assert row.path is not None
        found = timings(row.path, timeout)
        if isinstance(found, str):
            lines += ["", f"`check --timings` on {row.name}: {found}"]
            continue
        whole, steps = found
        engines = sum(s for name, s in steps if name.startswith("engine"))
        lines += ["", f"`check --timings` on {row.name} ({row.result['check_ratio']:.2f}x the baseline; "
                  f"{whole:.2f} s in the steps, {engines:.2f} s of it in engines; the eight costliest steps):", "",
                  "| step | seconds | share |", "| --- | ---: | ---: |"]
        lines += [f"| {name} | {seconds:.3f} | {100 * seconds / whole:.1f}% |" for name, seconds in steps[:8]]
    return lines


def _revision() -> str:
    """The commit of the measured onnx_lint, and whether its files differ from it (others may commit mid-run)."""
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "onnx_lint"], capture_output=True,
                           text=True)
    if head.returncode:
        return "not a git checkout"
    return head.stdout.strip() + (" with uncommitted changes in onnx_lint/" if dirty.stdout.strip() else "")


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--torch-python", help="an interpreter with torch, torchvision, timm, transformers and "
                        "onnxscript, to export the missing base models")
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="*", help="only the rows whose name contains one of these")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a measured command is stopped")
    parser.add_argument("--timings-top", type=int, default=3, help="show --timings for this many slowest models")
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--json", type=Path, help="write every row as JSON")
    parser.add_argument("--smoke", action="store_true", help="no torch: two tiny models, one repeat (for CI)")
    parser.add_argument("--derive", nargs=3, metavar=("VARIANT", "BASE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.derive:
        return _derive_child(args.derive[0], Path(args.derive[1]), Path(args.derive[2]))
    started = time.perf_counter()
    repeat = 1 if args.smoke else args.repeat
    # Measured processes run from bytecode, as an installed onnx-lint does (see run.py).
    compileall.compile_dir(str(ROOT / "onnx_lint"), quiet=1)
    revision = _revision()
    head = [f"Load average (1/5/15 min) at the start: {_load()} on {os.cpu_count()} cores.",
            f"onnx-lint measured: this checkout at {revision}.",
            *versions(None if args.smoke else args.torch_python)]
    print("\n".join(head), flush=True)
    work = Path(tempfile.mkdtemp(prefix="onnx-lint-families-")) if args.smoke else None
    try:
        cache = work or args.cache
        cache.mkdir(parents=True, exist_ok=True)
        rows = collect(cache, args.torch_python, args.only, args.smoke)
        if rows and all(r.path is None for r in rows) and not args.smoke and not args.torch_python:
            print("no exports in the cache: pass --torch-python", file=sys.stderr)
        import onnx

        for row in rows:
            if row.path is None:
                continue
            row.result = bench(row.path, repeat, args.timeout)
            row.result["nodes"] = len(onnx.load(row.path, load_external_data=False).graph.node)
            print(table([row], args.timeout)[-1], flush=True)
        lines = head + ["", *table(rows, args.timeout), *summary(rows),
                        *timings_section(rows, args.timings_top, args.timeout)]
    finally:
        if work:
            shutil.rmtree(work, ignore_errors=True)
    lines += ["", f"Load average at the end: {_load()}. Total benchmark time: {time.perf_counter() - started:.0f} s."]
    if (now := _revision()) != revision:
        lines.append(f"**The checkout changed during the run** ({revision} -> {now}): rows measured different code.")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps([{"name": r.name, "made_by": r.made_by, "note": r.note, "error": r.error,
                                          **r.result} for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
