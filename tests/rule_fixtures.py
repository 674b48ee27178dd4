"""One table for every rule: the model that shows its defect, the healthy twin, and what each gives.

``test_rule_fixtures.py`` runs every row (exactly the expected codes on the bad model, nothing of
warning or error level on the twin, ``--fix`` leaves the twin's bytes alone) and keeps one snapshot
per rule under ``tests/snapshots/rules/``. ``test_rule_completeness.py`` fails when a rule module
has no row. ``scripts/add_rule.py`` appends a row for a new rule above the ``add_rule`` marker.

Builders return a ``ModelProto``, or raw bytes for a file that is no model at all (OL000).
``variants`` are further bad models the rule's snapshot shows (a subgraph, another engine).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from examples import defects, readiness
from examples.defects import IR_VERSION, OPSET

Builder = Callable[[], "onnx.ModelProto | bytes"]


@dataclass(frozen=True)
class Fixture:
    """A rule's bad model, its healthy twin, the codes each gives, and the CLI options both need."""

    bad: Builder
    healthy: Builder
    codes: frozenset[str]
    healthy_codes: frozenset[str] = frozenset()  # info notes only: the twin must stay free of warnings
    args: tuple[str, ...] = ()
    variants: dict[str, Builder] = field(default_factory=dict)


def _model(nodes, inputs, outputs, initializers=(), value_info=(), extra_opsets=()) -> onnx.ModelProto:
    graph = h.make_graph(list(nodes), "fixture", list(inputs), list(outputs), list(initializers),
                         value_info=list(value_info))
    opsets = [h.make_opsetid("", OPSET)] + [h.make_opsetid(d, v) for d, v in extra_opsets]
    return h.make_model(graph, opset_imports=opsets, ir_version=IR_VERSION, producer_name="onnx-lint-fixtures")


def _vi(name: str, dims, elem_type: int = T.FLOAT) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem_type, dims)


# -- OL000: bytes no ONNX reader takes ------------------------------------------------------------
def unreadable_model() -> bytes:
    """A file named .onnx that holds text: what a failed download or a Git LFS pointer leaves."""
    return b"version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 1\n"


# -- OL008: an engine stopped at its time budget ----------------------------------------------------
def behind_symbolic_only() -> onnx.ModelProto:
    """A com.microsoft Gelu only ONNX Runtime's symbolic engine shapes, then a stale rank-0 output."""
    return _model([h.make_node("Gelu", ["X"], ["g"], domain="com.microsoft", name="Gelu_0"),
                   h.make_node("Relu", ["g"], ["Y"], name="Relu_0")],
                  [_vi("X", ["batch", 16])], [_vi("Y", [])], extra_opsets=[("com.microsoft", 1)])


# -- OL101: a negative dim_value -------------------------------------------------------------------
def negative_dim(bad: bool = True) -> onnx.ModelProto:
    """paddle2onnx's ``-1`` for a dynamic dim on the input and output, instead of a dim_param."""
    dim = -1 if bad else "batch"
    return _model([h.make_node("Relu", ["X"], ["Y"], name="Relu_0")], [_vi("X", [dim, 4])], [_vi("Y", [dim, 4])])


# -- OL109: a tensor declared twice in value_info ------------------------------------------------
def duplicate_value_info(bad: bool = True) -> onnx.ModelProto:
    """onnxslim's copies: 'h' declared twice, one copy stale, where the graph computes [batch, 4]."""
    copies = [_vi("h", ["batch", 8]), _vi("h", ["batch", 4])] if bad else [_vi("h", ["batch", 4])]
    return _model([h.make_node("Relu", ["X"], ["h"], name="Relu_0"), h.make_node("Neg", ["h"], ["Y"], name="Neg_0")],
                  [_vi("X", ["batch", 4])], [_vi("Y", ["batch", 4])], value_info=copies)


# -- OL110: value_info for tensors nothing defines -----------------------------------------------
def orphan_value_info(bad: bool = True) -> onnx.ModelProto:
    """What ONNX Runtime's ``quant_pre_process`` leaves after its optimizer fused the node away."""
    weights = numpy_helper.from_array(np.ones((4, 4), np.float32), "W")
    entries = [_vi("m", ["N", 4])] + ([_vi("gone", ["N", 7])] if bad else [])
    return _model([h.make_node("MatMul", ["X", "W"], ["m"], name="MatMul_0"),
                   h.make_node("Relu", ["m"], ["Y"], name="Relu_0")],
                  [_vi("X", ["N", 4])], [_vi("Y", ["N", 4])], [weights], value_info=entries)


