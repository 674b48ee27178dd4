"""Every rule module is wired in everywhere a rule must be (as ruff checks its rule modules).

A module ``onnx_lint/rules/olNNN_*.py`` that the registry does not list would silently never run;
one without its docs sections, its generated page, its fixture row or its snapshot would be a rule
no user can read about or no test holds. ``scripts/add_rule.py`` creates all but the snapshot, which
the first run of ``tests/test_rule_fixtures.py`` writes for review.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
from pathlib import Path

import pytest
from rule_fixtures import FIXTURES
from snapshot import SNAPSHOTS

from onnx_lint.lint.rule_api import Rule
from onnx_lint.rules import ALL_RULES, RULES_BY_CODE

ROOT = Path(__file__).resolve().parent.parent
RULES_DIR = ROOT / "onnx_lint" / "rules"
MODULES = sorted(RULES_DIR.glob("ol[0-9][0-9][0-9]_*.py"))
# The sections every rule's docstring has, in this order (docs/rules/<code>.md shows them).
SECTIONS = ("### What it does", "### Why does this matter?", "### Example", "### Fix safety")


def _code(module: Path) -> str:
    return module.name[:5].upper()


def _rule_classes(module: Path) -> list[type[Rule]]:
    loaded = importlib.import_module(f"onnx_lint.rules.{module.stem}")
    return [c for c in vars(loaded).values()
            if inspect.isclass(c) and issubclass(c, Rule) and c.__module__ == loaded.__name__]


def _generate_docs():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        return importlib.import_module("generate_docs")
    finally:
        sys.path.remove(str(ROOT / "scripts"))


BY_CODE = {_code(m): m for m in MODULES}
CODES = sorted(BY_CODE)


def test_module_names_are_unique_per_code():
    assert len(BY_CODE) == len(MODULES), [m.name for m in MODULES]


@pytest.mark.parametrize("code", CODES)
def test_is_registered(code):
    module = BY_CODE[code]
    [rule_class] = _rule_classes(module)
    assert rule_class.code == code, f"{module.name} defines {rule_class.code}"
    assert isinstance(RULES_BY_CODE.get(code), rule_class), (
        f"{module.name} is not in onnx_lint/rules/registry.py's ALL_RULES: it would never run")


def test_every_registered_rule_has_its_own_module():
    assert [rule.code for rule in ALL_RULES] == CODES
    for rule in ALL_RULES:
        assert Path(inspect.getfile(type(rule))) == BY_CODE[rule.code], rule.code


@pytest.mark.parametrize("code", CODES)
def test_is_documented(code):
    module = BY_CODE[code]
    docstring = ast.get_docstring(ast.parse(module.read_text(encoding="utf-8"))) or ""
    [rule_class] = _rule_classes(module)
    heading = docstring.partition("\n")[0]
    assert re.fullmatch(rf"## {rule_class.name} \((\w+, )?{code}\)", heading), f"{module.name}: {heading!r}"
    where = [docstring.find(f"\n{section}\n") for section in SECTIONS]
    missing = [section for section, at in zip(SECTIONS, where) if at < 0]
    assert not missing, f"{module.name} lacks {missing}"
    assert where == sorted(where), f"{module.name}: sections out of order"
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule_class.name), rule_class.name


@pytest.mark.parametrize("code", CODES)
def test_has_its_generated_docs_page(code):
    page = ROOT / "docs" / "rules" / f"{code}.md"
    assert page.exists(), f"no {page.relative_to(ROOT)}: run python scripts/generate_docs.py"
    assert page.read_text() == _generate_docs().rule_page(RULES_BY_CODE[code]), (
        f"{page.relative_to(ROOT)} is stale: run python scripts/generate_docs.py")


@pytest.mark.parametrize("code", CODES)
def test_has_a_fixture_row(code):
    assert code in FIXTURES, f"no row for {code} in tests/rule_fixtures.py (bad model, healthy twin, codes)"
    assert code in FIXTURES[code].codes, f"{code}'s bad model must give {code}"


@pytest.mark.parametrize("code", CODES)
def test_has_a_snapshot(code):
    snapshot = SNAPSHOTS / "rules" / f"{code}.txt"
    assert snapshot.exists(), (f"no {snapshot.relative_to(ROOT)}: run ONNX_LINT_UPDATE_SNAPSHOTS=1 python -m pytest "
                               f"tests/test_rule_fixtures.py -k {code}, then review it")
