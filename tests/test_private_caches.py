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


def _forged_facts(folder: Path) -> Path:
    """Facts that say ONNX Runtime loads no IR above 3: every model would fail OL106."""
    onnxruntime = pytest.importorskip("onnxruntime")

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


def test_the_temp_folder_it_creates_is_private_and_holds_the_facts(tmp_path):
    pytest.importorskip("onnxruntime")
    folder = _shared_tmp(tmp_path)
    assert _check(tmp_path, _healthy(tmp_path)) == []
    info = os.lstat(folder)
    assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700
    [stored] = folder.iterdir()
    assert json.loads(stored.read_text())["max_ir_version"] >= 10


# -- the project cache ------------------------------------------------------------------------------------
def _repo(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A checkout with a model that has a finding, and a folder outside it that links may point at."""
    repo = tmp_path / "repo"
    repo.mkdir()
    model = repo / "m.onnx"
    onnx.save(defects.stale_rank0_output(), model)
    outside = tmp_path / "outside"
    outside.mkdir()
    return repo, model, outside


def _codes(run) -> list[str]:
    return [d["code"] for d in run.json()]


def _cached_check(cli, repo: Path, model: Path):
    run = cli("check", str(model), "--output-format", "json", "--select", "OL001", cwd=repo)
    assert run.code == 1, run.err
    return run


def _everything(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_committed_cache_folder_symlink_receives_no_write(cli, tmp_path):
    repo, model, outside = _repo(tmp_path)
    (repo / ".onnx-lint-cache").symlink_to(outside, target_is_directory=True)
    for _ in range(2):  # a second run would read what the first wrote
        assert _codes(_cached_check(cli, repo, model)) == ["OL001"]
    assert _everything(outside) == [], "the cache wrote through the link"


def test_a_symlinked_version_folder_receives_no_write(cli, tmp_path):
    import onnx_lint

    repo, model, outside = _repo(tmp_path)
    (repo / ".onnx-lint-cache").mkdir()
    (repo / ".onnx-lint-cache" / onnx_lint.__version__).symlink_to(outside, target_is_directory=True)
    _cached_check(cli, repo, model)
    assert _everything(outside) == []


def test_a_dangling_gitignore_symlink_is_not_followed(cli, tmp_path):
    repo, model, outside = _repo(tmp_path)
    (repo / ".onnx-lint-cache").mkdir()
    (repo / ".onnx-lint-cache" / ".gitignore").symlink_to(outside / "created-by-onnx-lint")
    _cached_check(cli, repo, model)
    assert _everything(outside) == [], "check created the file the link points to"
    assert any(p.suffix == ".json" for p in (repo / ".onnx-lint-cache").rglob("*")), "the cache itself still works"


def _the_entry(repo: Path) -> Path:
    [entry] = [p for p in (repo / ".onnx-lint-cache").rglob("*.json")]
    return entry


def _saying_nothing(text: str) -> str:
    """The entry, hand-edited to say the model has no findings (its other bytes as they were)."""
    import re

    edited = re.sub(r'"diagnostics": \[.*\], "external"', '"diagnostics": [], "external"', text, flags=re.S)
    assert edited != text
    return edited


def test_a_hand_edited_cache_entry_is_ignored(cli, tmp_path):
    repo, model, _outside = _repo(tmp_path)
    _cached_check(cli, repo, model)
    entry = _the_entry(repo)
    entry.write_text(_saying_nothing(entry.read_text()))
    assert _codes(_cached_check(cli, repo, model)) == ["OL001"], "a forged entry hid the finding"


def test_a_truncated_cache_entry_is_ignored(cli, tmp_path):
    repo, model, _outside = _repo(tmp_path)
    _cached_check(cli, repo, model)
    entry = _the_entry(repo)
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])
    assert _codes(_cached_check(cli, repo, model)) == ["OL001"]


def test_a_symlinked_cache_entry_is_not_read(cli, tmp_path):
    """An entry replaced by a link to a forged file (valid checksum) elsewhere: a miss, and not written through."""
    repo, model, outside = _repo(tmp_path)
    _cached_check(cli, repo, model)
    entry = _the_entry(repo)
    text = entry.read_text()
    _digest, _, body = text.partition("\n")
    forged_body = _saying_nothing(body)
    forged = outside / "forged.json"
    import hashlib

    forged.write_text(hashlib.sha256(forged_body.encode()).hexdigest() + "\n" + forged_body)
    before = forged.read_text()
    entry.unlink()
    entry.symlink_to(forged)
    assert _codes(_cached_check(cli, repo, model)) == ["OL001"]
    assert forged.read_text() == before
