"""External data checked with ``os.stat`` only: inside the model's folder, present, large enough.

Nothing outside the model's folder is ever opened (docs/security.md).
"""

from __future__ import annotations

import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import onnx

from onnx_lint.base.errors import ModelLoadError

# Types whose elements pack into less than a byte: raw data holds ceil(count * bits / 8) bytes.
_SUB_BYTE_BITS = {getattr(onnx.TensorProto, name): bits
                  for name, bits in (("INT4", 4), ("UINT4", 4), ("FLOAT4E2M1", 4), ("INT2", 2), ("UINT2", 2))
                  if hasattr(onnx.TensorProto, name)}


# Whole-byte element sizes by type, looked up once: the loop over every tensor reads this table.
ITEMSIZES: dict[int, int] = {}
for _type in onnx.TensorProto.DataType.values():
    if _type in _SUB_BYTE_BITS or _type in (onnx.TensorProto.STRING, onnx.TensorProto.UNDEFINED):
        continue
    try:
        ITEMSIZES[_type] = onnx.helper.tensor_dtype_to_np_dtype(_type).itemsize
    except (KeyError, ValueError, TypeError):
        pass


def raw_size(data_type: int, count: int) -> int | None:
    """Bytes that ``count`` elements of ``data_type`` take as raw data; None if not fixed (strings)."""
    itemsize = ITEMSIZES.get(data_type)
    if itemsize is not None:
        return count * itemsize
    bits = _SUB_BYTE_BITS.get(data_type)
    if bits is not None:
        return (count * bits + 7) // 8
    if data_type == onnx.TensorProto.STRING:
        return None
    try:
        return count * onnx.helper.tensor_dtype_to_np_dtype(data_type).itemsize
    except (KeyError, ValueError, TypeError):
        return None


@dataclass
class _ExternalUse:
    """One external data file as the tensors see it: the first tensor naming it and the furthest byte any needs."""

    first: str
    needed: int = 0
    needing: onnx.TensorProto | None = None  # the tensor itself: reading its name costs, per tensor
    start: int = 0


def check_external_data(tensors: list[onnx.TensorProto], path: Path) -> list[str]:
    """Refuse external references that escape the model folder, are missing or too short.

    Only ``os.stat`` is used: no byte of any weights file is read. A large export
    has tens of thousands of tensors in one ``.data`` file, so each distinct
    location is checked and stat-ed once, and per tensor there is only arithmetic.
    """
    display = str(path)
    uses: dict[str, _ExternalUse] = {}
    for tensor in tensors:
        location = offset_text = length_text = ""
        for entry in tensor.external_data:  # a loop, not a dict: this runs once per tensor
            key = entry.key
            if key == "location":
                location = entry.value
            elif key == "offset":
                offset_text = entry.value
            elif key == "length":
                length_text = entry.value
        use = uses.get(location)
        if use is None:
            _check_location(display, f"tensor '{tensor.name}'", location)
            use = uses[location] = _ExternalUse(tensor.name)
        try:
            offset = int(offset_text) if offset_text else 0
            length = int(length_text) if length_text else None
        except ValueError:
            raise ModelLoadError(display, f"tensor '{tensor.name}': external data offset/length are not integers"
                                 ) from None
        if offset < 0 or (length is not None and length < 0):
            raise ModelLoadError(display, f"tensor '{tensor.name}': negative external data offset or length")
        if length is None:
            length = raw_size(tensor.data_type, math.prod(tensor.dims))
        needed = offset + (length or 0)
        if needed > use.needed:
            use.needed, use.needing, use.start = needed, tensor, offset
    if uses:
        folder = path.resolve().parent
        for location, use in uses.items():
            _check_file(display, folder, location, use)
    return list(uses)


