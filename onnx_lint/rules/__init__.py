"""The rules: one module per rule, and the registry of them all.

Rules depend on the engine (``onnx_lint.lint.context``, ``onnx_lint.model.edits``); the engine
never imports this package. The CLI and the server hand ``ALL_RULES`` to it.

``CATALOG`` (generated from the rules) and ``CODES`` are plain data, so that a run
answered from the cache never imports a rule module, and onnx with it;
``ALL_RULES``, ``RULES_BY_CODE`` and ``get_rule`` load the registry on first use.
``rule_url`` and ``rule_explanation`` answer from the catalog and the rule's source
text, so the language server's own process never imports onnx.
"""

from __future__ import annotations

import ast
import functools
import inspect
from pathlib import Path
from typing import Any

from onnx_lint.lint.diagnostics import FixAvailability
from onnx_lint.rules.catalog import CATALOG

CODES: tuple[str, ...] = tuple(row[0] for row in CATALOG)
_ROWS = {row[0]: row for row in CATALOG}


def rule_url(code: str) -> str | None:
    """The documentation link of a rule code, from the catalog."""
    row = _ROWS.get(code)
    return row[5] if row else None


@functools.cache
def rule_explanation(code: str) -> str | None:
    """What ``Rule.explanation()`` says (the rule module's docstring), read from the module's source.

    Rule modules are named ``<code>_<words>.py``; parsing one costs a millisecond, importing it imports onnx.
    """
    row = _ROWS.get(code)
    if row is None:
        return None
    availability = FixAvailability(row[6])
    modules = sorted(Path(__file__).parent.glob(f"{code.lower()}_*.py"))
    if not modules:
        return availability.under_heading(inspect.cleandoc(row[2]))
    docstring = ast.get_docstring(ast.parse(modules[0].read_text(encoding="utf-8")), clean=False)
    return availability.under_heading(inspect.cleandoc(docstring or row[2]))


_REGISTRY = ("ALL_RULES", "RULES_BY_CODE", "get_rule")


def __getattr__(name: str) -> Any:
    if name in _REGISTRY:
        from onnx_lint.rules import registry

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
