"""Writes happen only where the user asked, to files that are what was read (issue 23, findings 4, 5, 10).

A second, real process changes the model between the moment ``--fix`` read it and the
moment it would rename its fix over it; ``quantize`` is pointed at files that already
exist; a 2 GiB-1 sparse file of zeros is handed to ``check``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from conftest import run_process

from examples import defects
from onnx_lint.fixes import fixer
from onnx_lint.server import jobs

# What the other program does to the model, run as a real process: replace it (new inode), or
# rewrite it in place (same inode, new bytes).
_REPLACE = """
import os, sys
path, data = sys.argv[1], open(sys.argv[2], "rb").read()
with open(path + ".other", "wb") as out:
    out.write(data)
os.replace(path + ".other", path)
"""
_REWRITE = """
import sys
path, data = sys.argv[1], open(sys.argv[2], "rb").read()
with open(path, "r+b") as out:
    out.write(data)
    out.truncate()
"""


def _leftovers(folder: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


def _edit_while_proving(monkeypatch, tmp_path: Path, model: Path, how: str) -> bytes:
    """Make another process change ``model`` while the fix is being proven (after the read, before the rename)."""
    theirs = onnx.helper.make_model(defects.healthy_matmul().graph, ir_version=10,
                                    opset_imports=[onnx.helper.make_opsetid("", 21)])
    theirs.producer_name = "the other program"
    source = tmp_path / "theirs.bin"
    source.write_bytes(theirs.SerializeToString())
    real = fixer._checker_error
    calls = []

    def edit_then_check(path, *rest):
        if not calls:
            subprocess.run([sys.executable, "-c", how, str(model), str(source)], check=True, timeout=60)
        calls.append(path)
        return real(path, *rest)

    monkeypatch.setattr(fixer, "_checker_error", edit_then_check)
    return source.read_bytes()


@pytest.mark.parametrize("how", [_REPLACE, _REWRITE], ids=["replaced", "rewritten-in-place"])
def test_fix_refuses_a_file_another_process_changed_since_it_was_read(cli, tmp_path, monkeypatch, how):
    model = tmp_path / "model.onnx"
    onnx.save(defects.stale_rank0_output(), model)
    theirs = _edit_while_proving(monkeypatch, tmp_path, model, how)
    run = cli("check", str(model), "--fix", "--no-cache")
    assert run.code == 2, (run.out, run.err)
    assert f"{model}: the file changed on disk after it was read" in run.err
    assert model.read_bytes() == theirs, "the other program's write was lost"
    assert _leftovers(tmp_path, {"model.onnx", "theirs.bin"}) == [], "a temporary file was left behind"


def test_server_fix_job_refuses_a_file_changed_since_it_was_read(tmp_path, monkeypatch):
    """The server's fix commands run ``fix_job`` in a worker: the same refusal, as a failed job."""
    from onnx_lint.base.errors import FixError
    from onnx_lint.rules import ALL_RULES

    model = tmp_path / "model.onnx"
    onnx.save(defects.stale_rank0_output(), model)
    theirs = _edit_while_proving(monkeypatch, tmp_path, model, _REPLACE)
    with pytest.raises(FixError, match="changed on disk after it was read"):
        jobs.fix_job(str(model), [r.code for r in ALL_RULES], None, True, False,
                     emit=lambda event: None, cancelled=lambda: False)
    assert model.read_bytes() == theirs
    assert _leftovers(tmp_path, {"model.onnx", "theirs.bin"}) == []


def test_fix_of_an_unchanged_file_still_writes(cli, tmp_path):
    model = tmp_path / "model.onnx"
    onnx.save(defects.stale_rank0_output(), model)
    run = cli("check", str(model), "--fix", "--no-cache")
    assert run.code == 0, run.err
    assert onnx.load(model).graph.output[0].type.tensor_type.shape.dim


# -- a bounded read --------------------------------------------------------------------------------------
def test_a_sparse_2gib_file_of_zeros_is_refused_before_it_is_read(tmp_path):
    """2 GiB - 1 of zeros (no disk used): refused from its first byte, in a real process under a memory cap."""
    model = tmp_path / "zeros.onnx"
    with open(model, "wb"):
        pass
    os.truncate(model, 2**31 - 1)
    # The file is read whole only over the cap: a refusal that reads it fails with MemoryError instead.
    script = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, 1536 * 2**20)); "
              "from onnx_lint.cli import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", script, "check", str(model), "--no-cache",
                           "--output-format", "json"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    [found] = __import__("json").loads(done.stdout)
    assert found["code"] == "OL000" and found["file"] == str(model)
    assert "starts with a zero byte" in found["message"] and "refused before reading it" in found["message"]


@pytest.mark.parametrize("tail, phrase", [
    (b"", None),  # the whole model: read as before
    (b"\x3a\xff\xff\x03", "runs to byte"),  # a graph field that claims 64 KiB more than the file has
    (b"\x0f", "wire type 7"),  # field 1 with a wire type protobuf does not have
])
def test_the_top_level_walk_refuses_only_what_protobuf_refuses(tmp_path, tail, phrase):
    model = tmp_path / "m.onnx"
    model.write_bytes(defects.healthy_matmul().SerializeToString() + tail)
    run = run_process("check", str(model), "--no-cache", "--output-format", "json", cwd=tmp_path)
    if phrase is None:
        assert run.code == 0, run.err
        return
    assert run.code == 2
    [found] = run.json()
    assert found["code"] == "OL000" and phrase in found["message"], found


# -- quantize never replaces a file unless told to --------------------------------------------------------
def test_quantize_refuses_an_existing_output_and_force_replaces_it(tmp_path):
    pytest.importorskip("onnxruntime")
    source = tmp_path / "m.onnx"
    onnx.save(defects.weakly_typed_mlp(), source)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    run = run_process("quantize", str(source), "-o", str(notes), "-q", "--samples", "2", cwd=tmp_path)
    assert run.code == 2, run.err
    assert f"{notes} already exists" in run.err and "--force" in run.err and "nothing was written" in run.err
    assert notes.read_text() == "my notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx", "notes.txt"]
    run = run_process("quantize", str(source), "-o", str(notes), "-q", "--samples", "2", "--force", cwd=tmp_path)
    assert run.code == 0, run.err
    onnx.checker.check_model(str(notes), full_check=True)


def test_quantize_python_pipeline_refuses_an_existing_output_unless_force(tmp_path):
    from onnx_lint.base.progress import Progress
    from onnx_lint.quantization.pipeline import QuantizeError, QuantizeOptions, quantize_model
    from onnx_lint.rules import ALL_RULES

    source = tmp_path / "m.onnx"
    onnx.save(defects.weakly_typed_mlp(), source)
    taken = tmp_path / "taken.onnx"
    taken.write_bytes(b"someone's file")
    with pytest.raises(QuantizeError, match="already exists"):
        quantize_model(source, taken, [], QuantizeOptions(), ALL_RULES, Progress(), calibration={"random": True})
    assert taken.read_bytes() == b"someone's file"
