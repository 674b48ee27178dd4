"""Shared fixtures: models on disk and a way to run the real CLI."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import onnx
import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from onnx_lint.cli import main  # noqa: E402


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self):
        import json

        return json.loads(self.out)


@pytest.fixture
def cli(capsys, monkeypatch, tmp_path):
    """Run ``onnx-lint`` in-process (one job, no cache unless asked) and capture its output."""

    def run(*args: str, cwd: Path | None = None) -> Run:
        monkeypatch.chdir(cwd or tmp_path)
        argv = list(args)
        lints = not argv or argv[0] not in ("rule", "list-rules", "version")
        if lints and "--jobs" not in argv and "-j" not in argv:
            argv += ["--jobs", "1"]
        code = main(argv)
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err, captured.err
        return Run(code, captured.out, captured.err)

    return run


def run_process(*args: str, cwd: Path, env: dict | None = None, timeout: float = 300) -> Run:
    """Run ``python -m onnx_lint`` as a real process: what a user's shell sees."""
    done = subprocess.run([sys.executable, "-m", "onnx_lint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    return Run(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def save(tmp_path):
    """Save a ModelProto under tmp_path and return its path."""

    def _save(model: onnx.ModelProto, name: str = "model.onnx") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        onnx.save_model(model, path)
        return path

    return _save


def output_dims(path: Path, index: int = 0) -> list:
    model = onnx.load(path, load_external_data=False)
    shape = model.graph.output[index].type.tensor_type.shape
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in shape.dim]


# Markers by test module, so that `python -m pytest -m "not slow"` is a loop of under a minute
# while plain `python -m pytest` (the README's command, what CI runs) still runs everything.
# `slow`: the module ran longer than about 12 s alone on the shared 2-core machine, or it builds
# environments, wheels or editors (CONTRIBUTING.md has the fast loop's time and the full suite's).
_SLOW = ("slow",)
MODULE_MARKERS: dict[str, tuple[str, ...]] = {
    "test_editors": ("editors", "slow"),
    "test_vscode_extension": ("editors", "slow"),
    "test_real_models": ("real_models", "slow"),
    "test_optimum_exports": ("real_models", "slow"),
    "test_engine_truth": ("real_models", "slow"),  # 73
    "test_orphan_value_info": ("real_models", "slow"),  # 24
    "test_baked_batch": ("real_models",),
    "test_scoped_names": ("real_models",),
    "test_graph_groups": ("real_models",),  # PP-OCRv4 det and the committed GPT-2 export
    "test_fix_proofs": ("real_models", "slow"),  # 32: every rule fixture and committed export, judged by ORT
    "test_pinned_cut": ("real_models", "slow"),  # every rule fixture and committed export linted and fixed twice
    "test_loop_state": ("real_models",),  # the committed TorchScript and tf2onnx Loop exports
    "test_if_branches": ("real_models",),  # the committed optimum T5 and Whisper merged decoders
    "test_repeated_findings": ("real_models",),  # the committed optimum T5 merged decoder
    "test_tool_verdicts": ("real_models",),  # silero VAD through onnxslim
    "test_value_set_dims": ("real_models",),  # the committed TopK and Resize exports with value inputs
    "test_conformance": _SLOW,  # 25: ~1,900 models generated from the installed onnx, linted and fixed
    "test_hostile_inputs": _SLOW,  # 54: quantize runs in real processes
    "test_server_hostile": _SLOW,  # 24: a language server per test
    "test_quantize": ("quantize", "real_models", "slow"),
    # builds a wheel and a virtual environment, pre-commit's environment, runs actionlint; 200 fuzz runs
    "test_release": _SLOW, "test_precommit": _SLOW, "test_github_action": _SLOW, "test_fuzz": _SLOW,
    "test_add_rule": _SLOW,  # 13: a scratch checkout and the completeness test run in it
    # measured alone, wall seconds under a load of 5 to 8 on 2 cores (90, 120: stopped there)
    "test_benchmarks_smoke": _SLOW,  # 120
    "test_api": _SLOW,  # 90
    "test_bad_input": _SLOW,  # 90
    "test_cli": _SLOW,  # 90
    "test_server": _SLOW,  # 90
    "test_shard": _SLOW,  # 86
    "test_docs_and_examples": _SLOW,  # 79
    "test_server_trust": _SLOW,  # 62
    "test_inference": _SLOW,  # 52
    "test_server_reliability": _SLOW,  # 49
    "test_consequences": _SLOW,  # 43
    "test_fix_model": _SLOW,  # 41
    "test_hostile_writes": _SLOW,  # 39
    "test_diff": _SLOW,  # 38
    "test_readiness": _SLOW,  # 37
    "test_sandbox": _SLOW,  # 36
    "test_fix_contract": _SLOW,  # 35
    "test_root_cause": _SLOW,  # 33
    "test_probe_data": _SLOW,  # 33
    "test_server_footprint": _SLOW,  # 26
    "test_write_faults": _SLOW,  # 26
    "test_rules": _SLOW,  # 23
    "test_neighbourhood": _SLOW,  # 17
    "test_modelopt_ports": _SLOW,  # 17
    "test_server_quantize_concurrency": ("quantize", "slow"),  # 22: six quantize runs in one server, two at once
    "test_private_caches": _SLOW,  # 16
    "test_budget": _SLOW,  # 15
    "test_server_writes": _SLOW,  # 14
    "test_server_restart": _SLOW,  # 11-15: a 100k-node chain linted by two servers in turn
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for marker in MODULE_MARKERS.get(item.path.stem, ()):
            item.add_marker(marker)
