"""What several rules share: one wording for one fact, so two rules never describe it two ways.

Rules import this module, never each other (the independence contract in pyproject.toml).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnx_lint.lint.declarations import DimConflict
from onnx_lint.model.provenance import KEY, read_record

if TYPE_CHECKING:
    import onnx

    from onnx_lint.lint.context import LintContext
    from onnx_lint.lint.declarations import Declaration


def describe_conflict(conflict: DimConflict) -> str:
    """One clause saying what is wrong with a dim and how we know."""
    if conflict.reason == "concrete":
        return f"dim {conflict.index} is declared {conflict.declared} but the graph computes {conflict.derived}"
    if conflict.reason in ("param-reuse", "name"):
        return f"dim {conflict.index}: {conflict.evidence}"
    return f"dim {conflict.index} is declared {conflict.declared}, but {conflict.evidence}"


def unproven_clause(ctx: LintContext, decl: Declaration) -> str:
    """The clause naming the declared numbers a fix leaves unknown because no engine proves them ("" if none)."""
    dropped = ctx.unproven_declared(decl)
    if not dropped:
        return ""
    declared = decl.declared_info.dims or ()
    shown = ", ".join(f"dim {i} (declared {declared[i]})" for i in dropped)
    return (f"; {shown}: no engine proves {'this number' if len(dropped) == 1 else 'these numbers'} "
            "(the graph's dim is anonymous and the pinned inferences do not fix it), so the fix leaves it unknown")


def node_label(node: onnx.NodeProto) -> str:
    """How a message names a node: its name, or what it is when it has none."""
    return node.name or f"<unnamed {node.op_type}>"


def quantize_record_note(model: onnx.ModelProto, qdq_count: int) -> str | None:
    """None when ``model`` is an `onnx-lint quantize` output whose Q/DQ nodes are as written: its notes about
    Q/DQ are about what onnx-lint itself just wrote, and the quantize report already said them. Otherwise the
    clause a Q/DQ rule adds to its message ("" for a model without our record)."""
    record = read_record(model)
    if record is None:
        return ""
    if record.qdq_nodes == qdq_count:
        return None
    return (f" (its {KEY} record lists {record.qdq_nodes} Q/DQ node(s), so the Q/DQ were edited after "
            "onnx-lint quantize wrote it)")
