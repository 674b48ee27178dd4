"""What naming OL003's root causes costs: per-node inference at the frontier vs a strict whole-model run.

    python benchmarks/root_cause_cost.py [--nodes 100000] [--markdown FILE] [--smoke]

On an N-node residual MLP (benchmarks/models.mlp_chain), healthy and with a failing
TopK or a schema-less custom operator in the middle, times ``LintContext.untyped_groups``
(the whole untyped-tensor analysis) and, within it, the per-node inferences and strict
whole-model runs that name the root causes. The last column is one strict whole-model inference: what
the former regex approach ran for every model with an untyped tensor. A healthy
model must make no per-node call and no strict run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
from onnx import helper as h
from onnx import numpy_helper

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import models  # noqa: E402

from onnx_lint.engines import oracle  # noqa: E402
from onnx_lint.lint import untyped  # noqa: E402
from onnx_lint.lint.context import LintContext  # noqa: E402
from onnx_lint.model.load import read_model  # noqa: E402

_calls: Counter[str] = Counter()
_spent: Counter[str] = Counter()


def _counted(name: str, function):
    def wrapper(*args, **kwargs):
        _calls[name] += 1
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            _spent[name] += time.perf_counter() - start
    return wrapper


def _broken(nodes: int, how: str) -> onnx.ModelProto:
    """The chain with its middle node's output fed through a failing TopK or a custom operator."""
    model = models.mlp_chain(nodes)
    graph = model.graph
    middle = len(graph.node) // 2
    tensor = graph.node[middle].output[0]
    if how == "topk":
        graph.initializer.append(numpy_helper.from_array(np.array([10**6], dtype=np.int64), "K"))
        extra = h.make_node("TopK", [tensor, "K"], ["bad", "bad_i"], axis=1)  # unnamed, like an exporter's
    else:
        model.opset_import.append(h.make_opsetid("my.ops", 1))
        extra = h.make_node("Foo", [tensor], ["bad"], domain="my.ops")
    graph.node.insert(middle + 1, extra)
    for node in graph.node[middle + 2:]:
        node.input[:] = ["bad" if name == tensor else name for name in node.input]
    return model


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--smoke", action="store_true", help="400 nodes: keeps the code alive in CI")
    parser.add_argument("--markdown", help="write the table to this Markdown file")
    args = parser.parse_args(argv)
    if args.smoke:
        args.nodes = 400
    untyped.explain_untyped = _counted("per-node", untyped.explain_untyped)  # type: ignore[assignment]
    oracle.ShapeOracle.strict_messages = _counted(  # type: ignore[method-assign]
        "strict", oracle.ShapeOracle.strict_messages)
    rows = [f"| model ({args.nodes} nodes) | root causes | per-node calls | strict runs | naming them (s) "
            "| untyped_groups in all (s) | one strict whole-model inference (s) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    with tempfile.TemporaryDirectory(prefix="onnx-lint-rootcause-") as tmp:
        cases = {"healthy": models.mlp_chain(args.nodes), "failing TopK": _broken(args.nodes, "topk"),
                 "custom operator": _broken(args.nodes, "custom")}
        for name, model in cases.items():
            path = Path(tmp, "model.onnx")
            onnx.save(model, path)
            ctx = LintContext(read_model(path), path.name)
            _calls.clear()
            _spent.clear()
            start = time.perf_counter()
            groups = ctx.untyped_groups
            spent = time.perf_counter() - start
            start = time.perf_counter()
            try:
                onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
            except Exception:
                pass
            strict = time.perf_counter() - start
            naming = _spent["per-node"] + _spent["strict"]
            rows.append(f"| {name} | {len(groups)} | {_calls['per-node']} | {_calls['strict']} | {naming:.4f} "
                        f"| {spent:.3f} | {strict:.3f} |")
    print("\n".join(rows))
    if args.markdown:
        Path(args.markdown).write_text("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
