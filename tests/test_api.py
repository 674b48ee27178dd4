"""The Python API (``onnx_lint.check``/``fix``/``quantize``) gives what the command line gives."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import REPO, run_process

import onnx_lint
from examples import defects
from onnx_lint.base.errors import ConfigError


def _cli_json(paths: list[Path], *extra: str, cwd: Path) -> list[dict]:
    done = run_process("check", "--no-cache", "--output-format", "json", *extra, *map(str, paths), cwd=cwd,
                       timeout=900)
    assert done.code in (0, 1, 2), done.err
    return json.loads(done.out)


@pytest.fixture(scope="module")
def examples(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("examples")
    done = subprocess.run([sys.executable, str(REPO / "examples" / "make_examples.py"), str(folder)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return folder


def test_importing_onnx_lint_imports_neither_onnx_nor_onnxruntime():
    code = ("import onnx_lint, sys; loaded = [m for m in ('onnx', 'onnxruntime', 'numpy') if m in sys.modules]; "
            "assert not loaded, loaded; assert callable(onnx_lint.check) and onnx_lint.__all__")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr


def test_check_equals_the_cli_json_on_every_example_model(examples, tmp_path):
    models = sorted(examples.rglob("*.onnx"))
    assert len(models) >= 20
    expected = _cli_json(models, cwd=tmp_path)
    got = [record for path in models for record in onnx_lint.check(path).to_json()]
    assert got == expected
    assert {d["code"] for d in got} >= {"OL001", "OL002", "OL003", "OL004", "OL005", "OL006"}


def test_check_equals_the_cli_json_on_the_real_models(tmp_path):
    from real_models import all_real_models

    models = [p for paths in all_real_models().values() for p in paths]
    assert len(models) > 100
    expected = _cli_json(models, cwd=tmp_path)
    got = [record for path in models for record in onnx_lint.check(path).to_json()]
    assert got == expected


def test_a_model_in_memory_gets_the_same_findings_as_its_file(examples):
    path = examples / "weakly_typed_mlp.onnx"
    model = onnx.load(path)
    from_file = onnx_lint.check(path).to_json()
    in_memory = onnx_lint.check(model).to_json()
    assert [{**d, "file": None} for d in in_memory] == [{**d, "file": None} for d in from_file]
    assert {d["file"] for d in in_memory} == {"<in-memory model>"}
    assert not onnx_lint.check(model).ok


def test_select_and_ignore_have_the_command_lines_meaning(examples, tmp_path):
    path = examples / "weakly_typed_mlp.onnx"
    assert {d.code for d in onnx_lint.check(path, select=["OL003"]).diagnostics} == {"OL003"}
    assert "OL001" not in {d.code for d in onnx_lint.check(path, ignore="OL001").diagnostics}
    assert onnx_lint.check(path, select="OL0", ignore=["OL001"]).to_json() == \
        _cli_json([path], "--select", "OL0", "--ignore", "OL001", cwd=tmp_path)
    with pytest.raises(ConfigError, match="unknown rule selector 'OL9'"):
        onnx_lint.check(path, select=["OL9"])


def test_fix_returns_a_new_model_and_never_mutates_the_callers():
    model = defects.weakly_typed_mlp()
    before = model.SerializeToString()
    result = onnx_lint.fix(model)
    assert model.SerializeToString() == before
    assert result.modified and result.model is not model
    assert [(d.code, d.fix_applied) for d in result.diagnostics] == [("OL001", True), ("OL003", True)]
    dims = [d.dim_param or d.dim_value for d in result.model.graph.output[0].type.tensor_type.shape.dim]
    assert dims == ["batch", 8]
    onnx.checker.check_model(result.model, full_check=True)
    # Fixing the result again finds nothing to do, as `check --fix` twice does.
    again = onnx_lint.fix(result.model)
    assert not again.modified and again.model.SerializeToString() == result.model.SerializeToString()


def test_fix_on_a_path_writes_what_check_fix_writes(examples, tmp_path):
    by_cli, by_api = tmp_path / "cli", tmp_path / "api"
    shutil.copytree(examples, by_cli)
    shutil.copytree(examples, by_api)
    names = sorted(p.relative_to(examples) for p in examples.rglob("*.onnx"))
    expected = _cli_json([by_cli / n for n in names], "--fix", cwd=by_cli)
    got = []
    for name in names:
        try:
            result = onnx_lint.fix(by_api / name)
        except onnx_lint.OnnxLintError:
            continue  # the CLI names the same failure on stderr; the bytes are compared below
        got.extend(d.to_json() for d in result.diagnostics)
        if result.modified:
            assert result.model.SerializeToString() == (by_api / name).read_bytes()
    # Same files, same records once each side's folder is taken out of the paths.
    assert [{**d, "file": Path(d["file"]).relative_to(by_api).as_posix()} for d in got] == \
        [{**d, "file": Path(d["file"]).relative_to(by_cli).as_posix()} for d in expected]
    for name in names:
        assert (by_api / name).read_bytes() == (by_cli / name).read_bytes(), name
    leftovers = {p.name for p in by_api.rglob("*")} - {p.name for p in by_cli.rglob("*")}
    assert not leftovers


def test_fix_leaves_a_healthy_file_untouched(examples, tmp_path):
    path = tmp_path / "healthy.onnx"
    shutil.copy2(examples / "healthy_matmul.onnx", path)
    stamp = path.stat().st_mtime_ns
    result = onnx_lint.fix(path)
    assert not result.modified and path.stat().st_mtime_ns == stamp
    assert result.model.SerializeToString() == path.read_bytes()


def test_external_data_is_found_through_base_path_and_nothing_is_left_there(tmp_path):
    path = defects.with_external_data(tmp_path)
    model = onnx.load(path, load_external_data=False)
    with pytest.raises(onnx_lint.OnnxLintError, match="base_path"):
        onnx_lint.check(model)
    before = sorted(p.name for p in tmp_path.iterdir())
    in_memory = onnx_lint.check(model, base_path=tmp_path).to_json()
    assert [{**d, "file": None} for d in in_memory] == \
        [{**d, "file": None} for d in onnx_lint.check(path).to_json()]
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_an_unreadable_file_is_one_ol000_for_check_and_an_error_for_fix(tmp_path):
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"not a model")
    [d] = onnx_lint.check(path).diagnostics
    assert d.code == "OL000" and d.file == str(path)
    with pytest.raises(onnx_lint.ModelLoadError, match="not a valid ONNX protobuf"):
        onnx_lint.fix(path)
    assert path.read_bytes() == b"not a model"


def test_quantize_gives_the_report_the_cli_writes(examples, tmp_path):
    pytest.importorskip("onnxruntime")
    source = examples / "weakly_typed_mlp.onnx"
    rng = np.random.default_rng(0)
    calib = tmp_path / "calib.npz"
    np.savez(calib, X=rng.standard_normal((16, 16)).astype(np.float32))
    done = run_process("quantize", str(source), "-o", str(tmp_path / "cli.onnx"), "--calibration-data", str(calib),
                       "--report", str(tmp_path / "cli.json"), "--quiet", cwd=tmp_path)
    assert done.code == 0, done.err
    report = onnx_lint.quantize(source, tmp_path / "api.onnx", calibration_data=calib)
    assert report.written and report.exit_code == 0
    cli = json.loads((tmp_path / "cli.json").read_text())
    api = report.to_json()
    assert {**api, "output": None} == {**cli, "output": None}
    assert (tmp_path / "api.onnx").read_bytes() == (tmp_path / "cli.onnx").read_bytes()


def test_quantize_takes_a_model_and_samples_in_memory(tmp_path):
    pytest.importorskip("onnxruntime")
    model = defects.weakly_typed_mlp()
    before = model.SerializeToString()
    rng = np.random.default_rng(0)
    samples = [{"X": rng.standard_normal((1, 16)).astype(np.float32)} for _ in range(8)]
    report = onnx_lint.quantize(model, tmp_path / "q.onnx", calibration_data=samples)
    assert report.written and report.model == "<in-memory model>"
    assert [f["code"] for f in report.fixes] == ["OL001", "OL003"]
    assert {f["file"] for f in report.fixes} == {"<in-memory model>"}
    assert report.outputs[0].cosine > 0.99
    assert model.SerializeToString() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.onnx"]
    onnx.checker.check_model(onnx.load(tmp_path / "q.onnx"), full_check=True)
    # the written model records where it came from: the model in memory, not the temporary copy read
    assert report.provenance is not None and report.provenance.source == "<in-memory model>"
    assert '"source": "<in-memory model>"' in {p.key: p.value for p in onnx.load(tmp_path / "q.onnx").metadata_props}[
        "onnx_lint.quantized"]


def test_the_example_exports_fixes_and_quantizes(tmp_path):
    pytest.importorskip("onnxruntime")
    done = subprocess.run([sys.executable, str(REPO / "examples" / "export_fix_quantize.py"), str(tmp_path)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fix: modified=" in done.stdout and "quantize: wrote mlp.int8-fp16.onnx" in done.stdout
    assert (tmp_path / "mlp.int8-fp16.onnx").exists()


def test_the_api_is_typed_for_its_users(tmp_path):
    assert (REPO / "onnx_lint" / "py.typed").exists()
    user = tmp_path / "user.py"
    user.write_text("import onnx_lint\n"
                    "report: onnx_lint.Report = onnx_lint.check('m.onnx', select=['OL001'])\n"
                    "codes: list[str] = [d.code for d in report.diagnostics]\n"
                    "result = onnx_lint.fix('m.onnx')\n"
                    "flag: bool = result.modified\n"
                    "wrong: int = onnx_lint.check('m.onnx')\n")
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent",
                           "--ignore-missing-imports", str(user)],
                          capture_output=True, text=True, env={**os.environ, "MYPYPATH": str(REPO)}, cwd=tmp_path)
    # mypy sees the API's types: only the deliberate mistake is reported.
    assert done.stdout.count("error:") == 1, done.stdout
    assert 'Incompatible types in assignment (expression has type "Report", variable has type "int")' \
        in done.stdout
