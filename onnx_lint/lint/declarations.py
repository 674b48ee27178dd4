"""A declared graph output or value_info entry beside what the graph computes for it.

The context builds them (``LintContext.declarations``); the conflict provers fill their
``conflicts``; rules read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from onnx_lint.lint.diagnostics import Location
from onnx_lint.model.shapes import Dim, TensorInfo

ConflictReason = Literal["concrete", "dynamic", "pinned", "param-reuse", "name"]


@dataclass(frozen=True)
class DimConflict:
    """One declared dim the graph contradicts, and how we know."""

    index: int
    declared: Dim
    derived: Dim
    reason: ConflictReason
    evidence: str = ""


@dataclass
class Declaration:
    """A graph output or value_info entry, with what the graph really computes for it."""

    graph: str
    kind: Literal["output", "value_info"]
    index: int
    name: str
    declared: TensorInfo | None
    derived: TensorInfo | None
    engine: str | None
    conflicts: list[DimConflict] = field(default_factory=list)

    @property
    def location(self) -> Location:
        return Location.at_entry(self.graph, self.kind, self.index, tensor=self.name)

    @property
    def comparable(self) -> bool:
        return (
            self.declared is not None
            and self.declared.dims is not None
            and self.derived is not None
            and self.derived.dims is not None
        )

    @property
    def dims_pair(self) -> tuple[tuple[Dim, ...], tuple[Dim, ...]]:
        """Declared and derived dims of a comparable declaration."""
        assert self.declared is not None and self.declared.dims is not None
        assert self.derived is not None and self.derived.dims is not None
        return self.declared.dims, self.derived.dims

    @property
    def declared_info(self) -> TensorInfo:
        """The declared type, for a declaration a check (``comparable``, a mismatch) proved declared."""
        if self.declared is None:
            raise ValueError(f"{self.kind} '{self.name}' declares no type")
        return self.declared

    @property
    def derived_info(self) -> TensorInfo:
        """The derived type, for a declaration a check (``comparable``, a mismatch) proved derived."""
        if self.derived is None:
            raise ValueError(f"no engine derives a type for {self.kind} '{self.name}'")
        return self.derived

    @property
    def rank_mismatch(self) -> bool:
        return self.comparable and self.declared_info.rank != self.derived_info.rank

    @property
    def shape_stale(self) -> bool:
        return self.rank_mismatch or bool(self.conflicts)

    @property
    def type_mismatch(self) -> bool:
        return (
            self.declared is not None
            and self.derived is not None
            and bool(self.declared.elem_type)
            and bool(self.derived.elem_type)
            and self.declared.elem_type != self.derived.elem_type
        )

    @property
    def underivable(self) -> bool:
        return self.derived is None or self.derived.dims is None


@dataclass(frozen=True)
class DuplicateDeclarations:
    """One tensor declared several times in one graph's value_info, and which entry is worth keeping."""

    graph: str
    name: str
    indexes: tuple[int, ...]
    keep: int
    identical: bool
    matches: bool  # the kept entry is what the graph computes

    @property
    def ordinal(self) -> int:
        """The kept entry's place among the tensor's entries (0: the first)."""
        return self.indexes.index(self.keep)
