"""The whole-graph view on large models: server time, opening (first paint, interactive), frame times, memory.

For each model: the server's side (``onnx-lint.modelGraph``: the graph's columns and their JSON), then the
model view's real page and bundles in Chromium (``vscode-extension/e2e/graph-bench.mjs``): time from the
data request to the first painted overview, open-to-interactive (a real mouse click on a drawn node after
first paint, answered with the node selected and its details asked for, and the main thread then quiet), the
longest frame and the longest long task until then, frame times while panning the overview and after search
has revealed a node deep in the graph, and the page's JavaScript heap. Needs Node, the extension's ``npm ci``
and Chromium (as the VS Code end-to-end test does).

    python benchmarks/graph_view.py            # prints two Markdown tables (docs/performance.md)
    python benchmarks/graph_view.py --repeat 3 # the opening 3 times per model, each on a fresh page: medians
    python benchmarks/graph_view.py --smoke --markdown table.md   # small models (CI keeps the code working)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx

REPO = Path(__file__).resolve().parent.parent
EXTENSION = REPO / "vscode-extension"
sys.path.insert(0, str(REPO))

from benchmarks import models  # noqa: E402
from onnx_lint.model.graphs import iter_scopes  # noqa: E402
from onnx_lint.server.graph_data import model_graph  # noqa: E402


def _cases(folder: Path, smoke: bool) -> list[tuple[str, onnx.ModelProto]]:
    if smoke:
        llama = models.llm_decoder(folder, layers=2, hidden=64, ffn=128, vocab=100)
        return [("mlp-1000", models.mlp_chain(1000)), ("transformer-1000", models.transformer_blocks(1000)),
                ("llama-2-layers", onnx.load(llama, load_external_data=False))]
    llama = models.llm_decoder(folder)
    return [
        ("mlp-100000", models.mlp_chain(100_000)),
        ("transformer-100000", models.transformer_blocks(100_000)),
        ("llama-7b-shaped", onnx.load(llama, load_external_data=False)),
    ]


def _server_side(model: onnx.ModelProto, out: Path) -> dict:
    """What the server does for the view: the columns, as JSON; with one finding deep in the graph."""
    started = time.perf_counter()
    data = model_graph(list(iter_scopes(model)))
    text = json.dumps(data, separators=(",", ":"))
    seconds = time.perf_counter() - started
    root = data["graphs"][0]
    deep = len(root["nodeOp"]) * 3 // 4
    finding = {"index": 0, "code": "OL001", "severity": "error", "path": f"graph/node[{deep}]"}
    name = root["nodeName"][deep] or root["tensors"][root["outputs"][root["outputEnd"][deep] - 1]]
    out.write_text(json.dumps({"graph": json.loads(text), "findings": [finding], "reveal": name}))
    return {"nodes": data["nodes"], "server_s": seconds, "json_mb": len(text) / 1e6}


def _opening_table(page: list[dict], server: dict, repeat: int) -> str:
    """Opening a model: first paint, open-to-interactive, the longest frame and long task until then (medians)."""
    def median(row: dict, key: str) -> float | None:
        values = [o[key] for o in row["opens"] if o.get(key) is not None]
        return statistics.median(values) if len(values) == len(row["opens"]) else None

    def ms(value: float | None) -> str:
        return "never" if value is None else f"{value:.0f}"

    def total(value: float | None, server_s: float) -> str:
        return "never" if value is None else f"{server_s + value / 1000:.2f}"

    runs = f" (median of {repeat})" if repeat > 1 else ""
    lines = [f"| model | server (s) | first paint (ms){runs} | first paint + server (s) | clicked "
             "| click sent at (ms) | open-to-interactive (ms) | open-to-interactive + server (s) | longest frame (ms) "
             "| longest long task (ms) | long tasks (count / ms) | message delivery (ms) | first layout (ms) |",
             "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in page:
        s = server[row["name"]]
        first, interactive = median(row, "firstPaintMs"), median(row, "interactiveMs")
        lines.append(f"| {row['name']} | {s['server_s']:.2f} | {ms(first)} | {total(first, s['server_s'])} "
                     f"| {row['opens'][0]['clicked']} | {ms(median(row, 'clickMs'))} | {ms(interactive)} "
                     f"| {total(interactive, s['server_s'])} | {ms(median(row, 'longestFrame'))} "
                     f"| {ms(median(row, 'longestTask'))} | {median(row, 'longTasks'):.0f} "
                     f"/ {ms(median(row, 'longTaskMs'))} | {ms(median(row, 'deliveryMs'))} "
                     f"| {'—' if median(row, 'layoutMs') is None else ms(median(row, 'layoutMs'))} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="small models, to check that the code runs")
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    parser.add_argument("--repeat", type=int, default=1, help="opens per model, each on a fresh page (medians)")
    parser.add_argument("--json", type=Path, help="also write every measurement to this file")
    args = parser.parse_args()
    node, chromium = shutil.which("node"), shutil.which("chromium") or "/usr/bin/chromium"
    if node is None:
        sys.exit("node is not installed")
    subprocess.run(["npm", "run", "bundle"], cwd=EXTENSION, check=True, capture_output=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        server, cases = {}, []
        for name, model in _cases(folder, args.smoke):
            data = folder / f"{name}.json"
            server[name] = _server_side(model, data)
            cases.append({"name": name, "data": str(data)})
        result = folder / "result.json"
        subprocess.run([node, "e2e/graph-bench.mjs"], cwd=EXTENSION, check=True, timeout=900,
                       env={**os.environ, "CASES": json.dumps(cases), "RESULT": str(result), "CHROMIUM": chromium,
                            "REPEAT": str(args.repeat)})
        page = json.loads(result.read_text())
    if args.json:
        args.json.write_text(json.dumps({"server": server, "page": page}, indent=2))
    lines = ["| model | nodes | server (s) | JSON (MB) | first paint (ms) | boxes drawn | overview pan frame "
             "median / p95 (ms) | reveal a node (ms) | boxes | zoomed pan frame median / p95 (ms) | JS heap (MB) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in page:
        s = server[row["name"]]
        overview, zoomed = row["overview"], row["zoomed"]
        lines.append(f"| {row['name']} | {s['nodes']:,} | {s['server_s']:.2f} | {s['json_mb']:.1f} "
                     f"| {row['firstPaintMs']:.0f} | {row['drawn']} | {overview['median']:.1f} / {overview['p95']:.1f} "
                     f"| {row['revealMs']} | {row['zoomedDrawn']} | {zoomed['median']:.1f} / {zoomed['p95']:.1f} "
                     f"| {row['heapMB']:.0f} |")
        if row["errors"]:
            sys.exit(f"{row['name']}: the page failed: {row['errors']}")
    lines += ["", _opening_table(page, server, args.repeat)]
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
