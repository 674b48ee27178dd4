"""A declared graph output or value_info entry beside what the graph computes for it.

The context builds them (``LintContext.declarations``); the conflict provers fill their
``conflicts``; rules read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from onnx_lint.lint.diagnostics import Location
from onnx_lint.model.edits import DimProof
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
    kind: Literal["output", "value_info", "input"]  # input: a Loop/Scan body's carried state (lint/loop_state.py)
    index: int
    name: str
    declared: TensorInfo | None
    derived: TensorInfo | None
    engine: str | None  # the engine a finding names: the one that derived the type, or proved the conflict
    conflicts: list[DimConflict] = field(default_factory=list)
    # The engine that derived ``derived`` (``engine`` moves on to the prover of a conflict): what a number
    # the fix writes is proven by (lint/proofs.py).
    derived_by: str | None = None
    # Declared numbers facing an anonymous derived dim that the pinned inferences derive as that very
    # number in both runs (lint/conflicts.py): the only declared numbers a fix may keep there.
    confirmed: dict[int, DimProof] = field(default_factory=dict)
    # A body's carried-state input: the dims a fix may write (the body hands them on unchanged at every
    # iteration), and their numbers' proofs. ``None`` for every other declaration.
    state_agrees: set[int] | None = None
    number_proofs: dict[int, DimProof] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.derived_by is None:
            self.derived_by = self.engine

    def set_derived(self, derived: TensorInfo | None, engine: str | None) -> None:
        """What another engine derived for the declaration (the fallbacks after ONNX's inference)."""
        self.derived, self.engine, self.derived_by = derived, engine, engine

    @property
    def what(self) -> str:
        """How a message names the declaration's kind: ``graph output``, ``value_info``, ``body state input``."""
        return {"output": "graph output", "value_info": "value_info", "input": "body state input"}[self.kind]

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
