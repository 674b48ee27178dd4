"""Lint outcomes, cached by file content, enabled rules and whether ONNX Runtime may probe.

A re-open of an unchanged file is answered from memory: first by its stat
(size, mtime, inode) without reading a byte, then by a digest of its bytes
(a file rewritten with the same content, or copied) before any worker runs.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from onnx_lint.lint.diagnostics import Diagnostic
from onnx_lint.server.view_model import ModelView

CACHE_ENTRIES = 256
_CHUNK = 1 << 20


# (file digest, enabled codes, runtime probe on, inference budget in seconds or None for the computed one)
OutcomeKey = tuple[str, tuple[str, ...], bool, "float | None"]

@dataclass
class Outcome:
    """What linting one version of one file under one rule selection gave."""

    digest: str
    enabled: tuple[str, ...]
    diagnostics: list[Diagnostic]
    errors: list[str] = field(default_factory=list)
    summary: dict | None = None
    view: ModelView | None = None
    runtime_probe: bool = True
    inference_budget: float | None = None

    @property
    def key(self) -> OutcomeKey:
        """What the cache knows this outcome by."""
        return (self.digest, self.enabled, self.runtime_probe, self.inference_budget)

    @property
    def result_id(self) -> str:
        """Identifies this outcome for pull diagnostics' ``previousResultId``."""
        selection = ",".join(self.enabled) + ("" if self.runtime_probe else ";no-probe") + (
            "" if self.inference_budget is None else f";budget={self.inference_budget:g}")
        return f"{self.digest[:24]}:{hashlib.blake2b(selection.encode(), digest_size=6).hexdigest()}"


def stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def file_digest(path: Path) -> str:
    """BLAKE2b of the file's bytes (run in a thread: hashlib releases the GIL)."""
    digest = hashlib.blake2b(digest_size=20)
    with open(path, "rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class OutcomeCache:
    """Outcomes by (digest, enabled, runtime_probe, inference_budget), plus the digest of each path at a known
    stat."""

    def __init__(self, entries: int = CACHE_ENTRIES) -> None:
        self._entries = entries
        self._outcomes: OrderedDict[OutcomeKey, Outcome] = OrderedDict()
        self._digests: dict[Path, tuple[tuple[int, int, int], str]] = {}

    def digest_at(self, path: Path, stat: tuple[int, int, int]) -> str | None:
        known = self._digests.get(path)
        return known[1] if known and known[0] == stat else None

    def remember_digest(self, path: Path, stat: tuple[int, int, int], digest: str) -> None:
        self._digests[path] = (stat, digest)

    def get(self, digest: str, enabled: tuple[str, ...], runtime_probe: bool = True,
            inference_budget: float | None = None) -> Outcome | None:
        key = (digest, enabled, runtime_probe, inference_budget)
        outcome = self._outcomes.get(key)
        if outcome is not None:
            self._outcomes.move_to_end(key)
        return outcome

    def put(self, outcome: Outcome) -> None:
        self._outcomes[outcome.key] = outcome
        self._outcomes.move_to_end(outcome.key)
        while len(self._outcomes) > self._entries:
            self._outcomes.popitem(last=False)

    def forget(self, path: Path) -> None:
        self._digests.pop(path, None)
