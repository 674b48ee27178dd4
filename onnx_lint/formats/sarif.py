"""``--output-format sarif``: SARIF 2.1.0 for GitHub code scanning.

A model is a binary file: results point at line 1 (GitHub requires a region),
carry the graph path as a logical location, and have their own fingerprints
(a binary file has no line hash), stable across runs and messages.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import onnx_lint
from onnx_lint.diagnostics import Diagnostic

if TYPE_CHECKING:
    from onnx_lint.formats import RuleDoc

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def fingerprint(d: Diagnostic, relative: str) -> str:
    subject = d.location.tensor or d.location.node or ""
    raw = "\0".join((d.code, relative, d.location.path, subject))
    return hashlib.sha256(raw.encode()).hexdigest()


def _descriptor(doc: RuleDoc) -> dict[str, Any]:
    return {
        "id": doc.code,
        "name": "".join(part.capitalize() for part in doc.name.split("-")),
        "shortDescription": {"text": doc.summary},
        "helpUri": doc.url,
        "defaultConfiguration": {"level": _LEVEL[doc.severity.value]},
        "properties": {"tags": ["onnx", "fixable" if doc.fixable else "no-fix"]},
    }


def render_sarif(diagnostics: list[Diagnostic], *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> str:
    from onnx_lint.formats import relative_path

    codes = sorted({d.code for d in diagnostics})
    index = {code: i for i, code in enumerate(codes)}
    rules = [_descriptor(rule_docs[c]) if c in rule_docs else {"id": c} for c in codes]
    results = []
    for d in diagnostics:
        relative = relative_path(d.file, root)
        subject = d.location.tensor or d.location.node
        results.append({
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": _LEVEL[d.severity.value],
            "message": {"text": f"{d.location.display()}: {d.message}"},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": relative, "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": 1},
                },
                "logicalLocations": [{
                    "fullyQualifiedName": d.location.path + (f"/{subject}" if subject else ""),
                    "kind": "member",
                }],
            }],
            "partialFingerprints": {"onnxLint/v1": fingerprint(d, relative)},
            "properties": {"engine": d.engine, "fixable": d.fixable},
        })
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "onnx-lint",
                "version": onnx_lint.__version__,
                "informationUri": "https://github.com/onnx-lint/onnx-lint",
                "rules": rules,
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": root.resolve().as_uri() + "/"}},
            "results": results,
        }],
    }
    return json.dumps(log, indent=2) + "\n"
