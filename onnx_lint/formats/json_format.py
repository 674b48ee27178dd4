"""``--output-format json``: the public, additive-only schema (docs/cli.md).

The shape is ``Diagnostic.to_json`` and nothing else, so CI scripts that parse
it break only if that method changes, which it does only additively.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from onnx_lint.lint.diagnostics import Diagnostic

if TYPE_CHECKING:
    from onnx_lint.formats import RuleDoc


def render_json(diagnostics: list[Diagnostic], *, root: Path, rule_docs: Mapping[str, RuleDoc]) -> str:
    """One JSON array, one object per diagnostic, indented, with a trailing newline."""
    return json.dumps([d.to_json() for d in diagnostics], indent=2) + "\n"