def _twin(build: Callable[..., onnx.ModelProto]) -> tuple[Builder, Builder]:
    """The (bad, healthy) pair of a builder that takes ``bad``."""
    return partial(build, True), partial(build, False)


def _codes(*codes: str) -> frozenset[str]:
    return frozenset(codes)


# code -> its fixture, in code order
FIXTURES: dict[str, Fixture] = {
    "OL000": Fixture(unreadable_model, defects.healthy_matmul, _codes("OL000")),
    "OL001": Fixture(defects.stale_rank0_output, defects.healthy_matmul, _codes("OL001"), variants={
        "rank0_feeding_reduce_mean": defects.rank0_feeding_reduce_mean,
        "if_branch_stale": defects.if_branch_stale,
        "symbolic_fallback": defects.symbolic_fallback,
        "weakly_typed_mlp": defects.weakly_typed_mlp}),
    "OL002": Fixture(defects.concrete_dim_conflict, defects.renamed_batch, _codes("OL002"), variants={
        "pinned_batch": defects.pinned_batch,
        "pinned_batch_through_reshape": defects.pinned_batch_through_reshape,
        "loop_body_stale": defects.loop_body_stale}),
    "OL003": Fixture(defects.topk_untyped, defects.healthy_matmul, _codes("OL003"), variants={
        "symbolic_fallback": defects.symbolic_fallback}),
    "OL004": Fixture(defects.stale_output_rank, defects.renamed_batch, _codes("OL004")),
    "OL005": Fixture(defects.stale_value_info, defects.dynamo_style_conv, _codes("OL005"), variants={
        "dynamo_style_conv_stale_bias": partial(defects.dynamo_style_conv, (5,))}),
    "OL006": Fixture(defects.stale_element_type, defects.healthy_matmul, _codes("OL006")),
    "OL007": Fixture(defects.custom_op_output, defects.healthy_matmul, _codes("OL007")),
    # OL003 notes the untyped Gelu output on its own; this row is about the budget (OL007: nothing shaped Y).
    "OL008": Fixture(behind_symbolic_only, defects.healthy_matmul, _codes("OL007", "OL008"),
                     args=("--inference-budget", "0.001", "--ignore", "OL003")),
    "OL101": Fixture(*_twin(negative_dim), _codes("OL101")),
    "OL102": Fixture(*_twin(readiness.checker_errors), _codes("OL102")),
    "OL103": Fixture(*_twin(readiness.unsorted_nodes), _codes("OL103")),
    "OL104": Fixture(*_twin(readiness.undefined_output), _codes("OL104")),
    "OL105": Fixture(*_twin(readiness.duplicate_node_name), _codes("OL105")),
    "OL106": Fixture(*_twin(readiness.runtime_opset_too_new), _codes("OL106")),
    "OL107": Fixture(*_twin(readiness.runtime_missing_kernel), _codes("OL107"), variants={
        "runtime_old_opset": readiness.runtime_old_opset}),
    "OL108": Fixture(*_twin(readiness.batch_baked_reshape), _codes("OL108")),
    "OL109": Fixture(*_twin(duplicate_value_info), _codes("OL109")),
    "OL110": Fixture(*_twin(orphan_value_info), _codes("OL110")),
    "OL201": Fixture(*_twin(readiness.fp16_overflow), _codes("OL201")),
    "OL202": Fixture(*_twin(readiness.qdq_present), _codes("OL202")),
    "OL203": Fixture(*_twin(readiness.qdq_zero_scale), _codes("OL202", "OL203"), healthy_codes=_codes("OL202")),
    "OL204": Fixture(*_twin(readiness.qdq_pair_mismatch), _codes("OL202", "OL204"), healthy_codes=_codes("OL202")),
    "OL205": Fixture(*_twin(readiness.qdq_uint8_zero_point), _codes("OL202", "OL205"),
                     healthy_codes=_codes("OL202")),
    # add_rule: new rows go above this line
}
