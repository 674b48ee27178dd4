"""No output format lets a name from the model steer a terminal, a CI log or a reader (issue 23, finding 9).

The model's output tensor and its producing node carry hostile names: an OSC title sequence
ended by BEL, an SGR colour, the 8-bit CSI, a right-to-left override and isolate (Trojan
Source), CR/LF followed by a forged ``::error`` workflow command, and ``%0A``. Every format
is run through the real CLI; healthy names are covered by the snapshot tests.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from onnx_lint.formats.escape import safe_text

FORGED = "::error file=README.md,line=1::forged"
HOSTILE_TENSOR = f"Y\x1b]0;pwned\x07\x1b[31mred\x9b2J\u202eevil\u2066x\u2069\r\n{FORGED}%0A\u2028end"
HOSTILE_NODE = f"mm\x1b[2K\u202d\n{FORGED}"
BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]


@pytest.fixture
def hostile(tmp_path):
    """A stale rank-0 output (OL001) whose tensor and node names are hostile."""
    graph = h.make_graph([h.make_node("MatMul", ["X", "W"], [HOSTILE_TENSOR], name=HOSTILE_NODE)], "g",
                         [h.make_tensor_value_info("X", T.FLOAT, [3, 4])],
                         [h.make_tensor_value_info(HOSTILE_TENSOR, T.FLOAT, [])],
                         [onnx.numpy_helper.from_array(__import__("numpy").ones((4, 5), "float32"), "W")])
    path = tmp_path / "hostile.onnx"
    onnx.save(h.make_model(graph, ir_version=10, opset_imports=[h.make_opsetid("", 21)]), path)
    return path


def _no_raw_controls(text: str) -> None:
    """Only layout newlines remain: no other control, no bidi character, no Unicode line separator."""
    bad = [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0 or c in BIDI
           or c in "\u2028\u2029"]
    assert bad == [], f"raw characters in the output: {bad!r}"


def _no_forged_line(text: str) -> None:
    assert not any(line.lstrip().startswith(FORGED) for line in text.splitlines()), text


@pytest.mark.parametrize("fmt", ["full", "concise", "github", "junit", "json", "sarif"])
def test_hostile_names_are_escaped_in_every_format(cli, hostile, fmt):
    run = cli("check", str(hostile), "--no-cache", "--select", "OL001", "--output-format", fmt)
    assert run.code == 1, run.err
    _no_raw_controls(run.out)
    _no_forged_line(run.out)
    if fmt in ("full", "concise", "github"):
        assert "Y\\x1b]0;pwned\\x07\\x1b[31mred\\x9b2J\\u202eevil\\u2066x\\u2069" in run.out  # shown, not obeyed


def test_github_annotations_are_one_command_per_line(cli, hostile):
    run = cli("check", str(hostile), "--no-cache", "--select", "OL001", "--output-format", "github")
    lines = run.out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("::error title=onnx-lint (OL001),file=hostile.onnx,line=1::")
    # the runner reads a command only at the start of a line; the props end at the first "::"
    assert lines[0].split("::", 2)[1] == "error title=onnx-lint (OL001),file=hostile.onnx,line=1"
    assert "%0D%0A" in lines[0] and "%250A" in lines[0]  # the runner's escaping: CR, LF and % itself


def test_junit_keeps_no_name_on_a_line_of_its_own(cli, hostile):
    run = cli("check", str(hostile), "--no-cache", "--select", "OL001", "--output-format", "junit")
    root = ET.fromstring(run.out.split("\n", 1)[1])
    [case] = root.iter("testcase")
    assert safe_text(HOSTILE_TENSOR) in case.get("name")
    assert all("\n" not in (element.text or "").strip("\n ") for element in root.iter())


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_json_and_sarif_keep_the_exact_name_escaped_by_the_serializer(cli, hostile, fmt):
    run = cli("check", str(hostile), "--no-cache", "--select", "OL001", "--output-format", fmt)
    assert run.out.isascii(), "a raw non-ASCII character reached the output"
    found = json.loads(run.out)
    if fmt == "json":
        assert found[0]["location"]["tensor"] == HOSTILE_TENSOR
    else:
        [result] = found["runs"][0]["results"]
        assert result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"].endswith(HOSTILE_TENSOR)


def test_healthy_names_are_unchanged_by_the_escaping():
    for name in ("Y", "graph/output[0] 'scores'", "p2o.DynamicDimension.3", "名前", "tab\there", "naïve-é"):
        assert safe_text(name, keep_layout=True) == name


def test_the_quantize_accuracy_table_escapes_output_names():
    """``quantize`` prints a table of the model's outputs: a hostile output name gets no line of its own there."""
    from onnx_lint.quantization.pipeline import QuantizeReport
    from onnx_lint.quantization.report import format_table
    from onnx_lint.quantization.validation import OutputAgreement

    report = QuantizeReport("m.onnx", "q.onnx", {})
    report.outputs = [OutputAgreement(HOSTILE_TENSOR, 0.999, 0.01, (2, 3), 1.0, 0.001),
                      OutputAgreement("scores", 0.998, 0.02, (2,), 1.0, 0.002)]
    table = format_table(report)
    _no_raw_controls(table)
    _no_forged_line(table)
    assert len(table.splitlines()) == 4 and table.splitlines()[3].startswith("scores ")
