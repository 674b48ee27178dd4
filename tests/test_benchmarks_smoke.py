"""The benchmark scripts run in CI at tiny sizes so their code never rots (no timing assertions)."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_quantize_benchmark_smoke(tmp_path):
    out = tmp_path / "table.md"
    done = subprocess.run([sys.executable, "benchmarks/quantize_bench.py", "--smoke", "--markdown", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    table = out.read_text()
    assert "weakly_typed_mlp" in table and "cosine similarity" in table


def test_performance_benchmark_smoke(tmp_path):
    out = tmp_path / "results.md"
    done = subprocess.run([sys.executable, "benchmarks/run.py", "--smoke", "--markdown", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    table = out.read_text()
    for row in ("mlp-1000", "transformer-1000-weak", "conv-symbolic-hw", "symbolic-fallback", "external-1gb",
                "`--jobs 1` vs `--jobs 2`", "cold cache vs warm cache"):
        assert row in table