def _check_location(display: str, where: str, location: str) -> None:
    """Refuse a location string that names no file or points outside the model folder by its text."""
    if not location:
        raise ModelLoadError(display, f"{where} uses external data but names no file")
    if "\0" in location:
        raise ModelLoadError(display, f"refusing {where}: external data location contains a NUL byte")
    if os.path.isabs(location) or location.startswith(("/", "\\")) or (len(location) > 1 and location[1] == ":"):
        raise ModelLoadError(
            display, f"refusing {where}: external data location '{location}' is an absolute path"
        )
    if ".." in Path(location.replace("\\", "/")).parts:
        raise ModelLoadError(
            display, f"refusing {where}: external data location '{location}' escapes the model folder"
        )


def _check_file(display: str, folder: Path, location: str, use: _ExternalUse) -> None:
    """Resolve and stat one external data file: inside the folder, a regular file, long enough."""
    where = f"tensor '{use.first}'"
    resolved = (folder / location).resolve()
    if resolved != folder and folder not in resolved.parents:
        raise ModelLoadError(
            display,
            f"refusing {where}: external data location '{location}' resolves outside the "
            "model folder (symbolic link)",
        )
    try:
        found = resolved.stat()
    except OSError:
        raise ModelLoadError(display, f"{where}: external data file '{location}' is missing") from None
    if not stat.S_ISREG(found.st_mode):
        raise ModelLoadError(display, f"{where}: external data location '{location}' is not a file")
    if found.st_size < use.needed:
        raise ModelLoadError(
            display,
            f"tensor '{use.needing.name if use.needing else use.first}': external data file '{location}' has "
            f"{found.st_size} bytes but the "
            f"tensor needs bytes {use.start}..{use.needed}",
        )


def read_external_weights(tensors: list[onnx.TensorProto], path: Path) -> None:
    """Bring every external tensor's bytes into the model, reading each file through one descriptor that was
    checked after it was opened (inside the model folder, a regular file, long enough).

    ``check_external_data`` checks the paths by ``stat``; between that check and a later open by path (onnx's
    own loader), a file could be swapped for a link to somewhere else. Here each distinct file is opened once,
    without following a link in its last component, and what was opened is checked through the descriptor
    (its resolved path on Linux, its type and size everywhere) before a byte is read from it.
    """
    display = str(path)
    folder = path.resolve().parent
    opened: dict[str, int] = {}
    try:
        for tensor in tensors:
            entries = {entry.key: entry.value for entry in tensor.external_data}
            location = entries.get("location", "")
            _check_location(display, f"tensor '{tensor.name}'", location)
            if location not in opened:
                opened[location] = _open_inside(display, folder, location, tensor.name)
            offset = int(entries.get("offset") or 0)
            length = entries.get("length")
            size = int(length) if length else raw_size(tensor.data_type, math.prod(tensor.dims))
            if size is None or offset < 0 or size < 0:
                raise ModelLoadError(display, f"tensor '{tensor.name}': cannot size its external data")
            data = os.pread(opened[location], size, offset) if size else b""
            if len(data) != size:
                raise ModelLoadError(display, f"tensor '{tensor.name}': external data file '{location}' ended "
                                     f"before byte {offset + size}")
            tensor.raw_data = data
            del tensor.external_data[:]
            tensor.data_location = onnx.TensorProto.DEFAULT
    except ValueError:
        raise ModelLoadError(display, "external data offset/length are not integers") from None
    finally:
        for descriptor in opened.values():
            os.close(descriptor)


def _open_inside(display: str, folder: Path, location: str, name: str) -> int:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(folder / location, flags)
    except OSError as exc:
        raise ModelLoadError(display, f"tensor '{name}': cannot open external data file '{location}' "
                             f"({exc.strerror or exc}; a symbolic link is not followed)") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise ModelLoadError(display, f"tensor '{name}': external data location '{location}' is not a file")
        real = Path(os.readlink(f"/proc/self/fd/{descriptor}")) if os.path.exists("/proc/self/fd") else None
        if real is not None and real != folder and folder not in real.parents:
            raise ModelLoadError(display, f"refusing tensor '{name}': external data location '{location}' "
                                 "resolves outside the model folder (symbolic link)")
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor
