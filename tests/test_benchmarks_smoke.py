"""The benchmark scripts run in CI at tiny sizes so their code never rots (no timing assertions)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO


def _smoke(script: str, tmp_path, timeout: int) -> str:
    """Run a benchmark script with --smoke and return the Markdown it wrote; it must leave no temporary files."""
    out = tmp_path / "table.md"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = subprocess.run([sys.executable, script, "--smoke", "--markdown", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "TMPDIR": str(scratch)})
    assert done.returncode == 0, done.stdout + done.stderr
    ours = sorted(p.name for p in scratch.iterdir() if p.name.startswith("onnx-lint"))
    assert ours == [], "the benchmark left temporary files behind"
    return out.read_text()


def test_quantize_benchmark_smoke(tmp_path):
    table = _smoke("benchmarks/quantize_bench.py", tmp_path, timeout=600)
    assert "weakly_typed_mlp" in table and "cosine similarity" in table


def test_quantize_vs_modelopt_benchmark_smoke(tmp_path):
    """Runs without ModelOpt (never a test dependency): onnx-lint's row on a committed timm export."""
    table = _smoke("benchmarks/quantize_vs_modelopt.py", tmp_path, timeout=600)
    assert "timm test_efficientnet" in table and "| onnx-lint (onnxruntime) | ok |" in table
    assert "INT8 share of MACs" in table and "%" in table.split("| onnx-lint (onnxruntime) | ok |")[1].splitlines()[0]


def test_performance_benchmark_smoke(tmp_path):
    table = _smoke("benchmarks/run.py", tmp_path, timeout=900)
    for row in ("mlp-1000", "transformer-1000-weak", "conv-symbolic-hw", "symbolic-fallback", "external-1gb",
                "external-chain-1000", "external-chain-1000-weak", "resnet18-dynamo-style", "| resnet18_stale_output |",
                "`--jobs 1` vs `--jobs 2`", "cold cache vs warm cache", "small-initializers-2000-weak",
                "| llm-7b-shaped |", "llm-7b-shaped-weak", "`check --timings` on the slowest of the largest models"):
        assert row in table


def test_required_work_benchmark_smoke(tmp_path):
    """The floor under check's ratios: the required work forked and in one process, beside the check itself."""
    table = _smoke("benchmarks/required_work.py", tmp_path, timeout=600)
    for row in ("| external_chain_2000_weak | required, inference forked |",
                "| small_inits | required, in one process |", "| transformer_2000_weak | check |",
                "| small_inits_weak | baseline |"):
        assert row in table


def test_families_benchmark_smoke(tmp_path):
    """Without torch: a tiny helper-built MLP and the committed timm export through every variant tool
    (quantize_static, quantize_dynamic, MatMulNBits, optimize_model) and the check/--fix measurements."""
    table = _smoke("benchmarks/families.py", tmp_path, timeout=900)
    assert "tiny_mlp.helper" in table and "quantize_static (QDQ)" in table and "optimize_model" in table


def test_server_footprint_benchmark_smoke(tmp_path):
    table = _smoke("benchmarks/server_footprint.py", tmp_path, timeout=300)
    assert "main process RSS" in table and "| no |" in table  # onnx stays out of the server's own process


def test_server_latency_benchmark_smoke(tmp_path):
    table = _smoke("benchmarks/server_latency.py", tmp_path, timeout=600)
    assert "mlp-1000-weak" in table and "cached re-open" in table


def test_server_settings_benchmark_smoke():
    done = subprocess.run([sys.executable, "benchmarks/server_settings.py", "--lints", "20"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "settings index" in done.stdout


def test_root_cause_benchmark_smoke(tmp_path):
    """Counts, not times: a healthy model makes no per-node inference and no strict run; a broken one, one
    per-node inference per root cause and no strict run."""
    table = _smoke("benchmarks/root_cause_cost.py", tmp_path, timeout=300)
    assert "| healthy | 0 | 0 | 0 |" in table
    assert "| failing TopK | 1 | 1 | 0 |" in table and "| custom operator | 1 | 1 | 0 |" in table


def test_graph_view_benchmark_smoke(tmp_path):
    """The whole-graph view's page in Chromium on small models; needs Node, Chromium and the extension's npm ci."""
    import shutil

    import pytest

    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if not shutil.which("chromium") and not os.path.exists("/usr/bin/chromium"):
        missing.append("chromium")
    if missing:
        if os.environ.get("ONNX_LINT_REQUIRE_EDITORS") == "1":
            pytest.fail(f"{', '.join(missing)} not installed")
        pytest.skip(f"{', '.join(missing)} not installed")
    extension = REPO / "vscode-extension"
    if not (extension / "node_modules" / "esbuild").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=extension, check=True, capture_output=True,
                       timeout=900)
    table = _smoke("benchmarks/graph_view.py", tmp_path, timeout=600)
    assert "| mlp-1000 | 1,000 |" in table and "llama-2-layers" in table
