"""``--output-format junit``: JUnit XML, one testsuite per file, for CI test reporters."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from onnx_lint.diagnostics import Diagnostic

if TYPE_CHECKING:
    from onnx_lint.formats import RuleDoc


def render_junit(diagnostics: list[Diagnostic], *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> str:
    from onnx_lint.formats import relative_path

    by_file: dict[str, list[Diagnostic]] = defaultdict(list)
    for d in diagnostics:
        by_file[relative_path(d.file, root)].append(d)
    failures = sum(1 for d in diagnostics if d.severity.fails)
    suites = ET.Element("testsuites", name="onnx-lint", tests=str(len(diagnostics)), failures=str(failures))
    for file, items in by_file.items():
        suite = ET.SubElement(suites, "testsuite", name=file, tests=str(len(items)),
                              failures=str(sum(1 for d in items if d.severity.fails)))
        for d in items:
            case = ET.SubElement(suite, "testcase", name=f"{d.code} {d.location.display()}", classname=file)
            if d.severity.fails:
                failure = ET.SubElement(case, "failure", message=d.message, type=d.code)
                failure.text = f"{d.code} {d.name} ({d.severity.value}): {d.message}"
            else:
                ET.SubElement(case, "skipped", message=d.message)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
