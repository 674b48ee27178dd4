"""Output formats, from hand-built diagnostics (docs/cli.md: JSON shape, SARIF, GitHub, JUnit)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import onnx_lint
from onnx_lint.formats import FORMATS, RuleDoc, relative_path, render
from onnx_lint.formats.github import escape_data, escape_property
from onnx_lint.lint.diagnostics import Diagnostic, Fix, Location, Severity

DOCS = {
    "OL001": RuleDoc("OL001", "stale-rank-zero-output", "Output declared rank 0 but inferred otherwise",
                     Severity.ERROR, True, "https://example.invalid/rules#ol001"),
    "OL003": RuleDoc("OL003", "untyped-after-shape-inference", "Value has no type after inference",
                     Severity.WARNING, True, "https://example.invalid/rules#ol003"),
    "OL007": RuleDoc("OL007", "underivable-output-shape", "Output shape cannot be derived",
                     Severity.INFO, False, "https://example.invalid/rules#ol007"),
}


def diag(file: str, code: str = "OL001", severity: Severity = Severity.ERROR, *, message: str = "stale shape",
         path: str = "graph/output[0]", tensor: str | None = "Y", node: str | None = None,
         op_type: str | None = None, engine: str | None = "onnx", fix: bool = True) -> Diagnostic:
    return Diagnostic(file=file, code=code, name=DOCS[code].name if code in DOCS else "x", severity=severity,
                      message=message, location=Location(path, tensor, node, op_type), engine=engine,
                      fix=Fix((), f"Declare the computed shape [3, 5] on output '{tensor}'") if fix else None)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "models" / "nested").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def sample(root: Path) -> list[Diagnostic]:
    return [
        diag("models/a.onnx"),
        diag("models/nested/b.onnx", "OL003", Severity.WARNING, path="graph/node[0]", tensor=None,
             node="TopK_0", op_type="TopK", message="output 'values' has no type"),
        diag(str(root / "models" / "a.onnx"), "OL007", Severity.INFO, path="graph/output[1]", tensor="Z",
             engine=None, fix=False, message="cannot derive"),
    ]


def test_every_format_renders_and_unknown_is_refused(root, sample):
    for fmt in FORMATS:
        assert render(sample, fmt, root=root, rule_docs=DOCS)
        assert isinstance(render([], fmt, root=root, rule_docs=DOCS), str)
    with pytest.raises(ValueError, match="unknown output format"):
        render(sample, "xml", root=root, rule_docs=DOCS)


def test_relative_path_is_posix_and_relative_to_root(root):
    assert relative_path("models/nested/b.onnx", root) == "models/nested/b.onnx"
    assert relative_path(str(root / "models" / "a.onnx"), root) == "models/a.onnx"
    outside = root.parent / "elsewhere.onnx"
    assert relative_path(str(outside), root) == outside.as_posix()


# --- json -------------------------------------------------------------------------------------------


def test_json_has_exactly_the_public_shape(root, sample):
    text = render(sample, "json", root=root, rule_docs=DOCS)
    assert text.endswith("]\n")
    found = json.loads(text)
    assert isinstance(found, list) and len(found) == 3
    for d in found:
        assert set(d) == {"file", "code", "name", "severity", "message", "location", "engine", "fix"}
        assert set(d["location"]) == {"path", "tensor", "node", "op_type"}
        assert d["severity"] in ("error", "warning", "info")
        # docs/cli.md: fields are only added; "title" (what the fix does) was added to "applicability" and "applied"
        assert d["fix"] is None or set(d["fix"]) == {"applicability", "applied", "title"}
    first, second, third = found
    assert first == {
        "file": "models/a.onnx", "code": "OL001", "name": "stale-rank-zero-output", "severity": "error",
        "message": "stale shape",
        "location": {"path": "graph/output[0]", "tensor": "Y", "node": None, "op_type": None},
        "engine": "onnx",
        "fix": {"applicability": "safe", "applied": False, "title": "Declare the computed shape [3, 5] on output 'Y'"},
    }
    assert second["location"] == {"path": "graph/node[0]", "tensor": None, "node": "TopK_0", "op_type": "TopK"}
    assert third["engine"] is None and third["fix"] is None
    assert json.loads(render([], "json", root=root, rule_docs=DOCS)) == []


# --- sarif ------------------------------------------------------------------------------------------


def sarif(diagnostics, root):
    return json.loads(render(diagnostics, "sarif", root=root, rule_docs=DOCS))


def test_sarif_has_what_code_scanning_requires(root, sample):
    log = sarif(sample, root)
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "onnx-lint" and driver["version"] == onnx_lint.__version__
    assert driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    assert [r["id"] for r in rules] == ["OL001", "OL003", "OL007"]
    assert rules[0]["name"] == "StaleRankZeroOutput"
    assert rules[0]["shortDescription"]["text"] == DOCS["OL001"].summary
    assert rules[0]["helpUri"] == DOCS["OL001"].url
    assert [r["defaultConfiguration"]["level"] for r in rules] == ["error", "warning", "note"]
    assert all(isinstance(r["properties"]["tags"], list) for r in rules)
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file://")
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/")

    results = run["results"]
    assert [r["level"] for r in results] == ["error", "warning", "note"]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["message"]["text"]
        [location] = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert physical["region"] == {"startLine": 1}
        assert location["logicalLocations"][0]["kind"] == "member"
        assert len(result["partialFingerprints"]["onnxLint/v1"]) == 64
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
    # relative, forward slashes, also for a file given by its absolute path
    assert uris == ["models/a.onnx", "models/nested/b.onnx", "models/a.onnx"]
    names = [r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] for r in results]
    assert names == ["graph/output[0]/Y", "graph/node[0]/TopK_0", "graph/output[1]/Z"]


def test_sarif_lists_only_rules_with_results(root):
    log = sarif([diag("models/a.onnx", "OL003", Severity.WARNING)], root)
    [run] = log["runs"]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["OL003"]
    assert run["results"][0]["ruleIndex"] == 0
    empty = sarif([], root)["runs"][0]
    assert empty["results"] == [] and empty["tool"]["driver"]["rules"] == []


def _prints(log):
    return [r["partialFingerprints"]["onnxLint/v1"] for r in log["runs"][0]["results"]]


def test_sarif_fingerprints_are_stable_and_distinct(root, sample):
    assert _prints(sarif(sample, root)) == _prints(sarif(sample, root))
    assert len(set(_prints(sarif(sample, root)))) == 3
    # The message and the engine may change between versions; the fingerprint must not.
    reworded = [diag("models/a.onnx", message="reworded", engine="onnxruntime-symbolic")]
    assert _prints(sarif(reworded, root)) == _prints(sarif([sample[0]], root))
    # The same finding named by an absolute path is the same finding.
    absolute = [diag(str(root / "models" / "a.onnx"))]
    assert _prints(sarif(absolute, root)) == _prints(sarif([sample[0]], root))
    others = [diag("models/a.onnx", path="graph/output[1]"), diag("models/a.onnx", tensor="Y2"),
              diag("models/other.onnx"), diag("models/a.onnx", "OL003", Severity.WARNING)]
    prints = _prints(sarif(others, root)) + _prints(sarif([sample[0]], root))
    assert len(set(prints)) == len(prints)


def test_sarif_uri_is_percent_encoded_and_outside_files_are_absolute(root):
    inside = diag("models/with space.onnx")
    outside = diag(str(root.parent / "elsewhere.onnx"))
    results = sarif([inside, outside], root)["runs"][0]["results"]
    first = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert first == {"uri": "models/with%20space.onnx", "uriBaseId": "%SRCROOT%"}
    second = results[1]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert second["uri"].startswith("file://") and "uriBaseId" not in second


def test_sarif_is_valid_against_the_official_sarif_2_1_0_schema(root, sample):
    """The OASIS schema (errata 01), shipped in tests/data: the same file GitHub code scanning validates with."""
    import jsonschema

    schema = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
    log = sarif(sample, root)
    jsonschema.Draft4Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


def test_sarif_passes_a_schema_of_github_requirements(root, sample):
    import jsonschema

    text = {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}
    schema = {
        "type": "object",
        "required": ["version", "runs"],
        "properties": {
            "version": {"const": "2.1.0"},
            "runs": {"type": "array", "minItems": 1, "items": {
                "type": "object",
                "required": ["tool", "results"],
                "properties": {
                    "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {
                        "type": "object", "required": ["name", "rules"],
                        "properties": {"rules": {"type": "array", "items": {
                            "type": "object", "required": ["id", "shortDescription"],
                            "properties": {
                                "shortDescription": text,
                                "defaultConfiguration": {"properties": {
                                    "level": {"enum": ["none", "note", "warning", "error"]}}},
                            }}}}}}},
                    "results": {"type": "array", "items": {
                        "type": "object",
                        "required": ["ruleId", "message", "locations", "partialFingerprints"],
                        "properties": {
                            "level": {"enum": ["none", "note", "warning", "error"]},
                            "message": text,
                            "partialFingerprints": {"type": "object",
                                                    "additionalProperties": {"type": "string"}},
                            "locations": {"type": "array", "minItems": 1, "items": {
                                "type": "object", "required": ["physicalLocation"],
                                "properties": {"physicalLocation": {
                                    "type": "object", "required": ["artifactLocation", "region"],
                                    "properties": {
                                        "artifactLocation": {"type": "object", "required": ["uri"]},
                                        "region": {"type": "object", "required": ["startLine"],
                                                   "properties": {"startLine": {"type": "integer",
                                                                                "minimum": 1}}},
                                    }}}}},
                        }}},
                }}},
        },
    }
    jsonschema.validate(sarif(sample, root), schema)


# --- github -----------------------------------------------------------------------------------------


def test_github_annotations(root, sample):
    lines = render(sample, "github", root=root, rule_docs=DOCS).splitlines()
    assert lines == [
        "::error title=onnx-lint (OL001),file=models/a.onnx,line=1::graph/output[0] 'Y': stale shape",
        "::warning title=onnx-lint (OL003),file=models/nested/b.onnx,line=1::"
        "graph/node[0] 'TopK_0' (TopK): output 'values' has no type",
        "::notice title=onnx-lint (OL007),file=models/a.onnx,line=1::graph/output[1] 'Z': cannot derive",
    ]


def test_github_escaping(root):
    assert escape_data("100%\r\nnext") == "100%25%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    evil = diag("models/odd,name:1.onnx", tensor="Y\n::error::x", message="50% off\r\nnew line")
    [line] = render([evil], "github", root=root, rule_docs=DOCS).splitlines()
    assert line == ("::error title=onnx-lint (OL001),file=models/odd%2Cname%3A1.onnx,line=1::"
                    "graph/output[0] 'Y%0A::error::x': 50%25 off%0D%0Anew line")


# --- junit ------------------------------------------------------------------------------------------


def test_junit_counts_failures_per_file(root, sample):
    text = render(sample, "junit", root=root, rule_docs=DOCS)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    suites = ET.fromstring(text)
    assert suites.tag == "testsuites" and suites.get("name") == "onnx-lint"
    assert suites.get("tests") == "3" and suites.get("failures") == "2"
    by_name = {s.get("name"): s for s in suites.iter("testsuite")}
    assert set(by_name) == {"models/a.onnx", "models/nested/b.onnx"}
    a = by_name["models/a.onnx"]
    assert a.get("tests") == "2" and a.get("failures") == "1"
    cases = a.findall("testcase")
    assert [c.get("name") for c in cases] == ["OL001 graph/output[0] 'Y'", "OL007 graph/output[1] 'Z'"]
    assert all(c.get("classname") == "models/a.onnx" for c in cases)
    failure = cases[0].find("failure")
    assert failure is not None and failure.get("type") == "OL001" and failure.get("message") == "stale shape"
    assert cases[1].find("failure") is None and cases[1].find("skipped").get("message") == "cannot derive"
    b = by_name["models/nested/b.onnx"]
    assert b.find("testcase/failure").get("type") == "OL003"
    assert len(list(suites.iter("failure"))) == 2


def test_junit_survives_characters_xml_cannot_hold(root):
    odd = diag("models/a.onnx", tensor="Y\x00\x1b", message="bad <&> \x07")
    suites = ET.fromstring(render([odd], "junit", root=root, rule_docs=DOCS))
    failure = next(suites.iter("failure"))
    assert failure.get("message") == "bad <&> \\x07"
    empty = ET.fromstring(render([], "junit", root=root, rule_docs=DOCS))
    assert empty.get("tests") == "0" and empty.get("failures") == "0"


def test_escape_sequences_in_model_names_never_reach_the_terminal(cli, tmp_path):
    """A hostile model names its output with an ANSI 'clear screen': text output escapes it, JSON keeps it."""
    import onnx

    from examples import defects

    model = defects.stale_rank0_output()
    hostile = "Y\x1b[2J\x1b]0;pwned\x07"
    model.graph.output[0].name = hostile
    model.graph.node[0].output[0] = hostile
    path = tmp_path / "hostile.onnx"
    onnx.save(model, path)
    for fmt in ("full", "concise"):
        run = cli("check", str(path), "--output-format", fmt)
        assert "\x1b" not in run.out and "\x07" not in run.out
        assert "Y\\x1b[2J\\x1b]0;pwned\\x07" in run.out
    [finding] = cli("check", str(path), "--output-format", "json").json()
    assert finding["location"]["tensor"] == hostile
    diff = cli("check", str(path), "--diff").out
    assert "\x1b" not in diff and "Y\\x1b[2J" in diff and "\n+" in diff
