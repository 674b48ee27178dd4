"""The whole-graph view on large models: server time, time to first paint, pan frame time, page memory.

For each model: the server's side (``onnx-lint.modelGraph``: the graph's columns and their JSON), then the
model view's real page and bundles in Chromium (``vscode-extension/e2e/graph-bench.mjs``): time from the
data request to the first painted overview, frame times while panning the overview and after search has
revealed a node deep in the graph, and the page's JavaScript heap. Needs Node, the extension's
``npm ci`` and Chromium (as the VS Code end-to-end test does).

    python benchmarks/graph_view.py            # prints a Markdown table (docs/performance.md)
    python benchmarks/graph_view.py --smoke --markdown table.md   # small models (CI keeps the code working)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="small models, to check that the code runs")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
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
                       env={**os.environ, "CASES": json.dumps(cases), "RESULT": str(result), "CHROMIUM": chromium})
        page = json.loads(result.read_text())
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
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
