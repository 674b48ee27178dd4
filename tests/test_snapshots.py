"""The shape of each machine-read output format, as reviewed text.

Three findings of the three severities (a fixable error, a fixable warning, an info note without a fix)
and a clean file, in every format but ``full`` (each rule's own snapshot under ``tests/snapshots/rules/``
shows that one). A changed field, escape, level mapping or ordering shows up here as a diff; the rules'
wording does not: messages, fix titles and rule summaries are masked as ``{message OL001}`` and so on,
so that one rule's wording touches one snapshot file. After an intended change, regenerate with::

    ONNX_LINT_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_snapshots.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from rule_fixtures import FIXTURES
from snapshot import SNAPSHOTS, assert_snapshot

import onnx_lint
from onnx_lint.rules.catalog import CATALOG

FORMATS = ("concise", "json", "sarif", "github", "junit")
SUFFIX = {"json": "json", "sarif": "sarif.json", "junit": "xml"}
# file name -> the model in it: OL001 (error, fix), OL101 (warning, fix), OL105 (info, no fix), clean
FILES = {"stale_output.onnx": FIXTURES["OL001"].bad, "negative_dim.onnx": FIXTURES["OL101"].bad,
         "duplicate_name.onnx": FIXTURES["OL105"].bad, "healthy.onnx": FIXTURES["OL001"].healthy}


@pytest.fixture(scope="module")
def examples(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("snapshots") / "examples"
    folder.mkdir()
    for name, build in FILES.items():
        model = build()
        (folder / name).write_bytes(model if isinstance(model, bytes) else model.SerializeToString())
    return folder.parent


def _wording(cli, examples: Path) -> dict[str, str]:
    """Each rule's own words in this run (text -> mask), longest first so no mask cuts into another."""
    words = {}
    for d in cli("check", "examples", "--output-format", "json", "--no-cache", cwd=examples).json():
        words[d["message"]] = f"{{message {d['code']}}}"
        if d["fix"]:
            words[d["fix"]["title"]] = f"{{fix title {d['code']}}}"
    words.update({row[2]: f"{{summary {row[0]}}}" for row in CATALOG})
    return dict(sorted(words.items(), key=lambda item: -len(item[0])))


def _masked(text: str, words: dict[str, str]) -> str:
    """``words`` masked as each format writes them: raw, in a JSON string, in XML text or an XML attribute."""
    for said, mask in words.items():
        for written in (json.dumps(said)[1:-1], escape(said, {'"': "&quot;"}), said):
            text = text.replace(written, mask)
    return text


def _stable(text: str, root: Path) -> str:
    """Only what varies between runs is masked: the temporary folder, onnx-lint's version, junit's timings."""
    text = text.replace(root.as_uri(), "file:///<root>").replace(str(root), "<root>")
    text = text.replace(f'"version": "{onnx_lint.__version__}"', '"version": "<onnx-lint version>"')
    return re.sub(r'time="[0-9.]+"', 'time="<t>"', text)


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_on_three_severities_and_a_clean_file(cli, examples, fmt):
    words = _wording(cli, examples)
    run = cli("check", "examples", "--output-format", fmt, "--no-cache", cwd=examples)
    assert run.code == 1
    messages = [said for said, mask in words.items() if mask.startswith("{message")]
    assert len(messages) == 4  # OL001, two OL101 (input and output), OL105
    masked = _masked(run.out, words)
    # every message is found, so a format that escapes one differently cannot leak wording into the snapshot
    assert all(masked.count(words[said]) >= messages.count(said) for said in messages), masked
    assert_snapshot(SNAPSHOTS / f"formats-{fmt}.{SUFFIX.get(fmt, 'txt')}", _stable(masked, examples))
