"""Every rule on its fixture row (``tests/rule_fixtures.py``): the bad model gives exactly the expected
codes, the healthy twin gives nothing of warning or error level and ``--fix`` leaves its bytes alone, and
``tests/snapshots/rules/<code>.txt`` holds what a user reads: the text output and, for a fixable rule,
the fix as a diff (``check --diff``), with only that rule selected so its wording touches one file.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import onnx
import onnxruntime as ort
import pytest
from rule_fixtures import FIXTURES, Builder
from snapshot import SNAPSHOTS, assert_snapshot

import onnx_lint
from onnx_lint.rules import RULES_BY_CODE

RULE_SNAPSHOTS = SNAPSHOTS / "rules"
QUIET = frozenset({"info"})


def _write(build: Builder, path: Path) -> Path:
    model = build()
    path.write_bytes(model if isinstance(model, bytes) else model.SerializeToString())
    return path


def _found(cli, path: Path, args: tuple[str, ...]) -> list[dict]:
    return cli("check", path.name, "--no-cache", "--output-format", "json", *args, cwd=path.parent).json()


@pytest.mark.parametrize("code", sorted(FIXTURES))
def test_bad_model_gives_exactly_its_codes(cli, tmp_path, code):
    fixture = FIXTURES[code]
    found = _found(cli, _write(fixture.bad, tmp_path / f"{code}.onnx"), fixture.args)
    assert {d["code"] for d in found} == fixture.codes, found


@pytest.mark.parametrize("code", sorted(FIXTURES))
def test_healthy_twin_is_clean_and_fix_leaves_its_bytes_alone(cli, tmp_path, code):
    fixture = FIXTURES[code]
    path = _write(fixture.healthy, tmp_path / f"{code}_healthy.onnx")
    found = _found(cli, path, fixture.args)
    assert {d["code"] for d in found} == fixture.healthy_codes, found
    assert {d["severity"] for d in found} <= QUIET, found
    before = path.read_bytes()
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    run = cli("check", path.name, "--no-cache", "--fix", *fixture.args, cwd=tmp_path)
    assert run.code == 0, run.out + run.err
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == 1_000_000_000  # not even rewritten with the same bytes


def _stable(text: str) -> str:
    """Masks what differs between installs: the versions some messages name."""
    for name, version in (("onnx-lint", onnx_lint.__version__), ("ONNX Runtime", ort.__version__),
                          ("onnx", onnx.__version__)):
        text = text.replace(f"{name} {version}", f"{name} <version>")
    return text


def snapshot_command(code: str) -> list[str]:
    """The command a rule's snapshot shows: the rule alone, ``--diff`` when it can fix, bad model first."""
    fixture, rule = FIXTURES[code], RULES_BY_CODE[code]
    files = [f"{code}.onnx", *(f"{name}.onnx" for name in fixture.variants)]
    return ["check", "--select", code, *(["--diff"] if rule.fixable else []), *fixture.args, *files]


@pytest.mark.parametrize("code", sorted(FIXTURES))
def test_rule_snapshot(cli, tmp_path, code):
    fixture = FIXTURES[code]
    _write(fixture.bad, tmp_path / f"{code}.onnx")
    for name, build in fixture.variants.items():
        _write(build, tmp_path / f"{name}.onnx")
    command = snapshot_command(code)
    run = cli(*command, "--no-cache", cwd=tmp_path)
    text = f"$ onnx-lint {shlex.join(command)}\n{run.out}"
    if run.err:
        text += f"--- stderr\n{run.err}"
    text += f"--- exit code {run.code}\n"
    assert str(tmp_path) not in text
    assert_snapshot(RULE_SNAPSHOTS / f"{code}.txt", _stable(text))


def test_no_snapshot_without_a_rule():
    """A snapshot left behind by a removed or renumbered rule would be reviewed by no test."""
    assert sorted(p.stem for p in RULE_SNAPSHOTS.glob("*.txt")) == sorted(FIXTURES)


def _every_fixture_model() -> list[tuple[str, Builder]]:
    return [(f"{code}-{kind}", build) for code, fixture in sorted(FIXTURES.items())
            for kind, build in [("bad", fixture.bad), ("healthy", fixture.healthy), *fixture.variants.items()]]


@pytest.mark.parametrize("name, build", _every_fixture_model(), ids=[n for n, _ in _every_fixture_model()])
def test_rules_that_need_no_inference_never_ask_for_it(tmp_path, name, build):
    """The rules marked ``needs_inference = False`` run while a large model's inference is still running
    in its child: asking for a derived fact there would make them wait for it, every time. On every
    fixture model, running them all leaves the context's derived facts unbuilt (and their findings are
    those of the whole run)."""
    from onnx_lint.base.errors import ModelLoadError
    from onnx_lint.lint.context import LintContext
    from onnx_lint.lint.linter import RuleRun
    from onnx_lint.model.load import read_unvalidated, validate_loaded
    from onnx_lint.rules import ALL_RULES

    path = _write(build, tmp_path / "m.onnx")
    try:
        loaded = read_unvalidated(path)
        validate_loaded(loaded)
    except ModelLoadError:
        return  # OL000's row: no rule runs on it
    early = [rule for rule in ALL_RULES if not rule.needs_inference]
    assert {r.code for r in early} >= {"OL103", "OL105", "OL201", "OL202"}
    ctx = LintContext(loaded, path.name)
    run = RuleRun(ctx, early, lambda code: True)
    run.run(lambda rule: True)
    assert "oracle" not in vars(ctx), f"a rule marked needs_inference=False asked for derived facts on {name}"
    assert not run.internal_errors()
