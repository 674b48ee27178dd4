"""What every rule says on its example model, in every output format, as reviewed text.

A change of wording, of a location or of a JSON field shows up here as a diff of
``tests/snapshots/*`` that a reviewer reads, instead of slipping through loose
``in`` assertions. After an intended change, regenerate with::

    ONNX_LINT_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_snapshots.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import onnx
import pytest

import onnx_lint
from examples.defects import DEFECTS, HEALTHY

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("ONNX_LINT_UPDATE_SNAPSHOTS") == "1"
FORMATS = ("full", "concise", "json", "sarif", "github", "junit")
SUFFIX = {"json": "json", "sarif": "sarif.json", "junit": "xml"}


@pytest.fixture(scope="module")
def examples(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("snapshots") / "examples"
    folder.mkdir()
    for name, (build, _what) in {**DEFECTS, **HEALTHY}.items():
        onnx.save_model(build(), folder / f"{name}.onnx")
    return folder.parent


def _stable(text: str, root: Path) -> str:
    """Only what varies between runs is masked: the temporary folder, onnx-lint's version, junit's timings."""
    text = text.replace(root.as_uri(), "file:///<root>").replace(str(root), "<root>")
    text = text.replace(f'"version": "{onnx_lint.__version__}"', '"version": "<onnx-lint version>"')
    return re.sub(r'time="[0-9.]+"', 'time="<t>"', text)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_rule_on_its_example_in_each_format(cli, examples, fmt):
    run = cli("check", "examples", "--output-format", fmt, "--no-cache", cwd=examples)
    assert run.code == 1
    text = _stable(run.out, examples)
    snapshot = SNAPSHOTS / f"examples-{fmt}.{SUFFIX.get(fmt, 'txt')}"
    if UPDATE or not snapshot.exists():
        snapshot.parent.mkdir(exist_ok=True)
        snapshot.write_text(text)
        if not UPDATE:
            pytest.fail(f"{snapshot.name} did not exist and was written: review and commit it")
    assert text == snapshot.read_text(), f"{snapshot.name} changed: review, then regenerate (see module docstring)"
