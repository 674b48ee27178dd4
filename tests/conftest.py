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
