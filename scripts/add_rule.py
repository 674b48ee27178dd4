"""Start a new rule: its module with the docs sections, its place in the registry, its fixture row.

    python scripts/add_rule.py OL111 constant-folded-shape [--summary "One line: what it finds"]

Writes ``onnx_lint/rules/ol111_constant_folded_shape.py`` (a rule that finds nothing yet), registers it
in code order in ``onnx_lint/rules/registry.py``, adds a row and a model builder to
``tests/rule_fixtures.py``, regenerates the docs (``scripts/generate_docs.py``) and prints what to fill
in next. The files it writes are those of the checkout it lies in, so a copy can be tried on safely.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "onnx_lint" / "rules"
REGISTRY = RULES / "registry.py"
FIXTURES = ROOT / "tests" / "rule_fixtures.py"
FIXTURE_MARKER = "    # add_rule: new rows go above this line\n"
TABLE_START = "# code -> its fixture, in code order\n"

MODULE = '''"""## {name} ({code})

### What it does
Say what the rule flags, and where (graph inputs, outputs, value_info, nodes; subgraphs too?).

### Why does this matter?
Say which tool then fails or misbehaves (the checker, ONNX Runtime, an FP16 converter, a quantizer)
and how a user would notice.

### Example
```
the smallest declaration or node that shows it
```
gives `the message the rule prints`.

### Fix safety
No fix: say why, or declare ``fix_availability`` and say what the fix changes and why that is safe.
"""

from __future__ import annotations

from collections.abc import Iterable

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.diagnostics import Diagnostic, Severity
from onnx_lint.lint.rule_api import Rule


class {cls}(Rule):
    code = "{code}"
    name = "{name}"
    severity = Severity.WARNING
    summary = {summary!r}

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        # yield self.report(ctx, message, Location(...)) per finding; ol105_duplicate_node_name.py is a short one
        return ()
'''

BUILDER = '''# -- {code}: {name} {rule_line}
def {func}(bad: bool = True) -> onnx.ModelProto:
    """{name}: the bad model (``bad``), or its healthy twin that differs only there."""
    raise NotImplementedError("{code}: build the model that shows the defect and its healthy twin")


'''

NEXT = """Added {code} ({name}):
  {module}
  {registry} (registered)
  {fixtures} (row and builder {func})
  docs/rules/{code}.md, docs/rules/index.md, README.md, mkdocs.yml, onnx_lint/rules/catalog.py (generated)

Next:
  1. Write {func}() in tests/rule_fixtures.py: the bad model and its healthy twin.
  2. Write check() and the docstring's sections in {module}; set severity (and fix_availability).
  3. python scripts/generate_docs.py   # again, after the docstring or summary changed
  4. ONNX_LINT_UPDATE_SNAPSHOTS=1 PYTHONPATH=$PWD python -m pytest tests/test_rule_fixtures.py -k {code}
     then read tests/snapshots/rules/{code}.txt: it is what users will see.
  5. PYTHONPATH=$PWD python -m pytest tests/test_rule_completeness.py tests/test_rule_fixtures.py -k {code}
"""


def _class_name(name: str) -> str:
    return "".join(word.capitalize() for word in name.split("-"))


def _registry_with(text: str, code: str, module: str, cls: str) -> str:
    """``text`` (registry.py) with the import and the instance of the new rule, both in code order."""
    lines = text.splitlines(keepends=True)
    imports = [i for i, line in enumerate(lines) if line.startswith("from onnx_lint.rules.ol")]
    codes = [lines[i].removeprefix("from onnx_lint.rules.")[:5].upper() for i in imports]
    before = sum(1 for c in codes if c < code)  # rules that come before the new one
    start = lines.index("ALL_RULES: tuple[Rule, ...] = (\n")
    end = lines.index(")\n", start)
    entries = list(range(start + 1, end))
    if len(entries) != len(imports):
        raise SystemExit("registry.py: one import and one ALL_RULES entry per rule expected; add it by hand")
    lines.insert(entries[before] if before < len(entries) else end, f"    {cls}(),\n")
    if before < len(imports):
        at = imports[before]  # before the next rule's import
    else:  # after the last one, which may wrap over lines
        at = imports[-1]
        if lines[at].rstrip().endswith("("):
            at = lines.index(")\n", at)
        at += 1
    line = f"from onnx_lint.rules.{module} import {cls}\n"
    if len(line) > 120:  # wrapped as isort wraps it (ruff's line length)
        line = f"from onnx_lint.rules.{module} import (\n    {cls},\n)\n"
    lines.insert(at, line)
    return "".join(lines)


def _fixtures_with(text: str, code: str, name: str, func: str, rule_line: str) -> str:
    """``text`` (rule_fixtures.py) with the new builder above the table and its row in code order."""
    if TABLE_START not in text or FIXTURE_MARKER not in text:
        raise SystemExit(f"{FIXTURES.name}: the table's markers are gone; add the row by hand")
    builder = BUILDER.format(code=code, name=name, func=func, rule_line=rule_line)
    text = text.replace(TABLE_START, builder + TABLE_START)
    row = f'    "{code}": Fixture(*_twin({func}), _codes("{code}")),\n'
    later = [m.start() for m in re.finditer(r'^    "(OL\d{3})": Fixture\(', text, re.M) if m.group(1) > code]
    at = later[0] if later else text.index(FIXTURE_MARKER)
    return text[:at] + row + text[at:]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="add_rule.py", description=__doc__.partition("\n")[0])
    parser.add_argument("code", help="the new rule's code, e.g. OL111")
    parser.add_argument("name", help="its kebab-case name, e.g. constant-folded-shape")
    parser.add_argument("--summary", default=None, help="one line: what it finds (the rule table shows it)")
    args = parser.parse_args(argv)
    code, name = args.code.upper(), args.name
    if not re.fullmatch(r"OL\d{3}", code):
        parser.error(f"{args.code!r} is not a rule code like OL111")
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name):
        parser.error(f"{name!r} is not a kebab-case name like constant-folded-shape")
    if len(name) > 40:  # users type it (rule, --select by name); the longest so far has 29 characters
        parser.error(f"{name!r} is longer than 40 characters")
    taken = sorted(RULES.glob(f"{code.lower()}_*.py"))
    if taken:
        parser.error(f"{code} is taken by {taken[0].relative_to(ROOT)}")
    if f"{name}.py".replace("-", "_") in {p.name[6:] for p in RULES.glob("ol*_*.py")}:
        parser.error(f"a rule is already named {name}")

    module = f"{code.lower()}_{name.replace('-', '_')}"
    cls, func = _class_name(name), module
    summary = args.summary or f"{name.replace('-', ' ').capitalize()}"
    path = RULES / f"{module}.py"
    path.write_text(MODULE.format(code=code, name=name, cls=cls, summary=summary))
    REGISTRY.write_text(_registry_with(REGISTRY.read_text(), code, module, cls))
    rule_line = "-" * max(3, 96 - len(code) - len(name) - 6)
    FIXTURES.write_text(_fixtures_with(FIXTURES.read_text(), code, name, func, rule_line))
    subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_docs.py")], cwd=ROOT, check=True)
    print(NEXT.format(code=code, name=name, func=func, module=path.relative_to(ROOT),
                      registry=REGISTRY.relative_to(ROOT), fixtures=FIXTURES.relative_to(ROOT)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
