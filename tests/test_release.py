"""Release readiness: one version everywhere, an sdist and a wheel that build, pass ``twine check``,
install into a fresh virtual environment and lint a model there."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import onnx
import pytest
import yaml
from conftest import REPO

import onnx_lint
from examples import defects

VERSION = onnx_lint.__version__


def test_the_package_the_server_the_extension_and_the_action_share_one_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)
    pyproject = (REPO / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and 'version = { attr = "onnx_lint.__version__" }' in pyproject
    assert json.loads((REPO / "vscode-extension" / "package.json").read_text())["version"] == VERSION
    assert yaml.safe_load((REPO / "action.yml").read_text())["inputs"]["version"]["default"] == VERSION
    for changelog in (REPO / "CHANGELOG.md", REPO / "vscode-extension" / "CHANGELOG.md"):
        released = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", changelog.read_text(), re.M)
        assert released and released[0] == VERSION, changelog
    # The language server says the same in its `initialize` reply.
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                          "params": {"processId": None, "rootUri": None, "capabilities": {}}}).encode()
    server = subprocess.Popen([sys.executable, "-m", "onnx_lint", "server"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO)
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(request) + request)
        server.stdin.flush()
        length = 0
        while (line := server.stdout.readline().strip()):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        reply = json.loads(server.stdout.read(length))
    finally:
        server.kill()
        server.wait()
    assert reply["result"]["serverInfo"] == {"name": "onnx-lint", "version": VERSION}


def _source_tree(target: Path) -> Path:
    """The files a fresh clone would have (tracked, plus new files not ignored), copied to ``target``."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file() and not name.startswith(("vscode-extension/", "tests/", "benchmarks/")):
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """``python -m build`` (sdist, then the wheel built from it), offline: the installed backend, no index."""
    source = _source_tree(tmp_path_factory.mktemp("source"))
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_the_sdist_and_the_wheel_build_and_pass_twine_check(dist):
    sdist, = dist.glob(f"onnx_lint-{VERSION}.tar.gz")
    wheel, = dist.glob(f"onnx_lint-{VERSION}-py3-none-any.whl")
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.count("PASSED") == 2, done.stdout + done.stderr
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(f"onnx_lint-{VERSION}.dist-info/METADATA").decode()
    assert {"onnx_lint/py.typed", "onnx_lint/api.py", "onnx_lint/rules/catalog.py"} <= names
    assert not any(n.startswith(("tests/", "examples/", "docs/")) for n in names)
    assert "Project-URL: Documentation, https://onnx-lint.github.io/onnx-lint/" in metadata
    assert "Classifier: Typing :: Typed" in metadata and f"Version: {VERSION}" in metadata
    with tarfile.open(sdist) as archive:
        members = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
    assert {"pyproject.toml", "README.md", "LICENSE", "onnx_lint/__init__.py"} <= members


def test_the_wheel_installed_in_a_fresh_venv_lints_a_model(dist, tmp_path):
    wheel, = dist.glob("*.whl")
    venv = tmp_path / "venv"
    # The dependencies (onnx, numpy, ...) come from this interpreter's site-packages: no download.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--no-index",
                           "--disable-pip-version-check", "-q", str(wheel)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    work = tmp_path / "work"
    work.mkdir()
    onnx.save_model(defects.stale_rank0_output(), work / "stale.onnx")
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import onnx_lint; print(onnx_lint.__file__)"],
                           capture_output=True, text=True, env=env, cwd=work)
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr  # the wheel, not this checkout
    check = subprocess.run([str(venv / "bin" / "onnx-lint"), "check", "--no-cache", "stale.onnx"],
                           capture_output=True, text=True, env=env, cwd=work, timeout=300)
    assert check.returncode == 1, check.stderr
    assert "stale.onnx:graph/output[0] 'Y': OL001 [*]" in check.stdout
    version = subprocess.run([str(venv / "bin" / "onnx-lint"), "--version"], capture_output=True, text=True, env=env)
    assert version.stdout.strip() == f"onnx-lint {VERSION}"


def test_the_extension_icon_is_drawn_by_code_and_current():
    done = subprocess.run([sys.executable, "scripts/make_icon.py", "--check"], cwd=REPO, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout
    icon = (REPO / "vscode-extension" / "media" / "icon.png").read_bytes()
    assert icon[:8] == b"\x89PNG\r\n\x1a\n" and icon[16:24] == (128).to_bytes(4, "big") * 2
    assert json.loads((REPO / "vscode-extension" / "package.json").read_text())["icon"] == "media/icon.png"
