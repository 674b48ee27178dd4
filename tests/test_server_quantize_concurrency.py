"""Quantize runs at once in one language server write what each writes alone, and the server keeps answering.

Driven by pytest-lsp's real client over stdio. Each ``onnx-lint.quantize`` command runs in a worker
process of its own, so two can be in flight together: two different models (a small Conv net and a
MatMul MLP), then one model twice to two outputs in the same folder. Every file they write must be
byte for byte the file the same quantization writes when it runs alone, and the LSP channel (the
server's stdout) must stay clean: the requests after them are answered.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import onnx
import pytest
import pytest_lsp
from lsp_support import SERVER, execute, push_capabilities, round_trip, start
from pytest_lsp import LanguageClient
from test_quantize import residual_model, small_conv_model  # skips this module without onnxruntime

pytestmark = pytest.mark.asyncio
QUANTIZE_WAIT_S = 300.0


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path / "ws", push_capabilities())
    yield
    await lsp_client.shutdown_session()


def _models(workspace: Path) -> dict[str, tuple[Path, Path]]:
    """Each model beside its calibration data (fixed samples: nothing random in the runs)."""
    workspace.mkdir(parents=True, exist_ok=True)
    for folder in ("together", "twice", "alone"):
        (workspace / folder).mkdir(exist_ok=True)
    rng = np.random.default_rng(1)
    conv_data, mlp_data = workspace / "convs.npz", workspace / "mlp.npz"
    np.savez(conv_data, X=rng.standard_normal((8, 3, 16, 16)).astype(np.float32))
    np.savez(mlp_data, X=rng.standard_normal((16, 16)).astype(np.float32))
    return {"convs": (small_conv_model(workspace / "convs.onnx"), conv_data),
            "mlp": (residual_model(workspace / "mlp.onnx"), mlp_data)}


async def _quantize_at_once(client: LanguageClient, runs: list[tuple[Path, Path, Path]]) -> list[dict]:
    """Send every (model, calibration data, output) quantize command at once; their results, in order.

    Also checks that the runs really overlapped: at some moment every one of them had a progress bar
    showing its worker's progress (a "report" from the job) and none had ended.
    """
    known = set(client.progress_reports)
    tasks = [asyncio.ensure_future(execute(client, "onnx-lint.quantize", model.as_uri(),
                                           {"calibrationData": str(data), "output": str(output)},
                                           timeout=QUANTIZE_WAIT_S))
             for model, data, output in runs]
    overlapped = False
    while True:
        mine = [reports for token, reports in client.progress_reports.items() if token not in known]
        running = [reports for reports in mine if reports and reports[-1].kind == "report"]
        overlapped = overlapped or len(running) == len(runs)
        if all(task.done() for task in tasks):
            break
        await asyncio.wait(tasks, timeout=0.01, return_when=asyncio.FIRST_COMPLETED)
    results = [task.result() for task in tasks]  # a failed run raises its error here
    assert overlapped, "the quantize runs never ran at the same time (one ended before the other reported)"
    return results


async def _quantize_alone(client: LanguageClient, model: Path, data: Path, output: Path) -> dict:
    return await execute(client, "onnx-lint.quantize", model.as_uri(),
                         {"calibrationData": str(data), "output": str(output)}, timeout=QUANTIZE_WAIT_S)


def _written(result: dict, output: Path) -> bytes:
    assert result["output"] == str(output) and result["written"] is True, result
    assert result["exitCode"] == 0 and result["fp16Only"] is False, result["summary"]
    return output.read_bytes()


def _same_bytes(together: bytes, alone: bytes, what: str) -> None:
    if together == alone:
        return
    # Say what differs: the metadata, an initializer (a scale, a zero point, a weight), a node or the graph.
    first, second = onnx.load_from_string(together), onnx.load_from_string(alone)
    metadata = [{p.key: p.value for p in model.metadata_props} for model in (first, second)]
    differences = [f"metadata: {metadata[0]} != {metadata[1]}"] if metadata[0] != metadata[1] else []
    inits = {i.name: i for i in second.graph.initializer}
    differences += [f"initializer {i.name}" for i in first.graph.initializer if inits.get(i.name) != i]
    if list(first.graph.node) != list(second.graph.node):
        differences.append("the nodes")
    raise AssertionError(f"{what}: {len(together)} bytes at once, {len(alone)} bytes alone; differ in "
                         f"{', '.join(differences) or 'the bytes only (same fields)'}")


async def test_quantize_runs_at_once_write_the_bytes_each_writes_alone(client, tmp_path):
    workspace = tmp_path / "ws"
    models = _models(workspace)
    (conv, conv_data), (mlp, mlp_data) = models["convs"], models["mlp"]
    sources = {path: path.read_bytes() for path in (conv, mlp)}

    # Two different models at once.
    together = [(conv, conv_data, workspace / "together" / "convs.q.onnx"),
                (mlp, mlp_data, workspace / "together" / "mlp.q.onnx")]
    conv_together, mlp_together = [_written(r, run[2]) for r, run in
                                   zip(await _quantize_at_once(client, together), together)]
    # One model twice at once, to two outputs in one folder.
    twice = [(mlp, mlp_data, workspace / "twice" / "mlp.first.onnx"),
             (mlp, mlp_data, workspace / "twice" / "mlp.second.onnx")]
    first, second = [_written(r, run[2]) for r, run in zip(await _quantize_at_once(client, twice), twice)]
    # Each alone, one after the other.
    conv_alone = _written(await _quantize_alone(client, conv, conv_data, workspace / "alone" / "convs.q.onnx"),
                          workspace / "alone" / "convs.q.onnx")
    mlp_alone = _written(await _quantize_alone(client, mlp, mlp_data, workspace / "alone" / "mlp.q.onnx"),
                         workspace / "alone" / "mlp.q.onnx")

    _same_bytes(conv_together, conv_alone, "the Conv net quantized beside the MLP")
    _same_bytes(mlp_together, mlp_alone, "the MLP quantized beside the Conv net")
    _same_bytes(first, mlp_alone, "the MLP's first of two runs at once")
    _same_bytes(second, mlp_alone, "the MLP's second of two runs at once")
    assert conv_alone != mlp_alone
    assert {path: path.read_bytes() for path in sources} == sources, "a source model was changed"
    # No run left a staged file behind, and the runs at once wrote the files the runs alone wrote.
    leftovers = [p for p in workspace.rglob("*") if p.name.startswith(".") or p.name.endswith(".tmp")]
    assert not leftovers, leftovers
    alone = sorted(p.name for p in (workspace / "alone").iterdir())
    assert sorted(p.name for p in (workspace / "together").iterdir()) == alone
    assert sorted(p.name for p in (workspace / "twice").iterdir()) == sorted(
        name.replace("mlp.q.", f"mlp.{which}.") for name in alone if name.startswith("mlp.q.")
        for which in ("first", "second"))

    # Every run told the user, once, where its model went.
    told = [m.message for m in client.messages if m.message.startswith("Quantized model written to")]
    assert sorted(told) == sorted(f"Quantized model written to {path}" for path in (
        *(run[2] for run in together + twice), workspace / "alone" / "convs.q.onnx",
        workspace / "alone" / "mlp.q.onnx")), told
    # The server still answers, over a channel nothing corrupted: a request that runs in a worker (the written
    # model's view, which reads the provenance the runs recorded) and one the server answers itself.
    described = await execute(client, "onnx-lint.describeModel", (workspace / "together" / "convs.q.onnx").as_uri())
    assert described["summary"]["provenance"].startswith("Quantized by onnx-lint "), described["summary"]
    assert " from convs.onnx" in described["summary"]["provenance"]
    await round_trip(client)
    assert client.error is None, client.error
