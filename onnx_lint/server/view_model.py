"""The textual view as data: its text and where each finding's location is in it.

Kept apart from the rendering (``text_view``, which needs onnx) so that the
server's own process can hold and query views without importing onnx.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Anchor:
    """A span on one line of the view (0-based line, character offsets in code points)."""

    line: int
    start: int
    end: int


@dataclass
class ModelView:
    """The text, and where each location path (and each produced tensor) appears in it."""

    text: str
    anchors: dict[str, Anchor] = field(default_factory=dict)
    mapped: bool = True

    @functools.cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def find(self, path: str, tensor: str | None = None) -> Anchor:
        """The best anchor for a diagnostic location: exact, then the producer, then the graph."""
        if path in self.anchors:
            return self.anchors[path]
        if tensor is not None and f"{path}#{tensor}" in self.anchors:
            return self.anchors[f"{path}#{tensor}"]
        graph = path
        while graph:
            if graph in self.anchors:
                return self.anchors[graph]
            graph = graph.rpartition("/")[0]
        return Anchor(0, 0, 0)

    def to_json(self) -> dict:
        return {"text": self.text, "mapped": self.mapped,
                "anchors": {k: [a.line, a.start, a.end] for k, a in self.anchors.items()}}

    @classmethod
    def from_json(cls, data: dict) -> ModelView:
        return cls(data["text"], {k: Anchor(*v) for k, v in data["anchors"].items()}, data["mapped"])
