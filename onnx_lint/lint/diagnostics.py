"""The diagnostic record shared by rules, fixes, output formats and the server.

Its JSON form (``Diagnostic.to_json``) is a public interface (docs/cli.md): CI
scripts parse it, so fields are only ever added, never renamed or removed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from onnx_lint.model.edits import Edit, edit_from_json, edit_to_json

if TYPE_CHECKING:
    import onnx


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

    @classmethod
    def at_node(cls, graph: str, index: int, node: onnx.NodeProto, *, tensor: str | None = None,
                op_type: str | None = None) -> Location:
        """The ``index``-th node of a graph: named by the node (``None`` when unnamed), with its op_type."""
        return cls(f"{graph}/node[{index}]", tensor=tensor, node=node.name or None, op_type=op_type or node.op_type)

    @classmethod
    def at_entry(cls, graph: str, kind: str, index: int, tensor: str | None = None) -> Location:
        """The ``index``-th entry of a graph's ``kind`` list (``input``, ``output``, ``value_info``, ...)."""
        return cls(f"{graph}/{kind}[{index}]", tensor=tensor)

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


class Applicability(str, enum.Enum):
    """How far a fix may be trusted, as ruff grades it; ``--fix`` applies ``safe`` fixes only.

    Every fix onnx-lint has today is safe (docs/design.md, "The fix contract": annotations only, or node order only);
    ``unsafe`` and ``display-only`` exist so that a future fix that changes what a model
    computes can be offered without ``--fix`` ever applying it unasked.
    """

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


class FixAvailability(enum.Enum):
    """Whether a rule's findings come with a fix: declared beside each rule's code (ruff's ``FIX_AVAILABILITY``)."""

    NEVER = "never"
    SOMETIMES = "sometimes"
    ALWAYS = "always"

    @property
    def sentence(self) -> str:
        """The line the rule documentation shows, in ruff's words."""
        return {"never": "Fix is not available.", "sometimes": "Fix is sometimes available.",
                "always": "Fix is always available."}[self.value]

    def under_heading(self, explanation: str) -> str:
        """A rule's explanation with this availability under its heading, as ruff's rule pages put it.

        A rule that never fixes says nothing (as in ruff): its "Fix safety" section, if any, explains.
        """
        if self is FixAvailability.NEVER:
            return explanation
        heading, _, body = explanation.partition("\n\n")
        return f"{heading}\n\n{self.sentence}\n\n{body}" if body else f"{heading}\n\n{self.sentence}"


@dataclass(frozen=True)
class Fix:
    """The edits that repair one diagnostic, what they do in words, and how safe they are.

    Frozen: that a fix was applied is a new ``Fix`` (``Diagnostic.with_fix_applied``), never a
    flag flipped on a diagnostic someone else still holds.
    """

    edits: tuple[Edit, ...]
    title: str
    applicability: Applicability = Applicability.SAFE
    applied: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"applicability": self.applicability.value, "applied": self.applied, "title": self.title}


@dataclass(frozen=True)
class Diagnostic:
    """One finding of one rule at one location of one file; immutable once reported."""

    file: str
    code: str
    name: str
    severity: Severity
    message: str
    location: Location
    engine: str | None = None
    fix: Fix | None = None
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.engine is not None and type(self.engine) is not str:
            # An Engine member is a str; a plain one pickles to the server and back from the cache the same.
            object.__setattr__(self, "engine", str(self.engine))

    @property
    def fixable(self) -> bool:
        """Whether ``--fix`` would apply this diagnostic's fix: there is one, it is safe and not yet applied."""
        return self.fix is not None and not self.fix.applied and self.fix.applicability is Applicability.SAFE

    @property
    def fix_applied(self) -> bool:
        return self.fix is not None and self.fix.applied

    def with_fix_applied(self, note: str | None = None) -> Diagnostic:
        """This diagnostic as a fix reports it once its fix is in the model (a new object)."""
        if self.fix is None:
            raise ValueError(f"{self.code} at {self.location.display()} has no fix to apply")
        notes = (*self.notes, note) if note else self.notes
        return replace(self, fix=replace(self.fix, applied=True), notes=notes)

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
            fix = Fix(tuple(edits), record["fix"].get("title", ""), Applicability(record["fix"]["applicability"]),
                      record["fix"]["applied"])
        return cls(
            file=record["file"],
            code=record["code"],
            name=record["name"],
            severity=Severity(record["severity"]),
            message=record["message"],
            location=Location(**record["location"]),
            engine=record.get("engine"),
            fix=fix,
            notes=tuple(record.get("notes") or ()),
        )
