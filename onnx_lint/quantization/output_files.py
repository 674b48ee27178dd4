"""The files a quantize run writes: its work folder, swept when a killed run left one, and the model itself,
staged beside its path and put in place only once every check passed."""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

import onnx

from onnx_lint.model.write import StagedWrite, orphans
from onnx_lint.quantization.options import QuantizeError

_WORK_PREFIX = "onnx-lint-quantize-"


def work_folder() -> tempfile.TemporaryDirectory:
    """The run's work folder (copies of the weights, the builds), named with this process's id; first the folders
    that killed runs left behind are removed (``sweep_work_folders``)."""
    sweep_work_folders()
    return tempfile.TemporaryDirectory(prefix=f"{_WORK_PREFIX}{os.getpid()}-")


def sweep_work_folders(root: Path | None = None) -> list[Path]:
    """Remove the work folders of quantize runs whose process no longer runs (killed: SIGKILL, a crashed
    server), if they are this user's folders: they hold copies of a model's weights. Returns what was removed."""
    root = Path(root or tempfile.gettempdir())
    pattern = re.compile(rf"{re.escape(_WORK_PREFIX)}(\d+)-[a-z0-9_]+\Z")
    removed = [Path(path) for path in orphans(root, pattern, stat.S_ISDIR)]
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


def refuse_existing_output(output: Path, force: bool) -> None:
    """An existing file (or link) at ``output`` is someone's data: replaced only when the user said ``force``, and
    never when it is not a regular file or a link (a device, a FIFO, a folder: ``--force`` would replace the node)."""
    try:
        info = os.lstat(output)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise QuantizeError(f"{output}: cannot check the output path: {exc.strerror or exc}; nothing was written") \
            from None
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        raise QuantizeError(f"{output} exists and is not a regular file; quantize writes only regular files; "
                            "nothing was written")
    if not force:
        raise QuantizeError(f"{output} already exists; quantize never replaces a file unless told to "
                            "(--force, or the option force); nothing was written")


def write_output(result: Path, model: onnx.ModelProto, output: Path, force: bool) -> None:
    """Stage ``model`` (the build at ``result``, stamped) beside ``output`` and put it in place; without
    ``force`` only where no file is."""
    extra = result.with_name(result.name + ".data")
    if extra.exists():
        raise QuantizeError("the quantized model is larger than 2 GiB; writing external data is not supported yet")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise QuantizeError(f"{output.parent}: cannot create the output folder: {exc.strerror or exc}; nothing was "
                            "written") from None
    staged = StagedWrite(output, model.SerializeToString(), new_file=not force)
    with staged:
        staged.commit()
