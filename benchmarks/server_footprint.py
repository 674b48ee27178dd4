"""The language server's own process: start time and memory (its workers do the onnx work).

    python benchmarks/server_footprint.py [--repeat 5] [--root REPO] [--markdown FILE]

Each run starts ``python -m onnx_lint server`` as an editor would, speaking LSP over
stdio: *start* is the time from launch to the ``initialize`` answer; then a model is
opened and, once its diagnostics arrive, the main process's resident memory (VmRSS)
and peak (VmHWM) are read from ``/proc``. ``--root`` runs another checkout's code
(to compare before and after a change).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _send(process: subprocess.Popen, message: dict) -> None:
    body = json.dumps(message).encode()
    assert process.stdin is not None
    process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    process.stdin.flush()


def _receive(process: subprocess.Popen) -> dict:
    assert process.stdout is not None
    length = 0
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("the server closed its output")
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(process.stdout.read(length))


def _wait_for(process: subprocess.Popen, match) -> dict:
    while True:
        message = _receive(process)
        if message.get("method") in ("workspace/configuration", "client/registerCapability") and "id" in message:
            _send(process, {"jsonrpc": "2.0", "id": message["id"], "result": [None] if "configuration" in
                            message["method"] else None})
        if match(message):
            return message


def _memory_kb(pid: int) -> tuple[int, int]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def one_run(root: Path, model: Path) -> tuple[float, float, int, int, bool]:
    """(start s, first diagnostics s, RSS kB, peak kB, onnx loaded) of one server session."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "onnx_lint", "server"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=model.parent)
    try:
        _send(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": os.getpid(), "rootUri": model.parent.as_uri(), "capabilities": {}}})
        _wait_for(process, lambda m: m.get("id") == 1)
        start_s = time.perf_counter() - started
        _send(process, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
        opened = time.perf_counter()
        _send(process, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": model.as_uri(), "languageId": "onnx", "version": 1, "text": ""}}})
        _wait_for(process, lambda m: m.get("method") == "textDocument/publishDiagnostics"
                  and m["params"]["uri"] == model.as_uri())
        lint_s = time.perf_counter() - opened
        rss, peak = _memory_kb(process.pid)
        maps = Path(f"/proc/{process.pid}/maps").read_text()
        onnx_loaded = "onnx_cpp2py_export" in maps
        _send(process, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        _wait_for(process, lambda m: m.get("id") == 2)
        _send(process, {"jsonrpc": "2.0", "method": "exit"})
        process.wait(timeout=30)
        return start_s, lint_s, rss, peak, onnx_loaded
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose onnx_lint to run")
    parser.add_argument("--smoke", action="store_true", help="one run")
    parser.add_argument("--markdown", help="write the table to this Markdown file")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import onnx

    from examples import defects

    with tempfile.TemporaryDirectory(prefix="onnx-lint-footprint-") as tmp:
        model = Path(tmp) / "stale.onnx"
        onnx.save(defects.stale_rank0_output(), model)
        runs = [one_run(args.root.resolve(), model) for _ in range(1 if args.smoke else args.repeat)]
    start_s = statistics.median(r[0] for r in runs)
    lint_s = statistics.median(r[1] for r in runs)
    rss = statistics.median(r[2] for r in runs) / 1024
    peak = statistics.median(r[3] for r in runs) / 1024
    text = ("| code | start to `initialize` answer (s) | first diagnostics (s) | main process RSS (MB) | "
            "peak (MB) | onnx in main process |\n| --- | ---: | ---: | ---: | ---: | --- |\n"
            f"| {args.root} | {start_s:.2f} | {lint_s:.2f} | {rss:.0f} | {peak:.0f} | "
            f"{'yes' if runs[0][4] else 'no'} |\n\nMedians of {len(runs)} runs.\n")
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
