"""Real editors as LSP clients: headless Neovim and Emacs eglot open a binary model and fix it.

Both are Debian packages that `.ci/run` installs (`neovim`, `emacs-nox`, `elpa-eglot`); CI sets
ONNX_LINT_REQUIRE_EDITORS=1 so that a missing editor fails there instead of skipping.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from examples import defects

EDITORS = Path(__file__).resolve().parent / "editors"


def _editor(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        if os.environ.get("ONNX_LINT_REQUIRE_EDITORS") == "1":
            pytest.fail(f"{name} is not installed (apt-get install neovim emacs-nox elpa-eglot)")
        pytest.skip(f"{name} is not installed")
    return found


def _drive(command: list[str], model: Path, tmp_path: Path) -> dict:
    result = tmp_path / "result.json"
    env = {**os.environ, "ONNX_LINT_PYTHON": sys.executable, "ONNX_LINT_MODEL": str(model),
           "ONNX_LINT_RESULT": str(result), "HOME": str(tmp_path / "home")}
    (tmp_path / "home").mkdir()
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert result.is_file(), f"the editor wrote no result (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    return json.loads(result.read_text())


def _stale_model(tmp_path: Path) -> Path:
    model = tmp_path / "project" / "stale.onnx"
    model.parent.mkdir()
    onnx.save(defects.stale_rank0_output(), model)
    return model


def _assert_fixed(model: Path) -> None:
    fixed = onnx.load(model)
    onnx.checker.check_model(fixed, full_check=True)
    assert [d.dim_value for d in fixed.graph.output[0].type.tensor_type.shape.dim] == [3, 5]


def test_headless_neovim_shows_the_diagnostic_and_applies_the_quick_fix(tmp_path):
    nvim = _editor("nvim")
    model = _stale_model(tmp_path)
    seen = _drive([nvim, "--headless", "--clean", "-c", f"luafile {EDITORS / 'neovim_fix.lua'}"], model, tmp_path)
    assert "error" not in seen, seen
    [before] = seen["before"]
    assert before["code"] == "OL001" and before["source"] == "onnx-lint" and before["severity"] == 1
    # The finding's own fix first (what the script runs), then the rule's: ignore it here, its docs.
    assert seen["actions"] == ["onnx-lint (OL001): Declare the computed shape [3, 5] on output 'Y'",
                               "Ignore OL001 for this file", "Show documentation for OL001"]
    assert seen["fix"]["written"] is True and seen["steps"][-1] == "cleared" and seen["after"] == 0
    assert seen["exit_code"] == 0  # the server shut down cleanly
    _assert_fixed(model)


def test_emacs_eglot_in_batch_shows_the_diagnostic_in_flymake_and_applies_the_quick_fix(tmp_path):
    emacs = _editor("emacs")
    model = _stale_model(tmp_path)
    seen = _drive([emacs, "--batch", "-Q", "-l", str(EDITORS / "eglot_fix.el")], model, tmp_path)
    assert "error" not in seen, seen
    [shown] = seen["flymake"]
    # The problem first (the location is the entry's place; on a binary model it ends the message).
    assert shown.startswith("onnx-lint [OL001]: graph output 'Y' is declared as a scalar")
    assert "(at graph/output[0] 'Y')" in shown
    # The finding's own fix first (what the script runs), then the rule's: ignore it here, its docs.
    assert seen["actions"] == ["onnx-lint (OL001): Declare the computed shape [3, 5] on output 'Y'",
                               "Ignore OL001 for this file", "Show documentation for OL001"]
    assert seen["fix"]["written"] is True
    assert seen["steps"] == ["connected", "diagnostics", "fixed", "cleared", "shutdown"]
    _assert_fixed(model)
