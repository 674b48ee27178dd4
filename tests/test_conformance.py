"""onnx-lint over ONNX's own operator conformance cases, judged by their expected outputs and by ONNX Runtime.

A declaration the case's own expected outputs confirm is healthy: no error-level shape finding may
contradict it and ``--fix`` must leave the model byte-identical (a Squeeze whose ``axes`` is an input,
a window whose ``size`` is one: engines that lack those values must not overrule the model's data).
Every model ONNX Runtime refuses must get an error quoting it, and no error may claim a refusal ONNX
Runtime does not make.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

import pytest
from conformance import Case, write_cases
from conftest import run_process

pytest.importorskip("onnxruntime")

SHAPE_CODES = {"OL001", "OL002", "OL003", "OL004", "OL005", "OL006", "OL101"}
# The rules whose errors say that ONNX Runtime refuses the model, in its words.
REFUSAL_CODES = {"OL102", "OL106", "OL107"}


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> list[Case]:
    return write_cases(tmp_path_factory.mktemp("conformance") / "models")


@pytest.fixture(scope="module")
def findings(cases) -> dict[str, list[dict]]:
    """What one ``onnx-lint check`` of the whole folder says, per model (a real process, as a user runs it)."""
    folder = cases[0].path.parent
    run = run_process("check", str(folder), "--no-cache", "--exit-zero", "--output-format", "json", cwd=folder)
    assert run.code == 0, run.err
    found: dict[str, list[dict]] = defaultdict(list)
    for diag in run.json():
        found[Path(diag["file"]).name].append(diag)
    return found


def test_the_cases_are_generated_from_the_installed_onnx(cases):
    assert len(cases) > 1500
    assert sum(c.declarations_hold for c in cases) > 1500
    assert 50 < sum(c.runtime_refusal is not None for c in cases) < 400


def test_no_error_contradicts_a_declaration_the_expected_outputs_confirm(cases, findings):
    wrong = [f"{c.path.name}: {d['code']} {d['message']}" for c in cases if c.declarations_hold
             for d in findings[c.path.name] if d["severity"] == "error" and d["code"] in SHAPE_CODES]
    assert wrong == []


def test_the_value_of_an_input_sets_the_shape_and_the_note_names_it(findings):
    """Squeeze's axes, Split's sizes, a window's size: a declared number there is a contract on those values."""
    [note] = findings["test_squeeze_negative_axes.onnx"]
    assert note["code"] == "OL007" and note["severity"] == "info"
    assert "set by the value of input 'axes'" in note["message"] and "float[1, 3, 5]" in note["message"]
    assert {d["code"] for d in findings["test_split_variable_parts_2d_opset18.onnx"]} == {"OL007"}
    assert "input 'x'" in findings["test_hannwindow.onnx"][0]["message"]


def test_fix_leaves_every_confirmed_model_byte_identical(cases, tmp_path_factory):
    folder = tmp_path_factory.mktemp("conformance-fix")
    healthy = [c for c in cases if c.declarations_hold]
    for case in healthy:
        shutil.copyfile(case.path, folder / case.path.name)
    run = run_process("check", str(folder), "--fix", "--no-cache", "--exit-zero", "--quiet", cwd=folder)
    assert run.code == 0, run.err
    changed = [c.path.name for c in healthy if (folder / c.path.name).read_bytes() != c.path.read_bytes()]
    assert changed == []


def test_every_model_onnx_runtime_refuses_gets_an_error_in_its_words(cases, findings):
    silent = [f"{c.path.name}: {c.runtime_refusal[:120]}" for c in cases if c.runtime_refusal is not None
              and not any(d["severity"] == "error" and "ONNX Runtime" in d["message"]
                          for d in findings[c.path.name])]
    assert silent == []


def test_no_error_claims_a_refusal_onnx_runtime_does_not_make(cases, findings):
    claims = [f"{c.path.name}: {d['code']} {d['message'][:160]}" for c in cases if c.runtime_refusal is None
              for d in findings[c.path.name]
              if d["severity"] == "error" and d["code"] in REFUSAL_CODES and "ONNX Runtime" in d["message"]]
    assert claims == []


def test_a_kernel_refusal_quotes_onnx_runtime_at_the_node_it_names(cases, findings):
    """QuantizeLinear at opset 28: the registry's open-ended QuantizeLinear 25 kernel does not serve it."""
    [diag] = [d for d in findings["test_quantizelinear.onnx"] if d["code"] == "OL107"]
    assert diag["engine"] == "onnxruntime session" and diag["location"]["op_type"] == "QuantizeLinear"
    assert "Could not find an implementation for QuantizeLinear(28)" in diag["message"]
    [bernoulli] = [d for d in findings["test_bernoulli.onnx"] if d["code"] == "OL107"]
    assert bernoulli["location"]["op_type"] == "Bernoulli"
    assert "RandomUniformLike is in the function it expands for node" in bernoulli["message"]
