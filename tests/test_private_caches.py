"""Caches are ours and private (issue 23, findings 6, 7 and 10).

ONNX Runtime's facts are read only from a per-user folder that is a real directory of this
user with no group/other write; the project cache writes nothing through a symbolic link and
ignores an entry whose checksum does not match its content.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from examples import defects

pytest.importorskip("onnxruntime")


def _forged_facts(folder: Path) -> Path:
    """Facts that say ONNX Runtime loads no IR above 3: every model would fail OL106."""
    import onnxruntime

    folder.mkdir(parents=True, exist_ok=True)
    key = f"ort-facts-{onnxruntime.__version__}-onnx-{onnx.__version__}-v1.json"
    forged = folder / key
    forged.write_text(json.dumps({"format": 1, "version": onnxruntime.__version__, "max_ir_version": 3,
                                  "max_opsets": {"": 1}, "kernels": []}))
    return forged


def _check(tmp_path: Path, model: Path) -> list[dict]:
    """``check`` in a real process with no usable user cache (XDG_CACHE_HOME is a file) and TMPDIR in tmp_path."""
    blocker = tmp_path / "no-cache-here"
    blocker.write_text("")
    env = {**os.environ, "XDG_CACHE_HOME": str(blocker), "TMPDIR": str(tmp_path / "tmp")}
    done = subprocess.run([sys.executable, "-m", "onnx_lint", "check", str(model), "--no-cache",
                           "--output-format", "json", "--select", "OL106"], capture_output=True, text=True,
                          timeout=300, env=env, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _shared_tmp(tmp_path: Path) -> Path:
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return tmp_path / "tmp" / f"onnx-lint-{os.getuid()}"


def _healthy(tmp_path: Path) -> Path:
    path = tmp_path / "m.onnx"
    onnx.save(defects.healthy_matmul(), path)
    return path


def _world_writable(folder: Path) -> None:
    os.chmod(folder, 0o777)


def _symlinked(folder: Path) -> None:
    real = folder.with_name("elsewhere")
    folder.rename(real)
    folder.symlink_to(real)


def _someone_elses(folder: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    os.chown(folder, 4321, 4321)
    os.chmod(folder, 0o700)


@pytest.mark.parametrize("forge", [_world_writable, _symlinked, _someone_elses],
                         ids=["mode-0777", "symlink", "other-owner"])
def test_forged_runtime_facts_in_a_shared_temp_folder_are_never_trusted(tmp_path, forge):
    folder = _shared_tmp(tmp_path)
    forged = _forged_facts(folder)
    forge(folder)
    found = _check(tmp_path, _healthy(tmp_path))
    assert found == [], f"forged facts were trusted: {found}"
    assert json.loads(forged.read_text())["max_ir_version"] == 3  # refused, not overwritten through it either


def test_the_temp_folder_it_creates_is_private_and_reused(tmp_path):
    folder = _shared_tmp(tmp_path)
    assert _check(tmp_path, _healthy(tmp_path)) == []
    info = os.lstat(folder)
    assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700
    [stored] = folder.iterdir()
    assert json.loads(stored.read_text())["max_ir_version"] >= 10
