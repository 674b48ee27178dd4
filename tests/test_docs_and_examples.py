"""The README's promises: generated rule docs are current, the set-up commands are what CI runs,
and the examples show every rule firing and being fixed."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

from conftest import REPO, run_process


def _setup_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section, re.S)


def test_rule_docs_and_readme_table_are_generated_from_the_code():
    done = subprocess.run([sys.executable, "scripts/generate_docs.py", "--check"], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_docs_site_builds_strictly_with_a_page_for_every_rule_link(tmp_path):
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    from onnx_lint.base.links import DOCS_BASE_URL
    from onnx_lint.rules.catalog import CATALOG
    for code, _name, _summary, _severity, _fixable, url, _availability in CATALOG:
        # The link SARIF, hovers and `onnx-lint rule` give lands on a built page about that rule.
        assert url.startswith(DOCS_BASE_URL), url
        page = site / url.removeprefix(DOCS_BASE_URL) / "index.html"
        assert code in page.read_text(), code
    # The security page is SECURITY.md itself, not a copy that drifts.
    assert "What it reads" in (site / "security" / "index.html").read_text()


def test_readme_is_a_front_door_that_links_to_the_site():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 300
    from onnx_lint.base.links import DOCS_BASE_URL
    assert text.count(DOCS_BASE_URL) >= 10


def test_no_code_or_doc_cites_the_specification_by_number():
    # The design lives in docs/design.md, in the project's own words.
    pattern = "SPEC" + r" [0-9]"
    found = subprocess.run(["git", "grep", "-n", "-E", pattern, "--", ".", ":!tests/test_docs_and_examples.py"],
                           cwd=REPO, capture_output=True, text=True)
    assert found.stdout == "", found.stdout


def test_readme_starts_with_two_setup_commands_and_ci_runs_the_second():
    commands = _setup_commands()
    assert len(commands) == 2
    ci = (REPO / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == commands[1]


def test_examples_show_every_rule_firing_and_being_fixed(tmp_path):
    models = tmp_path / "models"
    done = subprocess.run([sys.executable, str(REPO / "examples" / "make_examples.py"), str(models)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    before = run_process("check", str(models), "--output-format", "json", "--no-cache", cwd=tmp_path)
    assert before.code == 1
    import json

    from examples.readiness import READINESS
    codes = {d["code"] for d in json.loads(before.out)}
    readiness = set().union(*(c for _b, _w, c in READINESS.values()))
    assert codes >= {"OL001", "OL002", "OL003", "OL004", "OL005", "OL006", "OL007"} | readiness
    demo = tmp_path / "demo"
    shutil.copytree(models, demo)
    after = run_process("check", "--fix", str(demo), "--no-cache", "--output-format", "json", cwd=tmp_path)
    remaining = [d for d in json.loads(after.out) if not (d["fix"] and d["fix"]["applied"])]
    assert {d["code"] for d in remaining} <= {"OL007"} | readiness, remaining
    assert not [d for d in remaining if d["fix"]], "something fixable was left"
    assert "OL103" not in {d["code"] for d in remaining}
    assert after.code == 1  # the readiness examples without a fix remain
    # The originals were not touched: --fix worked on the copy.
    assert run_process("check", str(models), "--no-cache", "-q", cwd=tmp_path).code == 1
