"""Language-server latency: from ``didOpen`` to published diagnostics, against the CLI on the same model.

    python benchmarks/server_latency.py [--repeat 3] [--smoke] [--markdown benchmarks/SERVER.md]

A real LSP client (pygls') starts ``onnx-lint server`` once and waits until its
workers are warm. For each size (weakly-typed MLP chains of 1k, 10k and 100k
nodes) it measures, repeated, with medians:

* cold: ``didOpen`` of content the server has never seen, to ``publishDiagnostics``;
* cached: ``didClose`` then ``didOpen`` of the same file, to ``publishDiagnostics``;
* the CLI: ``onnx-lint check --no-cache`` on the same file, as a whole process.

Targets (issue 4): cold on 10k nodes within 1.5x of the CLI's time, cached under 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import models  # noqa: E402

CLI = [sys.executable, "-m", "onnx_lint", "check", "--no-cache", "--jobs", "1", "-q"]


class Client:
    """A pygls client that records when each URI's diagnostics arrive."""

    def __init__(self) -> None:
        self.lsp = LanguageClient("onnx-lint-benchmark", "1")
        self.arrived: dict[str, asyncio.Event] = {}

        @self.lsp.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: lsp.PublishDiagnosticsParams) -> None:
            self.arrived.setdefault(params.uri, asyncio.Event()).set()

        @self.lsp.feature(lsp.WINDOW_LOG_MESSAGE)
        def logged(params: lsp.LogMessageParams) -> None:
            pass

    async def start(self, root: Path) -> None:
        await self.lsp.start_io(sys.executable, "-m", "onnx_lint", "server")
        await self.lsp.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(),
                                                             root_uri=root.as_uri()))
        self.lsp.initialized(lsp.InitializedParams())

    async def open_until_published(self, path: Path) -> float:
        uri = path.as_uri()
        event = self.arrived.setdefault(uri, asyncio.Event())
        event.clear()
        start = time.perf_counter()
        self.lsp.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id="onnx", version=1, text="")))
        await asyncio.wait_for(event.wait(), 600)
        elapsed = time.perf_counter() - start
        self.lsp.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
        event.clear()
        await asyncio.wait_for(event.wait(), 60)  # the close publishes the empty list
        return elapsed

    async def stop(self) -> None:
        await self.lsp.shutdown_async(None)
        self.lsp.exit(None)
        await self.lsp.stop()


def _cli_seconds(path: Path) -> float:
    start = time.perf_counter()
    subprocess.run([*CLI, str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _variant(model: onnx.ModelProto, folder: Path, name: str, index: int) -> Path:
    """The same model with a different doc_string: new bytes, so no cache can answer it."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    copy.doc_string = f"benchmark variant {index}"
    path = folder / f"{name}-{index}.onnx"
    onnx.save(copy, path)
    return path


async def run(sizes: list[int], repeat: int, folder: Path) -> list[dict]:
    client = Client()
    await client.start(folder)
    warmup = _variant(models.weakly_typed(models.mlp_chain(200), 20), folder, "warmup", 0)
    await client.open_until_published(warmup)  # the workers are started and have imported onnx
    rows = []
    for size in sizes:
        model = models.weakly_typed(models.mlp_chain(size), min(200, size // 10))
        cold, cached, cli = [], [], []
        for i in range(repeat):
            path = _variant(model, folder, f"mlp-{size}", i)
            cold.append(await client.open_until_published(path))
            cached.append(await client.open_until_published(path))
            cli.append(_cli_seconds(path))
        rows.append({"model": f"mlp-{size}-weak", "nodes": models.node_count(model),
                     "cold": statistics.median(cold), "cached": statistics.median(cached),
                     "cli": statistics.median(cli)})
        print(f"{rows[-1]['model']}: cold {rows[-1]['cold']:.3f} s, cached {rows[-1]['cached'] * 1000:.1f} ms, "
              f"CLI {rows[-1]['cli']:.3f} s", flush=True)
    await client.stop()
    return rows


def markdown(rows: list[dict], repeat: int) -> str:
    lines = ["| model | nodes | server, cold (s) | CLI `check` (s) | cold / CLI | server, cached re-open (ms) |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['nodes']:,} | {r['cold']:.3f} | {r['cli']:.3f} | "
                     f"{r['cold'] / r['cli']:.2f}x | {r['cached'] * 1000:.1f} |")
    lines.append("")
    lines.append(f"Medians of {repeat} runs. Cold: `didOpen` of bytes the warm server has never seen, to "
                 "`publishDiagnostics`. Cached: `didClose` + `didOpen` of the same file. CLI: "
                 "`onnx-lint check --no-cache` as a whole process.")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one run: checks the script works")
    parser.add_argument("--markdown", type=Path, help="write the table here")
    args = parser.parse_args()
    sizes = [200, 1000] if args.smoke else [1000, 10_000, 100_000]
    repeat = 1 if args.smoke else args.repeat
    with tempfile.TemporaryDirectory(prefix="onnx-lint-server-bench-") as tmp:
        rows = asyncio.run(run(sizes, repeat, Path(tmp)))
    table = markdown(rows, repeat)
    print(table)
    if args.markdown:
        args.markdown.write_text(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
