"""One finding per cause where people read: a run of findings an exporter repeats by construction is said once.

optimum's merged decoders give both branches of their If the same node names (OL105), onnxslim and
ultralytics declare value_info entries twice (OL109). The text formats say such a run once, with its count;
JSON and SARIF keep one entry per finding, and the summary, ``--statistics`` and the exit code count every one.
"""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest
import pytest_lsp
from lsp_support import SERVER, diagnostics_for, execute, open_binary, pull, pull_capabilities, push_capabilities, start
from lsprotocol import types as lsp
from onnx import TensorProto as T
from onnx import helper as h
from pytest_lsp import LanguageClient

from onnx_lint.formats.repeats import THRESHOLD, said_once
from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity

REPO = Path(__file__).resolve().parent.parent
T5 = REPO / "tests" / "exports" / "optimum_t5_merged.onnx"
EVERY_LOCATION = "run with --output-format json for every location"


def _relu_chain(first: str, last: str, names: list[str], prefix: str) -> list[onnx.NodeProto]:
    outputs = [f"{prefix}{i}" for i in range(len(names) - 1)] + [last]
    return [h.make_node("Relu", [first, *outputs][i:i + 1], [outputs[i]], name=name) for i, name in enumerate(names)]


def _model(nodes: list[onnx.NodeProto], value_info: list[onnx.ValueInfoProto], *,
           cond: bool = False) -> onnx.ModelProto:
    inputs = [h.make_tensor_value_info("x", T.FLOAT, ["batch", 4])]
    inputs += [h.make_tensor_value_info("c", T.BOOL, [])] if cond else []
    graph = h.make_graph(nodes, "g", inputs, [h.make_tensor_value_info("y", T.FLOAT, ["batch", 4])],
                         value_info=value_info)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def doubled_value_info(tensors: int = 12, differing: bool = False) -> onnx.ModelProto:
    """A Relu chain whose every intermediate tensor value_info declares twice, as onnxslim writes it:
    identical copies (an info note each), or a second copy with a renamed dim (a warning each)."""
    nodes = _relu_chain("x", "y", [f"relu{i}" for i in range(tensors + 1)], "t")
    second = ["batch", "four"] if differing else ["batch", 4]
    value_info = [v for i in range(tensors) for v in (h.make_tensor_value_info(f"t{i}", T.FLOAT, ["batch", 4]),
                                                      h.make_tensor_value_info(f"t{i}", T.FLOAT, second))]
    return _model(nodes, value_info)


def three_causes() -> onnx.ModelProto:
    """One file, three runs of six: node names the main graph uses twice (OL105), node names an If's two
    branches share (OL105, another cause) and tensors value_info declares twice (OL109)."""
    nodes = _relu_chain("x", "m", [f"n{i // 2}" for i in range(12)], "t")
    value_info = [h.make_tensor_value_info(f"t{i}", T.FLOAT, ["batch", 4]) for i in range(6) for _ in range(2)]

    def branch(tag: str) -> onnx.GraphProto:
        return h.make_graph(_relu_chain("m", f"{tag}_out", [f"b{i}" for i in range(6)], f"{tag}_"), tag, [],
                            [h.make_tensor_value_info(f"{tag}_out", T.FLOAT, ["batch", 4])])

    nodes.append(h.make_node("If", ["c"], ["y"], name="if", then_branch=branch("then"), else_branch=branch("else")))
    return _model(nodes, value_info, cond=True)


def _lines(out: str, code: str) -> list[str]:
    return [line for line in out.splitlines() if f": {code} " in line]


def _summary(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(("Found ", "All checks passed")))


def test_t5_merged_decoder_says_its_shared_node_names_once_with_the_count(cli):
    t5_json = cli("check", str(T5), "--output-format", "json").json()
    shared = [d for d in t5_json if d["code"] == "OL105"]
    assert len(shared) == 371
    for fmt in ("concise", "full"):
        run = cli("check", str(T5), "--output-format", fmt)
        [line] = _lines(run.out, "OL105")
        assert line.startswith(f"{T5}:graph/node[0]/then_branch/node[3] '/decoder/Shape' (Shape): OL105 node name "
                               "'/decoder/Shape' is also used by graph/node[0]/else_branch/node[3]")
        assert line.endswith("(and 370 more node names the two branches of the If at graph/node[0] share: "
                             f"{EVERY_LOCATION})")
        # the other rules' findings are each still on their own line, and the totals are the true ones
        assert len(_lines(run.out, "OL201")) == len([d for d in t5_json if d["code"] == "OL201"]) == 4
        assert len(_lines(run.out, "OL007")) == 4
        assert _summary(run.out) == f"Found {len(t5_json)} problems in 1 of 1 file checked."
        assert run.code == 1  # OL201 warnings remain, as before
    full = cli("check", str(T5)).out
    assert "  | also at graph/node[0]/then_branch/node[4] '/decoder/Constant' (Constant), " in full
    assert "and 367 more\n" in full


