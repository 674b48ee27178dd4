"""``--output-format junit``: JUnit XML, one testsuite per file, for CI test reporters.

Errors and warnings fail the build, so they are ``<failure>``s; info findings
do not, so they are ``<skipped>`` testcases that still show up in the report.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from onnx_lint.formats.escape import safe_text
from onnx_lint.lint.diagnostics import Diagnostic

if TYPE_CHECKING:
    from onnx_lint.formats import RuleDoc

# Characters XML 1.0 cannot carry at all, even escaped; names in a model may hold them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    """Text from the model as XML can carry it with no line of its own: controls and bidi characters
    escaped (``safe_text``: no newline survives), then what XML 1.0 cannot hold at all."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", safe_text(text))


def _suite(file: str, items: list[Diagnostic]) -> ET.Element:
    failures = sum(1 for d in items if d.severity.fails)
    suite = ET.Element("testsuite", name=_xml_text(file), tests=str(len(items)), failures=str(failures),
                       errors="0", skipped=str(len(items) - failures))
    for d in items:
        case = ET.SubElement(suite, "testcase", name=_xml_text(f"{d.code} {d.location.display()}"),
                             classname=_xml_text(file))
        if d.severity.fails:
            failure = ET.SubElement(case, "failure", message=_xml_text(d.message), type=d.code)
            failure.text = _xml_text(f"{d.code} {d.name} ({d.severity.value}) at {d.location.display()}: {d.message}")
        else:
            ET.SubElement(case, "skipped", message=_xml_text(d.message))
    return suite


def render_junit(diagnostics: list[Diagnostic], *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> str:
    """``<testsuites name="onnx-lint">`` with one testsuite per file, in first-seen order."""
    from onnx_lint.formats import relative_path

    by_file: dict[str, list[Diagnostic]] = {}
    for d in diagnostics:
        by_file.setdefault(relative_path(d.file, root), []).append(d)
    failures = sum(1 for d in diagnostics if d.severity.fails)
    suites = ET.Element("testsuites", name="onnx-lint", tests=str(len(diagnostics)), failures=str(failures),
                        errors="0", skipped=str(len(diagnostics) - failures))
    suites.extend(_suite(file, items) for file, items in by_file.items())
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
