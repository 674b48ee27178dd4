"""Compare text with a reviewed file under ``tests/snapshots/``, or rewrite it after an intended change.

    ONNX_LINT_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_rule_fixtures.py tests/test_snapshots.py

A missing snapshot is written and the test fails, so a new one is always looked at before it is committed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("ONNX_LINT_UPDATE_SNAPSHOTS") == "1"


def assert_snapshot(snapshot: Path, text: str) -> None:
    """``text`` must equal the committed ``snapshot``; with the update switch it replaces it."""
    if UPDATE or not snapshot.exists():
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        snapshot.write_text(text)
        if not UPDATE:
            pytest.fail(f"{snapshot.relative_to(SNAPSHOTS)} did not exist and was written: review and commit it")
    assert text == snapshot.read_text(), (
        f"{snapshot.relative_to(SNAPSHOTS)} changed: review, then rerun with ONNX_LINT_UPDATE_SNAPSHOTS=1")
