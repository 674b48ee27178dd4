"""The rules: one module per rule, and the registry of them all.

Rules depend on the engine (``onnx_lint.context``, ``onnx_lint.edits``); the engine
never imports this package. The CLI and the server hand ``ALL_RULES`` to it.

``CATALOG`` (generated from the rules) and ``CODES`` are plain data, so that a run
answered from the cache never imports a rule module, and onnx with it;
``ALL_RULES``, ``RULES_BY_CODE`` and ``get_rule`` load the registry on first use.
"""

from __future__ import annotations

from typing import Any

from onnx_lint.rules.catalog import CATALOG

CODES: tuple[str, ...] = tuple(row[0] for row in CATALOG)
_REGISTRY = ("ALL_RULES", "RULES_BY_CODE", "get_rule")


def __getattr__(name: str) -> Any:
    if name in _REGISTRY:
        from onnx_lint.rules import registry

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
