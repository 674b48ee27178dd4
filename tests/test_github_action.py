"""The GitHub Action (action.yml) and the documented workflows: valid for actionlint, and its steps work.

actionlint checks a workflow's ``uses: ./`` step against the action's own metadata (its inputs),
so the documented workflows are checked with ``onnx-lint/onnx-lint@vX`` pointed at this checkout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
import yaml
from conftest import REPO

import onnx_lint
from examples import defects

WORKFLOWS = ("github-workflow.yml", "github-workflow-matrix.yml")


def _actionlint() -> str:
    found = shutil.which("actionlint", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        pytest.fail("actionlint is not installed: pip install -e '.[test]'")
    return found


def _repo_with_workflows(folder: Path) -> Path:
    """A git repository holding action.yml and the documented workflows, which use it as ``./``."""
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    shutil.copy2(REPO / "action.yml", folder / "action.yml")
    workflows = folder / ".github" / "workflows"
    workflows.mkdir(parents=True)
    for name in WORKFLOWS:
        text = (REPO / "docs" / "examples" / name).read_text()
        assert re.search(r"uses: onnx-lint/onnx-lint@v[0-9.]+\n", text), name
        (workflows / name).write_text(re.sub(r"onnx-lint/onnx-lint@v[0-9.]+", "./", text))
    return folder


def _lint(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_actionlint(), "-no-color"], cwd=folder, capture_output=True, text=True, timeout=120)


def test_the_action_and_the_documented_workflows_pass_actionlint(tmp_path):
    done = _lint(_repo_with_workflows(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_holds_the_workflows_to_the_actions_inputs(tmp_path):
    folder = _repo_with_workflows(tmp_path)
    workflow = folder / ".github" / "workflows" / WORKFLOWS[0]
    workflow.write_text(workflow.read_text().replace("args:", "arguments:"))
    done = _lint(folder)
    assert done.returncode == 1
    assert 'input "arguments" is not defined in action "onnx-lint"' in done.stdout


def test_the_action_installs_the_release_it_belongs_to():
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert action["inputs"]["version"]["default"] == onnx_lint.__version__
    [install] = [s for s in action["runs"]["steps"] if s.get("name") == "Install onnx-lint"]
    assert '"$spec==$ONNX_LINT_VERSION"' in install["run"]


def _run_step(step: dict, inputs: dict[str, str], cwd: Path, bin_dir: Path) -> subprocess.CompletedProcess[str]:
    """A composite step's shell script, as the runner runs it: bash, with its env from the inputs."""
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    for key, value in step.get("env", {}).items():
        env[key] = re.sub(r"\$\{\{ inputs\.([a-z-]+) \}\}", lambda m: inputs[m.group(1)], value)
    return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_actions_steps_write_sarif_and_annotate_the_findings(tmp_path):
    models = tmp_path / "work" / "models"
    models.mkdir(parents=True)
    onnx.save_model(defects.stale_rank0_output(), models / "stale.onnx")
    onnx.save_model(defects.healthy_matmul(), models / "healthy.onnx")
    bin_dir = tmp_path / "bin"  # `onnx-lint` as the install step leaves it on PATH: this checkout's
    bin_dir.mkdir()
    shim = bin_dir / "onnx-lint"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m onnx_lint "$@"\n')
    shim.chmod(0o755)
    action = yaml.safe_load((REPO / "action.yml").read_text())
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update(paths="models/", args="--ignore OL007")
    steps = {s["name"]: s for s in action["runs"]["steps"] if "run" in s}

    sarif = _run_step(steps["Write SARIF"], inputs, tmp_path / "work", bin_dir)
    assert sarif.returncode == 0, sarif.stderr
    report = json.loads((tmp_path / "work" / "onnx-lint.sarif").read_text())
    [result] = report["runs"][0]["results"]
    assert result["ruleId"] == "OL001"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "models/stale.onnx"

    annotate = _run_step(steps["Annotate"], inputs, tmp_path / "work", bin_dir)
    assert annotate.returncode == 1  # the job fails while a finding remains
    assert annotate.stdout.startswith("::error title=onnx-lint (OL001),file=models/stale.onnx,line=1::"), \
        annotate.stdout
    assert "healthy.onnx" not in annotate.stdout