def test_t5_machine_formats_and_statistics_keep_every_finding(cli):
    listed = cli("check", str(T5), "--output-format", "json").json()
    shared = [d for d in listed if d["code"] == "OL105"]
    assert len({d["location"]["path"] for d in shared}) == 371  # every location, each once
    sarif = json.loads(cli("check", str(T5), "--output-format", "sarif").out)
    results = sarif["runs"][0]["results"]
    assert len(results) == len(listed)
    names = {r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] for r in results if r["ruleId"] == "OL105"}
    assert len(names) == 371
    assert cli("check", str(T5), "--output-format", "github").out.count("title=onnx-lint (OL105)") == 371
    assert "  371  OL105       duplicate-node-name" in cli("check", str(T5), "--statistics").out


def test_value_info_declared_twice_is_one_line_with_its_fix_count(cli, save):
    path = save(doubled_value_info(12))
    listed = cli("check", str(path), "--output-format", "json").json()
    assert [(d["code"], d["severity"]) for d in listed] == [("OL109", "info")] * 12
    assert len({d["location"]["path"] for d in listed}) == 12
    for fmt in ("concise", "full"):
        run = cli("check", str(path), "--output-format", fmt)
        [line] = _lines(run.out, "OL109")
        assert line.startswith(f"{path}:graph/value_info[1] 't0': OL109 [*] value_info declares 't0' 2 times")
        assert line.endswith(f"(and 11 more tensors declared more than once in the value_info of graph: "
                             f"{EVERY_LOCATION})")
        assert _summary(run.out) == "Found 12 problems in 1 of 1 file checked."
        assert "[*] 12 fixable with the `--fix` option." in run.out
        assert run.code == 0  # info notes never fail a run
    assert "  = help: a safe fix for each of the 12 (run `onnx-lint check --fix`)" in cli("check", str(path)).out
    sarif = json.loads(cli("check", str(path), "--output-format", "sarif").out)
    assert len(sarif["runs"][0]["results"]) == 12


def test_unrelated_findings_are_never_said_together(cli, save):
    path = save(three_causes())
    listed = cli("check", str(path), "--output-format", "json").json()
    assert sorted(d["code"] for d in listed) == ["OL105"] * 12 + ["OL109"] * 6
    run = cli("check", str(path), "--output-format", "concise")
    same_graph, branches = _lines(run.out, "OL105")
    assert "(and 5 more node names used more than once in graph: " in same_graph
    assert "(and 5 more node names the two branches of the If at graph/node[12] share: " in branches
    [doubled] = _lines(run.out, "OL109")
    assert "(and 5 more tensors declared more than once in the value_info of graph: " in doubled
    assert _summary(run.out) == "Found 18 problems in 1 of 1 file checked."
    assert "  6  OL109" in cli("check", str(path), "--statistics").out


def test_runs_in_two_files_are_said_once_per_file(cli, save):
    first, second = save(doubled_value_info(12), "a.onnx"), save(doubled_value_info(12), "b.onnx")
    run = cli("check", str(first), str(second), "--output-format", "concise")
    lines = _lines(run.out, "OL109")
    assert [line.split(":", 1)[0] for line in lines] == [str(first), str(second)]
    assert all("(and 11 more " in line for line in lines)
    assert _summary(run.out) == "Found 24 problems in 2 of 2 files checked."


def test_a_short_run_and_warnings_keep_one_line_each(cli, save):
    short = save(doubled_value_info(THRESHOLD), "short.onnx")
    run = cli("check", str(short), "--output-format", "concise")
    assert len(_lines(run.out, "OL109")) == THRESHOLD and "more tensors" not in run.out
    # copies that differ are each a warning to act on: never folded, however many
    differing = save(doubled_value_info(12, differing=True), "differing.onnx")
    run = cli("check", str(differing), "--output-format", "concise")
    lines = _lines(run.out, "OL109")
    assert len(lines) == 12 and not any("more tensors" in line for line in lines)
    assert run.code == 1


def _finding(code: str, path: str, message: str, severity: Severity = Severity.INFO,
             file: str = "m.onnx") -> Diagnostic:
    return Diagnostic(file=file, code=code, name="x", severity=severity, message=message, location=Location(path))


def test_a_cause_that_cannot_be_read_is_never_grouped():
    """OL105's cause is read from its message; worded otherwise, each finding stays on its own."""
    readable = [_finding("OL105", f"graph/node[{i}]", f"node name 'a{i}' is also used by graph/node[{i + 20}]; x")
                for i in range(8)]
    unreadable = [_finding("OL105", f"graph/node[{i}]", f"node name 'b{i}' is shared") for i in range(8)]
    other_rule = [_finding("OL110", f"graph/node[{i}]", "orphans") for i in range(8)]
    said = said_once(readable + unreadable + other_rule)
    assert len(said) == 1 + 8 + 8
    assert said[0].findings == tuple(readable)  # type: ignore[union-attr]
    assert said[1:] == unreadable + other_rule


