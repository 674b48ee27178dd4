"""Dim names that read as arithmetic over other dim names (``past_sequence_length + sequence_length``).

Exporters and ONNX Runtime's symbolic inference write such names (``2*seq``, ``seq - 1``,
``floor(h/2 - 1/2) + 1``, ``(w + 1)//2``): the name is a claim about a size, which can be
evaluated once the names it mentions have sizes. The parser is our own and small: Python's
``ast`` over a whitelist of numbers, names, ``+ - * / // %``, unary minus and the functions
``floor``, ``ceil``, ``min`` and ``max``. Nothing is ever executed; arithmetic is exact
(``fractions.Fraction``), so a float in the name (``floor(2.0*floor(h/32))``) cannot raise or round.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

# A dim name inside an expression: letters, digits, underscores and dots (``p2o.DynamicDimension.3``).
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_FUNCTIONS: dict[str, Callable[..., Fraction]] = {
    "floor": lambda x: Fraction(math.floor(x)),
    "ceil": lambda x: Fraction(math.ceil(x)),
    "Floor": lambda x: Fraction(math.floor(x)),
    "Ceil": lambda x: Fraction(math.ceil(x)),
    "min": min, "max": max, "Min": min, "Max": max,
}
_BINARY: dict[type, Callable[[Fraction, Fraction], Fraction]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: lambda a, b: Fraction(a // b), ast.Mod: operator.mod,
}
# Longer names are refused outright: a dim name is short, and the parser must stay cheap.
_MAX_LENGTH = 200


@dataclass(frozen=True)
class DimExpression:
    """A parsed dim name: its text, the dim names it mentions, and its syntax tree."""

    text: str
    names: frozenset[str]
    _tree: ast.Expression
    _slots: tuple[str, ...]

    def evaluate(self, sizes: Mapping[str, int]) -> int | None:
        """The size this name claims when each mentioned name has ``sizes[name]``; ``None`` if it cannot
        say (a name without a size, a division by zero, a result that is not a whole number)."""
        if any(name not in sizes for name in self.names):
            return None
        values = {slot: Fraction(sizes[name]) for slot, name in enumerate(self._slots)}
        try:
            result = _evaluate(self._tree.body, values)
        except (ZeroDivisionError, OverflowError, ValueError, TypeError):
            return None
        return int(result) if result.denominator == 1 else None


def parse_dim_expression(text: str) -> DimExpression | None:
    """``text`` as an expression over dim names, or ``None`` where it is a plain name or not arithmetic.

    A plain name (``seq``, ``p2o.DynamicDimension.3``) is not an expression; neither is a number, nor
    anything outside the whitelist.
    """
    return _parse(text) if isinstance(text, str) else None


@lru_cache(maxsize=4096)
def _parse(text: str) -> DimExpression | None:
    stripped = text.strip()
    if not stripped or len(stripped) > _MAX_LENGTH or _NAME.fullmatch(stripped):
        return None
    slots: list[str] = []

    def slot(match: re.Match[str]) -> str:
        word = match.group(0)
        if word in _FUNCTIONS:
            return word
        slots.append(word)
        return f"_v{len(slots) - 1}"

    source = _NAME.sub(slot, stripped)
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not slots or not _allowed(tree.body, len(slots)):
        return None
    return DimExpression(stripped, frozenset(slots), tree, tuple(slots))


def _allowed(node: ast.AST, slots: int) -> bool:
    """Whether ``node`` is built only of whitelisted arithmetic."""
    if isinstance(node, ast.BinOp):
        return type(node.op) in _BINARY and _allowed(node.left, slots) and _allowed(node.right, slots)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub | ast.UAdd) and _allowed(node.operand, slots)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool) and math.isfinite(node.value)
    if isinstance(node, ast.Name):
        return node.id.startswith("_v") and node.id[2:].isdigit() and int(node.id[2:]) < slots
    if isinstance(node, ast.Call):
        return (isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS and not node.keywords
                and 1 <= len(node.args) <= (1 if node.func.id.lower() in ("floor", "ceil") else 8)
                and all(_allowed(arg, slots) for arg in node.args))
    return False


def _evaluate(node: ast.expr, values: Mapping[int, Fraction]) -> Fraction:
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_evaluate(node.left, values), _evaluate(node.right, values))
    if isinstance(node, ast.UnaryOp):
        operand = _evaluate(node.operand, values)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return Fraction(node.value)
    if isinstance(node, ast.Name):
        return values[int(node.id[2:])]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return Fraction(_FUNCTIONS[node.func.id](*(_evaluate(arg, values) for arg in node.args)))
    raise TypeError(type(node).__name__)


def affine_text(terms: list[tuple[int, str]], constant: int) -> str:
    """An integer affine expression as ONNX Runtime's symbolic inference writes one: ``2*seq``,
    ``seq + 1``, ``past_sequence_length + sequence_length``, ``seq - 1``."""
    text = ""
    for coefficient, name in terms:
        term = name if abs(coefficient) == 1 else f"{abs(coefficient)}*{name}"
        if not text:
            text = f"-{term}" if coefficient < 0 else term
        else:
            text += f" - {term}" if coefficient < 0 else f" + {term}"
    if constant:
        text = f"{text} {'-' if constant < 0 else '+'} {abs(constant)}" if text else str(constant)
    return text
