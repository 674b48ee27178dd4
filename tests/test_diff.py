"""``check --diff`` (issue 14): weights shown by size, one well-formed diff per file, accepted by patch tools.

The diff is of the models' text forms (``onnx_lint.model.text_form.model_text`` plus a
final newline). The tests write those text forms under the models' names and
really apply the printed diff with GNU ``patch`` and ``git apply``; the result
must be the text form of what ``--fix`` writes.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import run_process
from onnx import numpy_helper

from examples import defects
from onnx_lint.model.text_form import model_text


def _text_form(path: Path) -> str:
    return model_text(onnx.load(path, load_external_data=False)) + "\n"


def _with_big_weight() -> onnx.ModelProto:
    """The stale rank-0 output model with a 256x256 weight beside it (65,536 values)."""
    model = defects.stale_rank0_output()
    big = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    model.graph.initializer.append(numpy_helper.from_array(big, "big"))
    return model


@pytest.fixture
def project(tmp_path) -> Path:
    """Two stale models under ``models/`` (one with a large weight), the working folder of each run."""
    models = tmp_path / "models"
    models.mkdir()
    onnx.save(_with_big_weight(), models / "a.onnx")
    onnx.save(defects.stale_value_info(), models / "b.onnx")
    return tmp_path


def _diff(project: Path) -> str:
    run = run_process("check", "--diff", "--no-cache", "-q", "models/a.onnx", "models/b.onnx", cwd=project)
    assert run.code == 1, run.err
    return run.out


def test_weights_are_shown_by_size(project):
    diff = _diff(project)
    assert 'float[256,256] big = ["not shown": "262,144 bytes"]' in diff
    assert max(len(line) for line in diff.splitlines()) < 500
    assert len(diff) < 4000
    assert "+example (float[3,4] X) => (float[3,5] Y)" in diff


def test_each_file_has_its_own_header_on_its_own_line(project):
    diff = _diff(project)
    assert diff.endswith("\n")
    headers = [line for line in diff.splitlines() if line.startswith(("--- ", "+++ "))]
    assert headers == ["--- models/a.onnx\t(declared)", "+++ models/a.onnx\t(fixed)",
                       "--- models/b.onnx\t(declared)", "+++ models/b.onnx\t(fixed)"]
    assert "No newline at end of file" not in diff


def _texts(project: Path, where: str, fixed: bool) -> Path:
    """The models' text forms under their own names, as declared or as ``--fix`` writes them."""
    folder = project / where
    shutil.copytree(project / "models", folder / "models")
    if fixed:
        assert run_process("check", "--fix", "--no-cache", "-q", "models", cwd=folder).code == 0
    for path in (folder / "models").glob("*.onnx"):
        path.write_text(_text_form(path))
    return folder


@pytest.mark.parametrize("tool", [["patch", "-p0", "--batch", "--no-backup-if-mismatch"], ["git", "apply", "-p0"]])
def test_patch_tools_apply_the_diff_to_the_text_forms(project, tool):
    diff = _diff(project)
    if shutil.which(tool[0]) is None:
        pytest.skip(f"{tool[0]} is not installed")
    declared = _texts(project, "declared", fixed=False)
    expected = _texts(project, "expected", fixed=True)
    done = subprocess.run(tool, input=diff, text=True, capture_output=True, cwd=declared, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("a.onnx", "b.onnx"):
        assert (declared / "models" / name).read_text() == (expected / "models" / name).read_text()
    assert sorted(p.name for p in (declared / "models").iterdir()) == ["a.onnx", "b.onnx"]


def test_the_textual_view_and_the_diff_share_one_printer(tmp_path):
    """The editor's textual view shows the same text form as ``--diff`` (weights by size)."""
    from onnx_lint.server.text_view import render_view

    model = _with_big_weight()
    assert render_view(model).text == model_text(model)
    assert 'float[256,256] big = ["not shown": "262,144 bytes"]' in render_view(model).text
