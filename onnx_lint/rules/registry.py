"""The rule registry: every rule instance, in code order (importing it imports onnx)."""

from __future__ import annotations

from onnx_lint.lint.rule_api import Rule
from onnx_lint.rules.ol000_unreadable_model import UnreadableModel
from onnx_lint.rules.ol001_stale_rank_zero_output import StaleRankZeroOutput
from onnx_lint.rules.ol002_dim_param_mismatch import DimParamMismatch
from onnx_lint.rules.ol003_untyped_after_shape_inference import (
    UntypedAfterShapeInference,
)
from onnx_lint.rules.ol004_stale_output_rank import StaleOutputRank
from onnx_lint.rules.ol005_stale_value_info import StaleValueInfo
from onnx_lint.rules.ol006_stale_element_type import StaleElementType
from onnx_lint.rules.ol007_underivable_output_shape import UnderivableOutputShape
from onnx_lint.rules.ol008_inference_budget_exceeded import InferenceBudgetExceeded
from onnx_lint.rules.ol101_negative_dim_value import NegativeDimValue
from onnx_lint.rules.ol102_checker_error import CheckerError
from onnx_lint.rules.ol103_unsorted_nodes import UnsortedNodes
from onnx_lint.rules.ol104_undefined_tensor import UndefinedTensor
from onnx_lint.rules.ol105_duplicate_node_name import DuplicateNodeName
from onnx_lint.rules.ol106_runtime_version import RuntimeVersionUnsupported
from onnx_lint.rules.ol107_runtime_missing_kernel import RuntimeMissingKernel
from onnx_lint.rules.ol108_batch_baked_into_constant import BatchBakedIntoConstant
from onnx_lint.rules.ol109_duplicate_value_info import DuplicateValueInfo
from onnx_lint.rules.ol110_orphan_value_info import OrphanValueInfo
from onnx_lint.rules.ol201_fp16_overflow import Fp16Overflow
from onnx_lint.rules.ol202_qdq_present import QdqPresent
from onnx_lint.rules.ol203_qdq_invalid_scale import QdqInvalidScale
from onnx_lint.rules.ol204_qdq_pair_mismatch import QdqPairMismatch
from onnx_lint.rules.ol205_qdq_zero_point_type import QdqZeroPointType

ALL_RULES: tuple[Rule, ...] = (
    UnreadableModel(),
    StaleRankZeroOutput(),
    DimParamMismatch(),
    UntypedAfterShapeInference(),
    StaleOutputRank(),
    StaleValueInfo(),
    StaleElementType(),
    UnderivableOutputShape(),
    InferenceBudgetExceeded(),
    NegativeDimValue(),
    CheckerError(),
    UnsortedNodes(),
    UndefinedTensor(),
    DuplicateNodeName(),
    RuntimeVersionUnsupported(),
    RuntimeMissingKernel(),
    BatchBakedIntoConstant(),
    DuplicateValueInfo(),
    OrphanValueInfo(),
    Fp16Overflow(),
    QdqPresent(),
    QdqInvalidScale(),
    QdqPairMismatch(),
    QdqZeroPointType(),
)
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}


def get_rule(code_or_name: str) -> Rule | None:
    """A rule by code (``OL001``, any case) or kebab-case name."""
    key = code_or_name.strip()
    rule = RULES_BY_CODE.get(key.upper())
    if rule is not None:
        return rule
    return next((r for r in ALL_RULES if r.name == key.lower()), None)
