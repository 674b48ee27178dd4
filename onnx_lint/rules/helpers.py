"""What several rules share: one wording for one fact, so two rules never describe it two ways.

Rules import this module, never each other (the independence contract in pyproject.toml).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnx_lint.lint.declarations import DimConflict

if TYPE_CHECKING:
    import onnx


def describe_conflict(conflict: DimConflict) -> str:
    """One clause saying what is wrong with a dim and how we know."""
    if conflict.reason == "concrete":
        return f"dim {conflict.index} is declared {conflict.declared} but the graph computes {conflict.derived}"
    if conflict.reason in ("param-reuse", "name"):
        return f"dim {conflict.index}: {conflict.evidence}"
    return f"dim {conflict.index} is declared {conflict.declared}, but {conflict.evidence}"


def node_label(node: onnx.NodeProto) -> str:
    """How a message names a node: its name, or what it is when it has none."""
    return node.name or f"<unnamed {node.op_type}>"