# -- the language server: one entry per run, the others as related information ------------------------------
def _t5_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "t5_merged.onnx"
    copy.write_bytes(T5.read_bytes())
    return copy


def _no_related_information() -> lsp.ClientCapabilities:
    caps = push_capabilities()
    caps.text_document.publish_diagnostics.related_information = False
    return caps


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path, push_capabilities())
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def plain_client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path, _no_related_information())
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def pull_client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path, pull_capabilities())
    yield
    await lsp_client.shutdown_session()


def _shared_names(diagnostics: list[lsp.Diagnostic]) -> lsp.Diagnostic:
    [entry] = [d for d in diagnostics if d.code == "OL105"]
    return entry


@pytest.mark.asyncio
async def test_the_editor_gets_one_entry_for_the_shared_node_names_and_the_model_view_every_one(client, tmp_path):
    model = _t5_copy(tmp_path)
    open_binary(client, model)
    published = await diagnostics_for(client, model.as_uri())
    assert len(published) == 379 - 370
    entry = _shared_names(published)
    assert entry.severity == lsp.DiagnosticSeverity.Information and entry.data["key"][0] == "OL105"
    assert entry.message.startswith("node name '/decoder/Shape' is also used by graph/node[0]/else_branch/node[3]")
    assert entry.message.endswith("(at graph/node[0]/then_branch/node[3] '/decoder/Shape' (Shape); and 370 more "
                                  "node names the two branches of the If at graph/node[0] share)")
    related = entry.related_information
    assert len(related) == 51 and all(r.location.uri == model.as_uri() for r in related)
    assert related[0].message == "graph/node[0]/then_branch/node[4] '/decoder/Constant' (Constant)"
    assert len({r.message for r in related[:50]}) == 50
    assert related[50].message == "and 320 more: `onnx-lint check --output-format json` lists every location"
    # the model view lists (and links by index) every finding
    described = await execute(client, "onnx-lint.describeModel", model.as_uri())
    assert len(described["diagnostics"]) == 379
    assert sum(d["code"] == "OL105" for d in described["diagnostics"]) == 371
    assert not any(d.get("relatedInformation") for d in described["diagnostics"])
    # the binary model's Problems entries (the VS Code extension's panel): one per cause, each linked to its
    # first finding in the view's list
    problems = described["problems"]
    assert len(problems) == 9 and [p["index"] for p in problems] == sorted(p["index"] for p in problems)
    [shared] = [p for p in problems if p["diagnostic"]["code"] == "OL105"]
    assert "and 370 more node names the two branches of the If at graph/node[0] share" in \
        shared["diagnostic"]["message"]
    assert described["diagnostics"][shared["index"]]["message"].startswith("node name '/decoder/Shape' is also used")
    assert all(described["diagnostics"][p["index"]]["code"] == p["diagnostic"]["code"] for p in problems)


@pytest.mark.asyncio
async def test_in_the_textual_view_the_related_locations_are_the_entries_lines(client, tmp_path):
    model = tmp_path / "doubled.onnx"
    onnx.save(doubled_value_info(60), model)
    shown = await execute(client, "onnx-lint.showModel", model.as_uri())
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=shown["uri"], language_id="onnx-text", version=1, text=shown["text"])))
    [entry] = await diagnostics_for(client, shown["uri"])
    lines = shown["text"].split("\n")
    assert entry.code == "OL109" and entry.data["fixable"] is True
    assert entry.message.endswith("(and 59 more tensors declared more than once in the value_info of graph)")
    related = entry.related_information
    assert len(related) == 51 and related[50].message.startswith("and 9 more: ")
    assert all(r.location.uri == shown["uri"] for r in related)
    assert [r.message for r in related[:2]] == ["graph/value_info[3] 't1'", "graph/value_info[5] 't2'"]
    # each on its own tensor's name in the value_info list
    named = [lines[r.location.range.start.line][r.location.range.start.character:r.location.range.end.character]
             for r in related[:50]]
    assert named == [f"t{i}" for i in range(1, 51)]
    assert len(shown["diagnostics"]) == 1  # the view's own answer is what its document is given


@pytest.mark.asyncio
async def test_a_client_without_related_information_reads_the_locations_in_the_message(plain_client, tmp_path):
    model = _t5_copy(tmp_path)
    open_binary(plain_client, model)
    entry = _shared_names(await diagnostics_for(plain_client, model.as_uri()))
    assert not entry.related_information
    first, *others = entry.message.split("\n")
    assert first.endswith("and 370 more node names the two branches of the If at graph/node[0] share)")
    assert len(others) == 51 and others[-1] == "and 320 more"
    assert others[0] == "also at graph/node[0]/then_branch/node[4] '/decoder/Constant' (Constant)"


@pytest.mark.asyncio
async def test_pulled_diagnostics_say_the_run_once_too(pull_client, tmp_path):
    model = _t5_copy(tmp_path)
    report = await pull(pull_client, model.as_uri())
    entry = _shared_names(report.items)
    assert len(report.items) == 9 and len(entry.related_information) == 51
