"""Reading a calibration file someone else made: every size is checked before anything is allocated.

A ``.npz`` is a zip archive: 2.8 MB of zeros compresses a 3.6 GiB array, and ``np.load`` allocates
whatever an array's header declares. A ``.npy`` header can declare 20 GB over 64 bytes of data. A
path may name a FIFO (a read blocks forever) or a device. So the file is opened once, without
blocking, and must be a regular file; what it holds is told by its first bytes, not its suffix; each
array's header is read first and its declared bytes are added up against ``MAX_CALIBRATION_BYTES``
(and, for a ``.npy``, against the file's own size) before any data is read; pickled objects are
never loaded; and float data must be finite (NaN or infinity makes every scale meaningless).
"""

from __future__ import annotations

import math
import os
import stat
import zipfile
from pathlib import Path
from typing import IO

import numpy as np

from onnx_lint.base.errors import OnnxLintError

# The most bytes of array data a calibration file may declare in all (a few hundred images at 224x224 in
# float32 is ~300 MB): each sample is copied again when it is cut, so the peak is about twice this.
MAX_CALIBRATION_BYTES = 1 << 30
# The most arrays a .npz may hold (one per graph input; a model with more inputs is not calibrated from files).
MAX_ARRAYS = 1024
_ZIP, _NPY = b"PK\x03\x04", b"\x93NUMPY"


class CalibrationFileError(OnnxLintError):
    """The calibration file cannot be read safely; the message names the file and the problem."""


def read_arrays(path: Path, limit: int = MAX_CALIBRATION_BYTES) -> tuple[dict[str, np.ndarray], str]:
    """The arrays of a ``.npz`` (by key) or of a ``.npy`` (under the key ``""``), and which of the two it was."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise CalibrationFileError(f"{path}: no such calibration data file") from None
    except OSError as exc:
        raise CalibrationFileError(f"{path}: cannot open calibration data: {exc.strerror or exc}") from None
    with os.fdopen(descriptor, "rb") as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise CalibrationFileError(f"{path}: calibration data must be a regular file (this is a "
                                       f"{_kind(info.st_mode)})")
        head = stream.read(6)
        stream.seek(0)
        kind = "npz" if head.startswith(_ZIP) else "npy" if head.startswith(_NPY) else None
        if kind is None:
            raise CalibrationFileError(f"{path}: not a .npz or .npy file (its first bytes are neither a zip "
                                       f"archive nor a NumPy array)")
        if path.suffix in (".npz", ".npy") and path.suffix[1:] != kind:
            raise CalibrationFileError(f"{path}: named {path.suffix} but holds a .{kind} "
                                       f"{'archive' if kind == 'npz' else 'array'}: rename it")
        try:
            if kind == "npy":
                return {"": _read_npy(stream, path, "", limit, info.st_size)}, kind
            return _read_npz(stream, path, limit), kind
        except CalibrationFileError:
            raise
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile) as exc:
            raise CalibrationFileError(f"{path}: cannot read calibration data: {exc}") from None


def _read_npz(stream: IO[bytes], path: Path, limit: int) -> dict[str, np.ndarray]:
    with zipfile.ZipFile(stream) as archive:
        members = [m for m in archive.infolist() if not m.is_dir()]
        if len(members) > MAX_ARRAYS:
            raise CalibrationFileError(f"{path}: holds {len(members)} files; at most {MAX_ARRAYS} arrays are read")
        declared, headers = 0, []
        for member in members:  # every header before any data: the sum is checked first
            if not member.filename.endswith(".npy"):
                raise CalibrationFileError(f"{path}: '{member.filename}' is not a .npy array")
            with archive.open(member) as inner:
                shape, dtype = _header(inner, path, member.filename)
            declared += _nbytes(shape, dtype)
            headers.append((member, shape, dtype))
            if declared > limit:
                raise CalibrationFileError(
                    f"{path}: its arrays declare {_size(declared)} or more once decompressed; calibration data "
                    f"is limited to {_size(limit)} (use fewer samples)")
        arrays = {}
        for member, _, _ in headers:
            with archive.open(member) as inner:
                arrays[member.filename[:-4]] = _finite(np.lib.format.read_array(inner, allow_pickle=False),
                                                       path, member.filename[:-4])
        return arrays


def _read_npy(stream: IO[bytes], path: Path, key: str, limit: int, size: int) -> np.ndarray:
    start = stream.tell()
    shape, dtype = _header(stream, path, key or path.name)
    needed = _nbytes(shape, dtype)
    if needed > limit:
        raise CalibrationFileError(f"{path}: the array declares {_size(needed)}; calibration data is limited to "
                                   f"{_size(limit)} (use fewer samples)")
    if stream.tell() + needed > size:
        raise CalibrationFileError(f"{path}: the array declares {_size(needed)} of data, but the file holds "
                                   f"{_size(size - stream.tell())}: it is truncated or its header lies")
    stream.seek(start)  # read_array reads the header again itself
    return _finite(np.lib.format.read_array(stream, allow_pickle=False), path, key)


def _header(stream: IO[bytes], path: Path, name: str) -> tuple[tuple[int, ...], np.dtype]:
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        shape, _fortran, dtype = np.lib.format.read_array_header_1_0(stream)
    elif version in ((2, 0), (3, 0)):
        shape, _fortran, dtype = np.lib.format.read_array_header_2_0(stream)
    else:
        raise CalibrationFileError(f"{path}: '{name}' has an unknown .npy format version {version}")
    if dtype.hasobject:
        raise CalibrationFileError(f"{path}: '{name}' holds Python objects (pickles are never loaded)")
    return shape, dtype


def _nbytes(shape: tuple[int, ...], dtype: np.dtype) -> int:
    return math.prod(shape) * dtype.itemsize


def _finite(array: np.ndarray, path: Path, key: str) -> np.ndarray:
    if np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.complexfloating):
        bad = array.size - int(np.count_nonzero(np.isfinite(array)))
        if bad:
            where = f"'{key}'" if key else "the array"
            raise CalibrationFileError(f"{path}: {where} holds {bad} of {array.size} values that are NaN or "
                                       f"infinite; calibration ranges need finite data")
    return array


def _size(count: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISDIR(mode):
        return "folder"
    return "special file"
