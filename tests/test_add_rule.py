"""``scripts/add_rule.py`` on a scratch copy of the checkout: the new rule is registered, documented,
has its generated page and its fixture row, and the completeness test asks for its snapshot only."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

# What add_rule.py, the docs generator and the completeness test read or write.
NEEDED = ("onnx_lint", "scripts", "docs", "examples", "README.md", "mkdocs.yml", "pyproject.toml",
          "tests/conftest.py", "tests/rule_fixtures.py", "tests/snapshot.py", "tests/test_rule_completeness.py",
          "tests/snapshots/rules")


@pytest.fixture
def checkout(tmp_path) -> Path:
    root = tmp_path / "checkout"
    for name in NEEDED:
        source, target = REPO / name, root / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=300)


def test_a_new_rule_is_wired_in_everywhere_but_its_snapshot(checkout):
    added = _run(checkout, "scripts/add_rule.py", "OL111", "constant-folded-shape",
                 "--summary", "A Shape output folded into a constant")
    assert added.returncode == 0, added.stdout + added.stderr
    assert "tests/snapshots/rules/OL111.txt" in added.stdout  # the next steps name the snapshot to review

    module = checkout / "onnx_lint" / "rules" / "ol111_constant_folded_shape.py"
    assert "class ConstantFoldedShape(Rule):" in module.read_text()
    assert "ConstantFoldedShape()" in (checkout / "onnx_lint" / "rules" / "registry.py").read_text()
    assert '"OL111": Fixture(' in (checkout / "tests" / "rule_fixtures.py").read_text()
    # The docs generator picked it up: its page, the table, the site's nav, the catalog, all current.
    page = (checkout / "docs" / "rules" / "OL111.md").read_text()
    assert page.startswith("# OL111: constant-folded-shape\n") and "## Fix safety" in page
    assert "rules/OL111.md" in (checkout / "mkdocs.yml").read_text()
    assert _run(checkout, "scripts/generate_docs.py", "--check").returncode == 0
    listed = _run(checkout, "-m", "onnx_lint", "list-rules")
    assert "constant-folded-shape" in listed.stdout and "A Shape output folded into a constant" in listed.stdout

    # The completeness test sees it, and all it still asks for is the snapshot the fixture test writes.
    done = _run(checkout, "-m", "pytest", "tests/test_rule_completeness.py", "-q", "-p", "no:cacheprovider", "-rf")
    failed = sorted(line.split()[1] for line in done.stdout.splitlines() if line.startswith("FAILED"))
    assert failed == ["tests/test_rule_completeness.py::test_has_a_snapshot[OL111]"], done.stdout
    assert "test_is_registered[OL111]" not in done.stdout

    # What it wrote is lint-clean as it stands.
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "onnx_lint", "tests"], cwd=checkout,
                          capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout


def test_a_taken_code_or_a_bad_name_is_refused_and_nothing_is_written(checkout):
    registry = (checkout / "onnx_lint" / "rules" / "registry.py").read_text()
    for args, says in ((("OL105", "another-name"), "OL105 is taken"),
                       (("OL112", "duplicate-node-name"), "already named duplicate-node-name"),
                       (("OL112", "Not_Kebab"), "not a kebab-case name"), (("L12", "x"), "not a rule code"),
                       (("OL112", "-".join(["word"] * 9)), "longer than 40 characters")):
        done = _run(checkout, "scripts/add_rule.py", *args)
        assert done.returncode == 2 and says in done.stderr, done.stderr
    assert (checkout / "onnx_lint" / "rules" / "registry.py").read_text() == registry
    assert not list((checkout / "onnx_lint" / "rules").glob("ol112_*"))
