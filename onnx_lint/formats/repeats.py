"""Findings that repeat one artifact of an exporter: said once, with their count, where people read them.

Some exporters repeat one thing by construction: optimum's merged decoders give both branches of their
If the same node names (OL105: 371 findings on a small T5), onnxslim and ultralytics write value_info
entries twice (OL109: one finding per tensor). Each finding is true, and each stays one entry in the
formats tools read (JSON, SARIF, JUnit, GitHub annotations); the text formats and the editor's
diagnostics say such a run once, with its count, at its first location.

Only findings that cannot be told apart by their cause are grouped: one rule listed in ``REPEATING``,
one file, info severity, the same fix availability, engine and notes, and the same cause as the rule's
entry reads it (for OL105 the two graphs that share the names, for OL109 the graph whose value_info
repeats). A finding whose cause cannot be read is never grouped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from onnx_lint.lint.diagnostics import Diagnostic, Severity

# More findings of one cause than this are said once; up to this many, each keeps its own line.
THRESHOLD = 5

_ENTRY = re.compile(r"[A-Za-z_]+\[\d+\]")  # the last step of a path to a node or a list entry: node[3]
# OL105's wording: the path where the name was used first (see its message in ol105_duplicate_node_name.py)
_ALSO_USED_BY = re.compile(r"is also used by (\S+?);")


def graph_of(path: str) -> str:
    """The graph an entry sits in: ``graph/node[0]/then_branch`` for ``graph/node[0]/then_branch/node[3]``."""
    head, _, last = path.rpartition("/")
    return head if head and _ENTRY.fullmatch(last) else path


def _shared_node_names(d: Diagnostic) -> str | None:
    """OL105: the two graphs whose nodes share the names (the If's two branches, in optimum's merged decoders)."""
    match = _ALSO_USED_BY.search(d.message)
    if match is None:
        return None
    here, there = sorted((graph_of(d.location.path), graph_of(match.group(1))))
    if here == there:
        return f"node names used more than once in {here}"
    if here.endswith("/else_branch") and there == here.removesuffix("/else_branch") + "/then_branch":
        return f"node names the two branches of the If at {here.removesuffix('/else_branch')} share"
    return f"node names {here} and {there} share"


def _repeated_value_info(d: Diagnostic) -> str | None:
    """OL109: the graph whose value_info declares tensors more than once."""
    return f"tensors declared more than once in the value_info of {graph_of(d.location.path)}"


# Rule code -> how to read a finding's cause, said as what the other findings of its group are
# ("and 370 more <cause>"). Only rules that report one artifact an exporter repeats by construction
# belong here. OL110, OL202 and OL205 need no entry: each already says its whole run in one finding.
REPEATING: dict[str, Callable[[Diagnostic], str | None]] = {
    "OL105": _shared_node_names,
    "OL109": _repeated_value_info,
}


@dataclass(frozen=True)
class Repeat:
    """More than ``THRESHOLD`` findings of one cause; the first stands for them all where people read."""

    findings: tuple[Diagnostic, ...]
    cause: str

    @property
    def first(self) -> Diagnostic:
        return self.findings[0]

    @property
    def others(self) -> tuple[Diagnostic, ...]:
        return self.findings[1:]

    def more(self) -> str:
        """``and 370 more node names the two branches of the If at graph/node[0] share``."""
        return f"and {len(self.others)} more {self.cause}"


def _cause(d: Diagnostic) -> str | None:
    """The cause a finding shares with the others of its group; None: it is always said on its own.

    Warnings and errors are never grouped: each is something to act on, and fails a run, on its own.
    """
    read = REPEATING.get(d.code)
    return read(d) if read is not None and d.severity is Severity.INFO else None


def said_once(diagnostics: Sequence[Diagnostic], threshold: int = THRESHOLD) -> list[Diagnostic | Repeat]:
    """The diagnostics in their order, each group of more than ``threshold`` findings of one cause
    replaced by one ``Repeat`` at its first member's place."""
    keys: list[tuple[Hashable, ...] | None] = []
    groups: dict[tuple[Hashable, ...], list[Diagnostic]] = {}
    for d in diagnostics:
        cause = _cause(d)
        key: tuple[Hashable, ...] | None = None
        if cause is not None:
            key = (cause, d.file, d.code, d.severity, d.fixable, d.fix_applied, d.engine, d.notes)
        keys.append(key)
        if key is not None:
            groups.setdefault(key, []).append(d)
    said: list[Diagnostic | Repeat] = []
    for key, d in zip(keys, diagnostics):
        members = groups[key] if key is not None else [d]
        if len(members) <= threshold:
            said.append(d)
        elif key is not None and d is members[0]:
            said.append(Repeat(tuple(members), str(key[0])))
    return said
