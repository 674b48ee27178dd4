"""``--output-format sarif``: SARIF 2.1.0 for GitHub code scanning.

A model is a binary file: results point at line 1 (GitHub requires a region),
carry the graph path as a logical location, and have their own fingerprints
(GitHub cannot hash the lines of a binary file), stable across runs: they
never include the message or the engine, which may change between versions.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from onnx_lint.base.links import DOCS_BASE_URL
from onnx_lint.base.version import __version__
from onnx_lint.lint.diagnostics import Diagnostic

if TYPE_CHECKING:
    from onnx_lint.formats import RuleDoc

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = DOCS_BASE_URL
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "onnxLint/v1"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _subject(d: Diagnostic) -> str | None:
    return d.location.tensor if d.location.tensor is not None else d.location.node


def fingerprint(d: Diagnostic, relative: str) -> str:
    """sha256 of code, repo-relative path, graph path and tensor/node name."""
    raw = "\0".join((d.code, relative, d.location.path, _subject(d) or ""))
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def pascal_case(kebab: str) -> str:
    """``stale-rank-zero-output`` -> ``StaleRankZeroOutput`` (SARIF rule names are identifiers)."""
    return "".join(part[:1].upper() + part[1:] for part in kebab.split("-") if part)


def _descriptor(doc: RuleDoc) -> dict[str, Any]:
    return {
        "id": doc.code,
        "name": pascal_case(doc.name),
        "shortDescription": {"text": doc.summary},
        "fullDescription": {"text": doc.summary},
        "help": {"text": f"{doc.summary}\nSee {doc.url} or run `onnx-lint rule {doc.code}`."},
        "helpUri": doc.url,
        "defaultConfiguration": {"level": LEVELS[doc.severity.value]},
        "properties": {"tags": ["onnx", doc.severity.value, "fixable" if doc.fixable else "not-fixable"]},
    }


def _artifact(file: str, root: Path) -> tuple[dict[str, str], str]:
    """The artifactLocation and the path the fingerprint hashes.

    Inside ``root`` the uri is relative to ``%SRCROOT%`` (what code scanning
    needs to find the file in the repository); outside it, an absolute file URI.
    """
    path = Path(file)
    try:
        absolute = path.resolve()
    except (OSError, RuntimeError):
        absolute = path.absolute()
    try:
        relative = absolute.relative_to(root.resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):
        return {"uri": absolute.as_uri()}, absolute.as_posix()
    return {"uri": quote(relative), "uriBaseId": SRCROOT}, relative


def _root_uri(root: Path) -> str:
    uri = root.resolve().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _result(d: Diagnostic, root: Path, rule_index: int) -> dict[str, Any]:
    artifact, hashed_path = _artifact(d.file, root)
    subject = _subject(d)
    return {
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": LEVELS[d.severity.value],
        "message": {"text": f"{d.location.display()}: {d.message}"},
        "locations": [{
            "physicalLocation": {"artifactLocation": artifact, "region": {"startLine": 1}},
            "logicalLocations": [{
                "fullyQualifiedName": d.location.path + (f"/{subject}" if subject else ""),
                "kind": "member",
            }],
        }],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(d, hashed_path)},
        "properties": {"engine": d.engine, "fixable": d.fixable, "opType": d.location.op_type},
    }


def sarif_log(diagnostics: list[Diagnostic], *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> dict[str, Any]:
    """The SARIF log as a dict: one run, one rule descriptor per code that has results."""
    codes = sorted({d.code for d in diagnostics})
    index = {code: i for i, code in enumerate(codes)}
    # A code without a doc (not expected) still needs a descriptor for ruleIndex to point at.
    rules = [_descriptor(rule_docs[c]) if c in rule_docs else {"id": c} for c in codes]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "onnx-lint",
                "version": __version__,
                "informationUri": INFORMATION_URI,
                "rules": rules,
            }},
            "originalUriBaseIds": {SRCROOT: {"uri": _root_uri(root)}},
            "results": [_result(d, root, index[d.code]) for d in diagnostics],
        }],
    }


def render_sarif(diagnostics: list[Diagnostic], *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> str:
    """The SARIF log as indented JSON with a trailing newline."""
    return json.dumps(sarif_log(diagnostics, root=root, rule_docs=rule_docs), indent=2) + "\n"
