"""What linting (and possibly fixing) one file produced: light, so that cache hits import no onnx."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from onnx_lint.lint.diagnostics import Diagnostic, Location, Severity

# The engine's own finding: a file it cannot read (the rule module OL000 documents it).
UNREADABLE = ("OL000", "unreadable-model")


def is_unreadable(diagnostic: Diagnostic) -> bool:
    return diagnostic.code == UNREADABLE[0]


@dataclass
class FileResult:
    """What linting (and possibly fixing) one file produced."""

    path: Path
    display: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    unreadable: bool = False
    internal_errors: list[str] = field(default_factory=list)
    written: bool = False
    missing: bool = False  # a path on the command line that does not exist: named, but not a file checked
    diff: str | None = None
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] | None = None  # exclusive seconds per step, with ``check --timings``
    wall: float | None = None  # the whole timed run of this file, which the steps add up to

    @property
    def remaining(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if not d.fix_applied]

    @property
    def fixed(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.fix_applied]


def unreadable_diagnostic(display: str, problem: str) -> Diagnostic:
    return Diagnostic(display, *UNREADABLE, Severity.ERROR, problem, Location("model"))

