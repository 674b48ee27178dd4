"""The provenance record `onnx-lint quantize` writes (docs/quantize.md, "What the written model says about
itself"): OL202/OL205 trust it only while the model's Q/DQ are as written. A real quantize run is in
``tests/test_quantize.py``; these build the record onto small Q/DQ models, as a copied record would be."""

from __future__ import annotations

import json

import onnx

import onnx_lint
from examples import readiness
from onnx_lint.model.provenance import KEY, QuantizeRecord, read_record, stamp


def _record(qdq_nodes: int) -> QuantizeRecord:
    return QuantizeRecord("0.1.0", "model.onnx", "entropy", {"type": "int8", "symmetric": False},
                          {"type": "int8", "symmetric": True, "per_channel": True}, qdq_nodes)


def _qdq_count(model: onnx.ModelProto) -> int:
    return sum(n.op_type in ("QuantizeLinear", "DequantizeLinear") for n in model.graph.node)


def _codes(model: onnx.ModelProto) -> dict[str, str]:
    found = onnx_lint.check(model, select=["OL2"]).diagnostics
    return {d.code: d.message for d in found if d.code in ("OL202", "OL205")}


def test_a_qdq_model_with_a_matching_record_gets_no_qdq_notes_and_without_one_gets_both():
    model = readiness.qdq_uint8_zero_point()
    assert set(_codes(model)) == {"OL202", "OL205"}  # no record: a Q/DQ model like any other
    stamp(model, _record(_qdq_count(model)))
    assert _codes(model) == {}


def test_a_record_whose_qdq_count_no_longer_matches_is_reported_as_before_and_says_why():
    """A record copied onto another model, or Q/DQ edited after quantize: the notes come back, naming it."""
    model = readiness.qdq_uint8_zero_point()
    stamp(model, _record(_qdq_count(model) + 2))
    found = _codes(model)
    assert set(found) == {"OL202", "OL205"}
    for message in found.values():
        assert f"its {KEY} record lists {_qdq_count(model) + 2} Q/DQ node(s)" in message
        assert "edited after onnx-lint quantize wrote it" in message
    assert "quantize the float original instead" in found["OL202"] and "TensorRT" in found["OL205"]


def test_a_record_that_is_not_ours_is_no_record():
    model = readiness.qdq_uint8_zero_point()
    for value in ("not json", json.dumps({**_record(_qdq_count(model)).to_json(), "tool": "other"}),
                  json.dumps({"tool": "onnx-lint"})):
        del model.metadata_props[:]
        model.metadata_props.add(key=KEY, value=value)
        assert read_record(model) is None
        assert set(_codes(model)) == {"OL202", "OL205"}


def test_stamping_keeps_other_tools_metadata_and_replaces_only_our_earlier_record():
    model = readiness.qdq_uint8_zero_point()
    model.metadata_props.add(key="onnx.quant.pre_process", value="onnxruntime.quant")
    stamp(model, _record(1))
    stamp(model, _record(_qdq_count(model)))
    assert [p.key for p in model.metadata_props] == ["onnx.quant.pre_process", KEY]
    record = read_record(onnx.ModelProto.FromString(model.SerializeToString()))
    assert record == _record(_qdq_count(model))
    assert record.describe() == ("Quantized by onnx-lint 0.1.0 from model.onnx, entropy calibration, INT8 "
                                 "(asymmetric) activations, INT8 (symmetric, per-channel) weights, FP16 elsewhere "
                                 f"({_qdq_count(model)} Q/DQ nodes)")


def test_the_model_views_line_says_where_the_model_came_from_and_when_its_qdq_were_edited_since(tmp_path):
    from onnx_lint.lint.context import LintContext
    from onnx_lint.model.load import read_model
    from onnx_lint.server.jobs import provenance_line

    def line(model: onnx.ModelProto) -> str | None:
        path = tmp_path / "m.onnx"
        onnx.save(model, path)
        return provenance_line(LintContext(read_model(path), str(path)))

    model = readiness.qdq_uint8_zero_point()
    assert line(model) is None
    count = _qdq_count(model)
    stamp(model, _record(count))
    assert line(model) == _record(count).describe()
    stamp(model, _record(count + 2))
    edited = f"; its Q/DQ were edited since ({count + 2} recorded, {count} now)"
    assert line(model) == _record(count + 2).describe() + edited
