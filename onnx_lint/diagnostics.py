"""The diagnostic record shared by rules, fixes, output formats and the server.

Its JSON form (``Diagnostic.to_json``) is a public interface (SPEC 6): CI
scripts parse it, so fields are only ever added, never renamed or removed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from onnx_lint.edits import Edit, edit_from_json, edit_to_json


class Severity(str, enum.Enum):
    """How bad a finding is; ``error`` and ``warning`` make the exit code 1."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def fails(self) -> bool:
        """Whether a remaining diagnostic of this severity fails a CI run."""
        return self is not Severity.INFO


@dataclass(frozen=True)
class Location:
    """Where inside the model a finding is: a graph path plus the names involved."""

    path: str
    tensor: str | None = None
    node: str | None = None
    op_type: str | None = None

    def display(self) -> str:
        """``graph/output[0] 'Y'`` or ``graph/node[3] 'TopK_0' (TopK)``."""
        text = self.path
        label = self.node if self.node is not None else self.tensor
        if label:
            text += f" '{label}'"
        if self.op_type:
            text += f" ({self.op_type})"
        return text

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "tensor": self.tensor, "node": self.node, "op_type": self.op_type}


@dataclass
class Fix:
    """Annotation edits that repair one diagnostic; always safe for OL001-OL006."""

    edits: list[Edit]
    applicability: str = "safe"
    applied: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"applicability": self.applicability, "applied": self.applied}


@dataclass
class Diagnostic:
    """One finding of one rule at one location of one file."""

    file: str
    code: str
    name: str
    severity: Severity
    message: str
    location: Location
    engine: str | None = None
    fix: Fix | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def fixable(self) -> bool:
        return self.fix is not None and not self.fix.applied

    def key(self) -> tuple[str, str, str | None]:
        """Identifies a finding across re-lints (the server's quick fixes use it)."""
        return (self.code, self.location.path, self.location.tensor or self.location.node)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "message": self.message,
            "location": self.location.to_json(),
            "engine": self.engine,
            "fix": self.fix.to_json() if self.fix else None,
        }

    def to_record(self) -> dict[str, Any]:
        """The JSON form plus the fix edits and notes: enough to rebuild the diagnostic."""
        record = self.to_json()
        record["edits"] = [edit_to_json(e) for e in self.fix.edits] if self.fix else None
        record["notes"] = list(self.notes)
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Diagnostic:
        fix = None
        if record.get("fix") is not None:
            edits = [edit_from_json(e) for e in record.get("edits") or []]
            fix = Fix(edits, record["fix"]["applicability"], record["fix"]["applied"])
        return cls(
            file=record["file"],
            code=record["code"],
            name=record["name"],
            severity=Severity(record["severity"]),
            message=record["message"],
            location=Location(**record["location"]),
            engine=record.get("engine"),
            fix=fix,
            notes=list(record.get("notes") or []),
        )
