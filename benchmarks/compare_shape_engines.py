"""Side by side: ONNX Runtime's symbolic shape inference (as onnx-lint runs it) and onnx-shape-inference.

    VENV/bin/python benchmarks/compare_shape_engines.py MODEL.onnx ... [--timeout 60] [--markdown FILE]

Run it with an interpreter that has onnx-lint's dependencies and ``onnx-shape-inference`` (a
throwaway venv made with ``--system-site-packages``; onnx-lint does not depend on it). Each engine
runs on the stripped copy onnx-lint infers on (annotations removed, large weights swapped for
inputs), in a child process of its own under ``--timeout``: wall time, the child's peak resident
memory, and its answer per graph output (rank and dims). The answers are compared output by output:
same rank, and the same number wherever both give one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[3])
import onnx
engine, path = sys.argv[1], sys.argv[2]
from onnx_lint.model.load import read_model
from onnx_lint.engines.strip import strip_model, swap_heavy_initializers
loaded = read_model(path)
model = loaded.fresh_copy()
strip_model(model, loaded.scope_paths)
swap_heavy_initializers(model, loaded.scope_paths, all_external=True)
names = [o.name for o in model.graph.output]
start = time.perf_counter()
answer, error = {}, None
try:
    if engine == "ort":
        from onnx_lint.engines.symbolic import run_symbolic_inference
        out = run_symbolic_inference(model)
        if isinstance(out, str):
            error = out
        else:
            for v in out.graph.output:
                if v.type.tensor_type.HasField("shape"):
                    answer[v.name] = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                                      for d in v.type.tensor_type.shape.dim]
    else:
        import onnx_ir as ir
        from onnx_shape_inference import infer_symbolic_shapes
        irm = infer_symbolic_shapes(ir.from_proto(model))
        for v in irm.graph.outputs:
            if v.shape is not None:
                answer[v.name] = [d if isinstance(d, int) else (str(d) if d is not None else None) for d in v.shape]
except Exception as exc:
    error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "answer": answer, "error": error, "outputs": names}))
"""


def run(engine: str, path: Path, timeout: float) -> dict:
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, engine, str(path), str(ROOT)], capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish within {timeout:.0f} s", "answer": {}, "seconds": None, "peak_mb": None}
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["crashed"])[-1][:160], "answer": {},
                "seconds": None, "peak_mb": None}
    return json.loads(done.stdout.strip().splitlines()[-1])


def agree(a: list | None, b: list | None) -> bool | None:
    if a is None or b is None:
        return None
    return len(a) == len(b) and all(not (isinstance(x, int) and isinstance(y, int)) or x == y for x, y in zip(a, b))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    lines = ["| model | ORT symbolic: s / MB / outputs shaped | onnx-shape-inference: s / MB / outputs shaped "
             "| answers agree |", "|---|---|---|---|"]
    for path in args.models:
        ort, osi = run("ort", path, args.timeout), run("osi", path, args.timeout)

        def cell(r: dict) -> str:
            if r["seconds"] is None:
                return r["error"]
            shaped = f"{len(r['answer'])}/{len(r.get('outputs', []))}"
            return f"{r['seconds']:.2f} / {r['peak_mb']:.0f} / {shaped}" + (f" ({r['error']})" if r["error"] else "")

        names = ort.get("outputs", osi.get("outputs", []))
        verdicts = [agree(ort["answer"].get(n), osi["answer"].get(n)) for n in names]
        known = [v for v in verdicts if v is not None]
        same = "-" if not known else ("yes" if all(known) else f"no ({known.count(False)} differ)")
        line = f"| {path.stem} | {cell(ort)} | {cell(osi)} | {same} |"
        lines.append(line)
        print(line, flush=True)
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
