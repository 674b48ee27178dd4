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
