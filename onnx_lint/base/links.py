"""Where the project's pages live: one base URL for the docs site, so rule links never drift apart.

SARIF's ``helpUri``, the language server's hover links and ``onnx-lint rule`` all point at the
per-rule pages that ``scripts/generate_docs.py`` writes under ``docs/rules/``.
"""

from __future__ import annotations

REPOSITORY_URL = "https://github.com/onnx-lint/onnx-lint"
DOCS_BASE_URL = "https://onnx-lint.github.io/onnx-lint/"


def rule_page_url(code: str) -> str:
    """The docs site's page of one rule (``docs/rules/<CODE>.md``, served as ``rules/<CODE>/``)."""
    return f"{DOCS_BASE_URL}rules/{code}/"
