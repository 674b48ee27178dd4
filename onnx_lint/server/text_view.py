"""The read-only textual view of a model: ONNX text syntax with a line for every finding.

Editors that only understand text get real ranges and lightbulbs here: the
view is ``onnx.printer``'s output, and a walk over the model in step with the
printed lines records where each graph input, output, value_info and node
is (an *anchor*), keyed by the same graph paths the diagnostics use.

Weights are shown by their size (``onnx_lint.model.text_form``, the printer ``--diff`` uses
too): a real model's weights would otherwise make the view hundreds of megabytes of numbers.
"""

from __future__ import annotations

import onnx

from onnx_lint.model.graphs import ROOT
from onnx_lint.model.text_form import model_text
from onnx_lint.server.view_model import Anchor, ModelView

_NAME_BEFORE = " ,(<[\t"
_NAME_AFTER = " ,)>=]\t"


def _name_span(line: str, name: str, start: int) -> tuple[int, int] | None:
    """Where ``name`` occurs as a whole token in ``line`` at or after ``start``."""
    if not name:
        return None
    pos = line.find(name, start)
    while pos >= 0:
        end = pos + len(name)
        before_ok = pos == 0 or line[pos - 1] in _NAME_BEFORE
        after_ok = end == len(line) or line[end] in _NAME_AFTER
        if before_ok and after_ok:
            return pos, end
        pos = line.find(name, pos + 1)
    return None


class _Mismatch(Exception):
    """The printed text does not have the layout the walk expects; fall back to line 0."""


class _Walker:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.anchors: dict[str, Anchor] = {}

    def _line(self, index: int) -> str:
        if index >= len(self.lines):
            raise _Mismatch(index)
        return self.lines[index]

    def graph(self, graph: onnx.GraphProto, path: str, header: int, column: int) -> int:
        """Anchor one graph whose header starts at ``column`` of line ``header``; returns its closing line."""
        line = self._line(header)
        arrow = line.find("=>", column)
        if arrow < 0:
            raise _Mismatch(header)
        self.anchors[path] = Anchor(header, column, len(line.rstrip(" {")))
        self._values(graph.input, f"{path}/input", header, column, arrow)
        self._values(graph.output, f"{path}/output", header, arrow, len(line))
        cursor = header
        if not line.rstrip().endswith("{"):
            cursor = header + 1
            block_start = cursor
            while self._line(cursor).strip() != "{":
                cursor += 1
            for i, value in enumerate(graph.value_info):
                for row in range(block_start, cursor):
                    span = _name_span(self.lines[row], value.name, 0)
                    if span:
                        self.anchors[f"{path}/value_info[{i}]"] = Anchor(row, *span)
                        break
        cursor += 1
        for i, node in enumerate(graph.node):
            cursor = self.node(node, f"{path}/node[{i}]", path, cursor)
        if not self._line(cursor).lstrip().startswith("}"):
            raise _Mismatch(cursor)
        return cursor

    def _values(self, values, prefix: str, row: int, start: int, stop: int) -> None:
        line = self.lines[row][:stop]
        pos = start
        for i, value in enumerate(values):
            span = _name_span(line, value.name, pos)
            if span is None:
                continue
            self.anchors[f"{prefix}[{i}]"] = Anchor(row, *span)
            pos = span[1]

    def node(self, node: onnx.NodeProto, path: str, graph_path: str, row: int) -> int:
        """Anchor a node printed from line ``row``; returns the line after it."""
        line = self._line(row)
        if node.op_type not in line or (node.name and f"[{node.name}]" not in line):
            raise _Mismatch(row)
        indent = len(line) - len(line.lstrip())
        self.anchors[path] = Anchor(row, indent, len(line.rstrip()))
        for output in node.output:
            if output:
                self.anchors.setdefault(f"{graph_path}#{output}", Anchor(row, indent, len(line.rstrip())))
        cursor, column = row, 0
        closing = None
        for attr in node.attribute:
            subgraphs = [(attr.name, attr.g)] if attr.type == onnx.AttributeProto.GRAPH else []
            if attr.type == onnx.AttributeProto.GRAPHS:
                subgraphs = [(f"{attr.name}[{j}]", g) for j, g in enumerate(attr.graphs)]
            for segment, sub in subgraphs:
                cursor, column = self._find(f"{attr.name}: graph", cursor, column)
                start = self.lines[cursor].find("= ", column) + 2
                closing = self.graph(sub, f"{path}/{segment}", cursor, start)
                cursor, column = closing, 0
        return row + 1 if closing is None else closing + 1

    def _find(self, needle: str, row: int, column: int) -> tuple[int, int]:
        while True:
            pos = self._line(row).find(needle, column)
            if pos >= 0:
                return row, pos
            row, column = row + 1, 0


def _main_header(lines: list[str]) -> int:
    for i, line in enumerate(lines):
        if line and not line[0].isspace() and line[0] not in "<>":
            return i
    raise _Mismatch(0)


def render_view(model: onnx.ModelProto) -> ModelView:
    """The view of a model; ``mapped`` is false when the layout could not be followed."""
    text = model_text(model)
    lines = text.split("\n")
    walker = _Walker(lines)
    walker.anchors["model"] = Anchor(0, 0, len(lines[0]))
    try:
        walker.graph(model.graph, ROOT, _main_header(lines), 0)
    except _Mismatch:
        return ModelView(text, {"model": Anchor(0, 0, len(lines[0]))}, mapped=False)
    return ModelView(text, walker.anchors)

