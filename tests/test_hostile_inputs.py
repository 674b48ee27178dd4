"""What comes with a model is hostile too: calibration files, configuration files, output paths, a second thread.

Each test is one attack that got through before: a file that declares more than it holds, a path that names a
FIFO or a device, a number that overflows, a config another user planted, a write that cannot succeed. Each
must end in a clear error (exit 2, the file and the problem, no traceback) with nothing written.
"""

from __future__ import annotations

import io
import logging
import os
import struct
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import run_process

from examples import defects

pytest.importorskip("onnxruntime")
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux file system semantics")


def _model(tmp_path: Path) -> Path:
    source = tmp_path / "seed.onnx"
    onnx.save(defects.weakly_typed_mlp(), source)  # one float input X: [n, 16]
    return source


def _quantize(tmp_path: Path, *args: str):
    return run_process("quantize", str(_model(tmp_path)), "-o", str(tmp_path / "q.onnx"), "-q", *args, cwd=tmp_path)


def _clean_refusal(run, *words: str) -> None:
    assert run.code == 2, (run.code, run.err)
    assert "Traceback" not in run.err and all(w in run.err for w in words), run.err


def _npy_header(shape: tuple[int, ...], dtype: str = "<f4") -> bytes:
    """A version 1.0 .npy header declaring ``shape``, with no data after it."""
    text = repr({"descr": dtype, "fortran_order": False, "shape": shape}).encode()
    text += b" " * (63 - (len(text) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text


def test_a_zip_bomb_npz_is_refused_before_it_is_decompressed(tmp_path):
    """2 MB of zeros that decompress to 8 GiB: the declared size is added up from the headers first."""
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("X.npy", _npy_header((2**31, 16 // 16)) + bytes(2 << 20))
    run = _quantize(tmp_path, "--calibration-data", str(bomb))
    _clean_refusal(run, "bomb.npz", "8.0 GiB", "limited to 1.0 GiB")
    assert not (tmp_path / "q.onnx").exists()


def test_a_npy_header_that_lies_about_its_size_is_refused(tmp_path):
    liar = tmp_path / "liar.npy"
    liar.write_bytes(_npy_header((5_000_000_000,), "<f4")[:-1] + b"\n")  # ~20 GB declared over 64 bytes
    _clean_refusal(_quantize(tmp_path, "--calibration-data", str(liar)), "liar.npy", "limited to")
    small = tmp_path / "short.npy"
    small.write_bytes(_npy_header((1000, 16)))  # 64 KB declared, none there
    _clean_refusal(_quantize(tmp_path, "--calibration-data", str(small)), "short.npy", "truncated or its header lies")


def test_a_suffix_that_does_not_match_the_content_is_named(tmp_path):
    np.save(tmp_path / "array.npy", np.ones((4, 16), np.float32))
    (tmp_path / "array.npz").write_bytes((tmp_path / "array.npy").read_bytes())
    _clean_refusal(_quantize(tmp_path, "--calibration-data", str(tmp_path / "array.npz")),
                   "named .npz but holds a .npy array")
    np.savez(tmp_path / "archive.npz", X=np.ones((4, 16), np.float32))
    (tmp_path / "archive.npy").write_bytes((tmp_path / "archive.npz").read_bytes())
    _clean_refusal(_quantize(tmp_path, "--calibration-data", str(tmp_path / "archive.npy")),
                   "named .npy but holds a .npz archive")


@linux_only
def test_calibration_data_naming_a_fifo_or_a_device_does_not_block(tmp_path):
    fifo = tmp_path / "data.npz"
    os.mkfifo(fifo)
    _clean_refusal(_quantize(tmp_path, "--calibration-data", str(fifo)), "must be a regular file", "FIFO")
    _clean_refusal(_quantize(tmp_path, "--calibration-data", "/dev/zero"), "must be a regular file", "device")


@pytest.mark.parametrize("fill", [np.nan, np.inf], ids=["nan", "inf"])
def test_non_finite_calibration_data_is_refused(tmp_path, fill):
    np.savez(tmp_path / "bad.npz", X=np.full((4, 16), fill, np.float32))
    _clean_refusal(_quantize(tmp_path, "--calibration-data", str(tmp_path / "bad.npz")),
                   "64 of 64 values that are NaN or infinite")


def test_pickled_objects_are_never_loaded(tmp_path):
    np.save(tmp_path / "objects.npy", np.array([{"x": 1}] * 4, dtype=object), allow_pickle=True)
    _clean_refusal(_quantize(tmp_path, "--calibration-data", str(tmp_path / "objects.npy")),
                   "Python objects (pickles are never loaded)")


def test_random_samples_are_bounded(tmp_path):
    _clean_refusal(_quantize(tmp_path, "--samples", "100000000"), "limited to 1 GiB")


@pytest.mark.parametrize("value", ["inf", "1e300", "nan"])
def test_an_inference_budget_in_a_config_file_is_bounded(cli, tmp_path, value):
    (tmp_path / "onnx-lint.toml").write_text(f"inference-budget = {value}\n")
    onnx.save(defects.weakly_typed_mlp(), tmp_path / "m.onnx")
    run = cli("check", str(tmp_path / "m.onnx"))
    assert run.code == 2 and "'inference-budget'" in run.err and "up to 86400" in run.err


def test_a_deeply_nested_value_in_another_tools_table_does_not_stop_check(cli, tmp_path):
    deep = "[" * 2000 + "]" * 2000
    (tmp_path / "pyproject.toml").write_text(f"[tool.other]\nx = {deep}\n")
    onnx.save(defects.weakly_typed_mlp(), tmp_path / "m.onnx")
    assert cli("check", str(tmp_path / "m.onnx")).code in (0, 1)
    (tmp_path / "onnx-lint.toml").write_text(f"select = {deep}\n")
    run = cli("check", str(tmp_path / "m.onnx"))
    assert run.code == 2 and "nested too deeply" in run.err


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs to make a file another user owns")
def test_a_config_planted_by_another_user_above_the_project_is_not_trusted(tmp_path):
    shared = tmp_path / "shared"
    project = shared / "project"
    project.mkdir(parents=True)
    shared.chmod(0o1777)  # like /tmp: anyone may create files here
    planted = shared / "onnx-lint.toml"
    planted.write_text('ignore = ["OL"]\n')
    os.chown(planted, 4242, 4242)
    onnx.save(defects.stale_rank0_output(), project / "m.onnx")
    run = run_process("check", str(project / "m.onnx"), cwd=project)
    assert run.code == 1, run.out  # the findings are reported: the planted ignore did not count
    assert f"ignored {planted}" in run.err and "another user (uid 4242)" in run.err
    planted.chmod(0o666)
    os.chown(planted, 0, 0)
    assert "anyone may write it" in run_process("check", str(project / "m.onnx"), cwd=project).err
    explicit = run_process("check", str(project / "m.onnx"), "--config", str(planted), cwd=project)
    assert explicit.code == 0  # asked for by name: the user's choice


def test_shard_numbers_must_be_ascii_digits(cli, tmp_path):
    run = cli("check", str(tmp_path), "--shard", "²/³")
    assert run.code == 2 and "--shard '²/³' must be K/N" in run.err


@linux_only
@pytest.mark.parametrize("target", ["/dev/full", "/proc/self/status"])
def test_a_report_that_cannot_be_written_is_a_clear_error(tmp_path, target):
    onnx.save(defects.weakly_typed_mlp(), tmp_path / "m.onnx")
    run = run_process("check", str(tmp_path / "m.onnx"), "-o", target, cwd=tmp_path)
    _clean_refusal(run, f"cannot write the report to {target}")
    quantized = _quantize(tmp_path, "--report", target)
    _clean_refusal(quantized, f"cannot write the quantize report to {target}")


@linux_only
def test_quantize_into_a_folder_that_cannot_be_made_is_a_clear_error(tmp_path):
    run = run_process("quantize", str(_model(tmp_path)), "-o", "/proc/onnx-lint-test/q.onnx", "-q", cwd=tmp_path)
    _clean_refusal(run, "/proc/onnx-lint-test", "cannot create the output folder")


@linux_only
def test_quantize_force_never_replaces_a_device_or_a_fifo(tmp_path):
    fifo = tmp_path / "out.onnx"
    os.mkfifo(fifo)
    run = run_process("quantize", str(_model(tmp_path)), "-o", str(fifo), "--force", "-q", cwd=tmp_path)
    _clean_refusal(run, "exists and is not a regular file")
    assert fifo.is_fifo()


@linux_only
def test_fix_on_a_symbolic_link_refuses_and_keeps_both(cli, tmp_path):
    target = tmp_path / "real.onnx"
    onnx.save(defects.weakly_typed_mlp(), target)
    link = tmp_path / "link.onnx"
    link.symlink_to(target)
    before = target.read_bytes()
    run = cli("check", str(link), "--fix")
    assert "is a symbolic link" in run.out + run.err and "nothing was written" in run.out + run.err
    assert link.is_symlink() and target.read_bytes() == before


def test_jobs_are_capped_at_the_number_of_cores(cli, tmp_path):
    from onnx_lint.cli import _jobs_arg

    assert _jobs_arg("100000") == (os.cpu_count() or 1) and _jobs_arg("0") == 0
    for i in range(3):
        onnx.save(defects.weakly_typed_mlp(), tmp_path / f"m{i}.onnx")
    assert cli("check", str(tmp_path), "--jobs", "100000").code == 1


def test_two_quantize_runs_in_two_threads_leave_the_process_as_found(tmp_path):
    """sys.stdout, the root logger's level and ORT's HistogramCollector are what they were, and each thread's
    output is the same model a run alone writes."""
    from onnxruntime.quantization.calibrate import HistogramCollector

    import onnx_lint

    source = _model(tmp_path)
    np.savez(tmp_path / "data.npz", X=np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32))
    stdout, level, handlers = sys.stdout, logging.getLogger().level, list(logging.getLogger().handlers)
    methods = (HistogramCollector.collect, HistogramCollector.get_entropy_threshold)
    errors: list[BaseException] = []

    def run(name: str) -> None:
        try:
            onnx_lint.quantize(source, tmp_path / f"{name}.onnx", calibration_data=tmp_path / "data.npz")
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    onnx_lint.quantize(source, tmp_path / "alone.onnx", calibration_data=tmp_path / "data.npz")
    assert sys.stdout is stdout and logging.getLogger().level == level
    assert logging.getLogger().handlers == handlers and not logging.getLogger().filters
    assert (HistogramCollector.collect, HistogramCollector.get_entropy_threshold) == methods
    alone = (tmp_path / "alone.onnx").read_bytes()
    assert (tmp_path / "a.onnx").read_bytes() == alone == (tmp_path / "b.onnx").read_bytes()
    printed = io.StringIO()
    print("still here", file=printed)
    assert printed.getvalue() == "still here\n"


@linux_only
def test_external_data_swapped_for_a_link_is_not_followed(tmp_path):
    """The check by path passes; then the data file becomes a link to a file outside: reading it through the
    descriptor the loader opens refuses it, and no byte outside is read."""
    from onnx_lint.base.errors import ModelLoadError
    from onnx_lint.model.external import check_external_data, read_external_weights

    folder = tmp_path / "model"
    folder.mkdir()
    model = defects.weakly_typed_mlp()
    onnx.save(model, folder / "m.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
              location="w.data", size_threshold=0)
    loaded = onnx.load(folder / "m.onnx", load_external_data=False)
    external = [t for t in loaded.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    assert check_external_data(external, folder / "m.onnx") == ["w.data"]
    secret = tmp_path / "secret"
    secret.write_bytes((folder / "w.data").read_bytes())
    (folder / "w.data").unlink()
    (folder / "w.data").symlink_to(secret)
    with pytest.raises(ModelLoadError, match="a symbolic link is not followed"):
        read_external_weights(external, folder / "m.onnx")


def test_sparse_initializer_declaring_2_to_the_40_elements_is_refused(tmp_path):
    model = defects.weakly_typed_mlp()
    values = onnx.helper.make_tensor("huge_values", onnx.TensorProto.FLOAT, [1], [1.0])
    indices = onnx.helper.make_tensor("huge_indices", onnx.TensorProto.INT64, [1], [0])
    model.graph.sparse_initializer.append(onnx.helper.make_sparse_tensor(values, indices, [2**20, 2**20]))
    source = tmp_path / "sparse.onnx"
    onnx.save(model, source)
    run = run_process("quantize", str(source), "-o", str(tmp_path / "q.onnx"), "-q", cwd=tmp_path)
    _clean_refusal(run, "sparse.onnx", "huge_values", "dense")
    assert not (tmp_path / "q.onnx").exists()


def test_killed_runs_work_folders_are_swept(tmp_path):
    from onnx_lint.quantization.pipeline import sweep_work_folders

    dead = tmp_path / "onnx-lint-quantize-999999999-abc123"
    alive = tmp_path / f"onnx-lint-quantize-{os.getpid()}-def456"
    other = tmp_path / "onnx-lint-quantize-notapid"
    for folder in (dead, alive, other):
        (folder / "weights").mkdir(parents=True)
    assert sweep_work_folders(tmp_path) == [dead]
    assert not dead.exists() and alive.exists() and other.exists()
