"""The pre-commit hooks (.pre-commit-hooks.yaml), run by the real pre-commit with ``try-repo``.

``try-repo`` installs the hook repository into a virtual environment of its own. The test
hands it a committed snapshot of this checkout (the package, its metadata and the hooks file),
so it tests the working tree in any state, and keeps it offline: the environment sees the
installed dependencies (``VIRTUALENV_SYSTEM_SITE_PACKAGES``) and pip may not use an index.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from conftest import REPO

from examples import defects

pytest.importorskip("pre_commit")

SNAPSHOT = ("onnx_lint", "pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml")
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def _committed_repo(folder: Path) -> Path:
    _git(folder, "init", "-q", "-b", "main")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "snapshot")
    return folder


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hook-repo")
    for name in SNAPSHOT:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__", ".onnx-lint-cache"))
        else:
            shutil.copy2(source, folder / name)
    return _committed_repo(folder)


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")  # the hook environments, shared by the tests


def _try_repo(hook_repo: Path, hook: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}  # the hook runs its own install
    env.update(GIT_ENV, PRE_COMMIT_HOME=str(home), VIRTUALENV_SYSTEM_SITE_PACKAGES="1", PIP_NO_INDEX="1",
               PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1", NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), hook, "--all-files",
                           "--color", "never"], cwd=cwd, capture_output=True, text=True, env=env, timeout=900)


def test_the_hooks_lint_then_fix_a_defective_model_and_leave_a_healthy_one(hook_repo, home, tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    onnx.save_model(defects.stale_rank0_output(), models / "stale.onnx")
    onnx.save_model(defects.healthy_matmul(), models / "healthy.onnx")
    (models / "notes.txt").write_text("not a model: the hooks only see *.onnx\n")
    _committed_repo(models)
    healthy = (models / "healthy.onnx").read_bytes()

    lint = _try_repo(hook_repo, "onnx-lint", models, home)
    assert lint.returncode == 1, lint.stdout + lint.stderr
    assert "stale.onnx:graph/output[0] 'Y': OL001" in lint.stdout
    assert "healthy.onnx" not in lint.stdout and "notes.txt" not in lint.stdout
    assert "Found 1 problem in 1 of 2 files checked." in lint.stdout
    # What ran is the hook repository, installed into an environment of pre-commit's own.
    assert "Installing environment for" in lint.stdout + lint.stderr

    fix = _try_repo(hook_repo, "onnx-lint-fix", models, home)
    # pre-commit fails a hook that modified files, so that the fix is reviewed and staged.
    assert fix.returncode == 1 and "files were modified by this hook" in fix.stdout, fix.stdout + fix.stderr
    dims = [d.dim_value for d in onnx.load(models / "stale.onnx").graph.output[0].type.tensor_type.shape.dim]
    assert dims == [3, 5]
    assert (models / "healthy.onnx").read_bytes() == healthy

    again = _try_repo(hook_repo, "onnx-lint", models, home)
    assert again.returncode == 0 and "Passed" in again.stdout, again.stdout + again.stderr
