"""The fix model as data (issue 17, after ruff's Fix/Edit/Applicability): applicability, availability,
titles, frozen diagnostics, conflicting edits of one tensor, and the oracle rebound after a round."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import onnx
import pytest
from conftest import output_dims
from onnx import TensorProto as T
from onnx import helper as h

from examples import defects
from onnx_lint.base.errors import FixError
from onnx_lint.fixes.fixer import plan_fix
from onnx_lint.lint.diagnostics import Applicability, FixAvailability
from onnx_lint.lint.linter import lint_file
from onnx_lint.model.edits import AddValueInfo, DimProof, RemoveValueInfo, SetType, apply_edits, combine_fixes
from onnx_lint.rules import ALL_RULES, CATALOG, get_rule

REPO = Path(__file__).resolve().parent.parent


def _everything(code: str) -> bool:
    return True


def _lint(path: Path):
    result, ctx = lint_file(path, str(path), ALL_RULES, _everything)
    assert ctx is not None
    return result, ctx


def _pinned_and_negative() -> onnx.ModelProto:
    """Y declared [-1, 1, 4] where Relu computes [batch, seq, 4]: OL002 and OL101 both rewrite dim 0."""
    graph = h.make_graph([h.make_node("Relu", ["X"], ["Y"])], "g",
                         [h.make_tensor_value_info("X", T.FLOAT, ["batch", "seq", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, [-1, 1, 4])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


# -- 1. applicability ------------------------------------------------------------------------------
def test_every_fix_is_safe_and_json_says_so_with_its_title(cli, save):
    path = save(defects.weakly_typed_mlp())
    found = cli("check", str(path), "--output-format", "json").json()
    assert {d["code"] for d in found} == {"OL001", "OL003"}
    for d in found:
        assert d["fix"]["applicability"] == "safe" and d["fix"]["applied"] is False
        assert isinstance(d["fix"]["title"], str) and d["fix"]["title"].startswith("Declare ")
    fixed = cli("check", str(path), "--fix", "--output-format", "json").json()
    assert all(d["fix"]["applied"] for d in fixed) and {d["code"] for d in fixed} == {"OL001", "OL003"}


@pytest.mark.parametrize("level", [Applicability.UNSAFE, Applicability.DISPLAY_ONLY])
def test_fix_applies_safe_fixes_only(save, level):
    """No rule has an unsafe fix today (so there is no --unsafe-fixes); the fixer still honours the level."""
    path = save(defects.stale_rank0_output())
    result, ctx = _lint(path)
    [diag] = result.diagnostics
    graded = dataclasses.replace(diag, fix=dataclasses.replace(diag.fix, applicability=level))
    assert not graded.fixable
    assert plan_fix(ctx, [graded], ALL_RULES, _everything) is None
    assert plan_fix(ctx, [diag], ALL_RULES, _everything) is not None


def test_a_record_keeps_applicability_and_title():
    from onnx_lint.lint.diagnostics import Diagnostic, Fix, Location, Severity

    diag = Diagnostic("m.onnx", "OL001", "stale-rank-zero-output", Severity.ERROR, "stale", Location("graph/output[0]"),
                      fix=Fix((SetType("graph", "output", "Y", dims=(3, 5)),), "Declare [3, 5]", Applicability.UNSAFE),
                      notes=("a note",))
    again = Diagnostic.from_record(json.loads(json.dumps(diag.to_record())))
    assert again == diag
    old_cache = diag.to_record()
    del old_cache["fix"]["title"]  # a record written before titles existed still loads
    assert Diagnostic.from_record(old_cache).fix.title == ""


# -- 2. availability and titles ----------------------------------------------------------------------
def test_availability_is_declared_beside_each_rule_and_reaches_catalog_docs_and_list_rules(cli):
    # info without a fix on healthy classic-ML exports (test_engine_truth's sklearn/LightGBM/XGBoost tests)
    assert get_rule("OL003").fix_availability is FixAvailability.SOMETIMES
    assert get_rule("OL102").fix_availability is FixAvailability.SOMETIMES  # only the IR 3 initializer error
    assert get_rule("OL001").fix_availability is FixAvailability.ALWAYS
    assert get_rule("OL007").fix_availability is FixAvailability.NEVER and not get_rule("OL007").fixable
    for rule in ALL_RULES:
        assert rule.fixable == (rule.fix_availability is not FixAvailability.NEVER)
        if rule.fixable:  # a rule that can fix says what the fix does
            assert type(rule).fix_title is not type(rule).__mro__[1].fix_title, rule.code
    assert {row[0]: row[6] for row in CATALOG}["OL003"] == "sometimes"
    listed = {r["code"]: r for r in cli("list-rules", "--output-format", "json").json()}
    assert listed["OL003"]["fix_availability"] == "sometimes" and listed["OL003"]["fixable"] is True
    assert listed["OL000"]["fix_availability"] == "never"
    assert "\n\nFix is sometimes available.\n\n" in (REPO / "docs" / "rules" / "OL003.md").read_text()


def test_the_help_line_says_what_the_fix_does(cli, save):
    path = save(defects.weakly_typed_mlp())
    out = cli("check", str(path)).out
    assert "= help: Declare the computed shape [batch, 8] on output 'Y' (safe fix: run `onnx-lint check --fix`)" in out
    assert "= help: Declare 'activated' as float, 'projected' as float (safe fix" in out


# -- 3. frozen diagnostics -----------------------------------------------------------------------------
def test_fixing_returns_new_diagnostics_and_leaves_the_lint_result_as_it_was(save):
    path = save(defects.weakly_typed_mlp())
    result, ctx = _lint(path)
    before = [d.to_record() for d in result.diagnostics]
    plan = plan_fix(ctx, result.diagnostics, ALL_RULES, _everything)
    assert plan is not None and all(d.fix_applied for d in plan.applied)
    assert [d.to_record() for d in result.diagnostics] == before  # a fix (or a --diff) mutates nothing
    assert all(d.fixable for d in result.diagnostics)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.diagnostics[0].fix.applied = True  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.diagnostics[0].message = "changed"  # type: ignore[misc]


def test_a_relint_cannot_change_an_earlier_result(save):
    """Two lints of one file (the server's cache keeps the first) and a fix between them."""
    path = save(defects.weakly_typed_mlp())
    first, ctx = _lint(path)
    kept = [d.to_record() for d in first.diagnostics]
    plan = plan_fix(ctx, first.diagnostics, ALL_RULES, _everything)
    path.write_bytes(plan.data)
    second, _ = _lint(path)
    assert second.diagnostics == []
    assert [d.to_record() for d in first.diagnostics] == kept


def test_diff_then_fix_reports_the_same_findings_fixed(cli, save):
    path = save(defects.weakly_typed_mlp())
    diff = cli("check", str(path), "--diff", "--output-format", "json")
    assert diff.code == 1 and not any(d["fix"]["applied"] for d in json.loads(diff.out.split("\n---")[0]))
    fixed = cli("check", str(path), "--fix", "--output-format", "json").json()
    assert all(d["fix"]["applied"] for d in fixed)


# -- 4. conflicting edits of one tensor ------------------------------------------------------------------
def test_edits_of_different_dims_compose_and_edits_of_one_dim_conflict():
    model = _pinned_and_negative()
    ol101 = [SetType("graph", "output", "Y", dims=(None, 1, 4))]  # dim 0 -> dynamic
    seq = [SetType("graph", "output", "Y", dims=(-1, "seq", 4))]  # dim 1 only
    batch = [SetType("graph", "output", "Y", dims=("batch", "seq", 4))]  # dims 0 and 1

    composed = combine_fixes([ol101, seq], model)
    assert composed.deferred == [] and composed.edits == [SetType("graph", "output", "Y", dims=(None, "seq", 4))]

    conflict = combine_fixes([batch, ol101], model)
    assert conflict.deferred == [1] and conflict.edits == batch  # the later fix waits for the next round

    agree = combine_fixes([batch, batch], model)
    assert agree.deferred == []


def test_removing_an_entry_conflicts_with_typing_it_and_a_new_rank_with_any_dim():
    graph = h.make_graph([h.make_node("Relu", ["X"], ["h"]), h.make_node("Neg", ["h"], ["Y"])], "g",
                         [h.make_tensor_value_info("X", T.FLOAT, [2, 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, [2, 4])],
                         value_info=[h.make_tensor_value_info("h", T.FLOAT, [2, 8])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    remove = [RemoveValueInfo("graph", "h")]
    retype = [SetType("graph", "value_info", "h", elem_type=T.FLOAT16)]
    assert combine_fixes([remove, retype], model).deferred == [1]
    assert combine_fixes([retype, [AddValueInfo("graph", "h", T.FLOAT16)]], model).deferred == []
    rerank = [SetType("graph", "output", "Y", dims=(8,))]
    one_dim = [SetType("graph", "output", "Y", dims=(2, 5))]
    assert combine_fixes([one_dim, rerank], model).deferred == [1]
    assert combine_fixes([rerank, one_dim], model).deferred == [1]


def test_a_deferred_fix_the_other_fix_made_unnecessary_is_reported_fixed_with_a_note(cli, save):
    path = save(_pinned_and_negative())
    result, ctx = _lint(path)
    assert sorted(d.code for d in result.diagnostics) == ["OL002", "OL101"]
    plan = plan_fix(ctx, result.diagnostics, ALL_RULES, _everything)
    by_code = {d.code: d for d in plan.applied}
    assert by_code["OL002"].notes == ()
    assert by_code["OL101"].notes == ("its own fix conflicted with the OL002 fix of the same declaration and "
                                      "was not needed: that fix repaired it",)
    assert plan.relint == []
    run = cli("check", str(path), "--fix")
    assert run.code == 0 and "2 fixed, 0 remaining" in run.out
    assert output_dims(path) == ["batch", "seq", 4]


# -- 5. the oracle rebound after a round -----------------------------------------------------------------
def test_rebinding_shares_derived_facts_but_not_notes_and_leaves_the_original_alone(save):
    path = save(defects.stale_rank0_output())
    _, ctx = _lint(path)
    oracle = ctx.oracle
    oracle.annotated_values("graph")
    annotated = oracle._annotated
    fixed = ctx.loaded.with_annotations(ctx.loaded.data, ctx.loaded.fresh_copy())
    rebound = oracle.rebind(fixed)
    assert rebound.loaded is fixed and rebound.inferred is oracle.inferred  # nothing derived again
    assert rebound.notes == oracle.notes and rebound.notes is not oracle.notes
    assert oracle._annotated is annotated and oracle.loaded is ctx.loaded
    assert rebound.annotated_values("graph").keys() == oracle.annotated_values("graph").keys()
    fresh = oracle.rebind(fixed, nodes_reordered=True)
    assert fresh.inferred is not oracle.inferred  # a sorted graph is another stripped copy: derived afresh


def test_the_relint_after_sorting_nodes_matches_a_fresh_lint_of_the_written_model(tmp_path):
    nodes = [h.make_node("Relu", ["c"], ["Y"], name="relu"),
             h.make_node("MyOp", ["X"], ["c"], name="custom", domain="com.example")]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("X", T.FLOAT, ["batch", 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, [])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.example", 1)],
                         ir_version=8)
    path = tmp_path / "unsorted.onnx"
    onnx.save(model, path)
    result, ctx = _lint(path)
    assert "OL103" in {d.code for d in result.diagnostics}
    plan = plan_fix(ctx, result.diagnostics, ALL_RULES, _everything)
    assert "OL103" in {d.code for d in plan.applied}
    written = tmp_path / "sorted.onnx"
    written.write_bytes(plan.data)
    fresh, _ = _lint(written)
    assert [(d.code, d.location, d.message) for d in plan.relint] == \
        [(d.code, d.location, d.message.replace(str(written), str(path))) for d in fresh.diagnostics]



def test_edits_after_a_removal_in_the_same_graph_still_land():
    """apply_edits indexes declarations once per graph; an edit that restructures a graph drops that index."""
    graph = h.make_graph([h.make_node("Relu", ["X"], ["a"]), h.make_node("Neg", ["a"], ["b"]),
                          h.make_node("Abs", ["b"], ["Y"])], "g",
                         [h.make_tensor_value_info("X", T.FLOAT, [2, 4])],
                         [h.make_tensor_value_info("Y", T.FLOAT, [2, 4])],
                         value_info=[h.make_tensor_value_info("a", T.FLOAT, [2, 8]),
                                     h.make_tensor_value_info("b", T.FLOAT, [2, 8])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    apply_edits([SetType("graph", "value_info", "b", dims=(2, 5)), RemoveValueInfo("graph", "a"),
                 SetType("graph", "value_info", "b", dims=(2, 4))], model)
    [b] = model.graph.value_info
    assert b.name == "b" and [d.dim_value for d in b.type.tensor_type.shape.dim] == [2, 4]


_PROVEN = DimProof("onnx", "every size")


def test_an_edit_without_a_target_fails_the_fix_naming_its_rule(save):
    path = save(defects.stale_rank0_output())
    result, ctx = _lint(path)
    [diag] = result.diagnostics
    elsewhere = dataclasses.replace(diag, fix=dataclasses.replace(
        diag.fix, edits=(SetType("graph", "output", "not_there", dims=(3, 5), proofs=(_PROVEN, _PROVEN)),)))
    with pytest.raises(FixError, match="cannot apply the OL001 fix: .*output 'not_there' not found"):
        plan_fix(ctx, [elsewhere], ALL_RULES, _everything)


def test_rule_explanations_say_the_fix_availability_under_the_heading(cli):
    """`onnx-lint rule`, the docs and the server's hover (read from source, without onnx) say it alike."""
    from onnx_lint.rules import CODES, rule_explanation

    text = cli("rule", "OL003").out
    assert text.startswith("## untyped-after-shape-inference (UntypedAfterShapeInference, OL003)\n\n"
                           "Fix is sometimes available.\n\n### What it does")
    assert "Fix is" not in cli("rule", "OL007").out  # never fixable: nothing said, as in ruff
    assert all(rule_explanation(code) == get_rule(code).explanation() for code in CODES)
