"""Checks of a model file that need only ``os.stat`` and a few bytes: importable without onnx.

The language server runs them before it hashes a file, so a FIFO, a folder or
a 2 GiB file is refused without a byte read, and a file whose top-level protobuf
fields cannot be a message (2 GiB of zeros) after a few bytes (docs/security.md).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from onnx_lint.base.errors import ModelLoadError

# Protobuf refuses messages above 2 GiB; a bigger file cannot hold a model in one message.
MAX_PROTO_BYTES = 2**31 - 1


def stat_model_file(path: Path) -> os.stat_result:
    """What ``os.stat`` can refuse before any byte is read: missing, a folder, a FIFO, over 2 GiB."""
    display = str(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        broken = " (a broken symbolic link)" if path.is_symlink() else ""
        raise ModelLoadError(display, "no such file" + broken) from None
    except OSError as exc:
        raise ModelLoadError(display, f"cannot read file: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ModelLoadError(display, "is a folder, not a model file")
    if not stat.S_ISREG(info.st_mode):  # a FIFO or a device would block or never end
        raise ModelLoadError(display, "is not a regular file (a FIFO, socket or device); refusing to read it")
    if info.st_size == 0:
        raise ModelLoadError(display, "empty file (0 bytes), not an ONNX model")
    if info.st_size > MAX_PROTO_BYTES:
        raise ModelLoadError(
            display,
            f"file is {info.st_size / 2**30:.1f} GiB; an ONNX protobuf cannot exceed 2 GiB "
            "(store the weights as external data)",
        )
    return info


# ModelProto's top level holds a handful of fields (the graph is one of them); walking more than
# this many without reaching the end means something else, and the parser will say what.
_MAX_TOP_LEVEL_FIELDS = 100_000


def wire_problem(handle: BinaryIO, size: int) -> str | None:
    """Why the file's top-level protobuf fields cannot be a message, found by seeking over them.

    Only the keys and lengths of the top-level fields are read (a few bytes each), so a 2 GiB
    file of zeros or random bytes is refused at once. Only what protobuf itself would refuse is
    reported (field number 0, a reserved wire type, a field running past the end of the file);
    anything else is left to the parser.
    """
    pos = fields = 0
    while pos < size and fields < _MAX_TOP_LEVEL_FIELDS:
        fields += 1
        handle.seek(pos)
        head = handle.read(21)  # a key and a length: two varints of at most 10 bytes
        key, used = read_varint(memoryview(head), 0, len(head))
        if key is None or used is None:
            return f"byte {pos} does not start a protobuf field (truncated or corrupt file, or not an ONNX model)"
        number, wire = key >> 3, key & 7
        if number == 0:
            zero = "a zero byte" if head[:1] == b"\0" else "field number 0"
            return f"byte {pos} starts with {zero}, which no protobuf field can (not an ONNX model)"
        if wire == 0:
            _value, after = read_varint(memoryview(head), used, len(head))
            if after is None:
                return f"field {number} at byte {pos} is cut off (truncated or corrupt file)"
            pos += after
        elif wire in (1, 5):
            pos += used + (8 if wire == 1 else 4)
        elif wire == 2:
            length, after = read_varint(memoryview(head), used, len(head))
            if length is None or after is None:
                return f"field {number} at byte {pos} is cut off (truncated or corrupt file)"
            pos += after + length
        elif wire in (3, 4):  # groups: obsolete, never written by ONNX; the parser decides
            return None
        else:
            return f"byte {pos} holds wire type {wire}, which protobuf does not have (not an ONNX model)"
        if pos > size:
            return (f"field {number} runs to byte {pos} but the file ends at byte {size} "
                    "(truncated or corrupt file, or not an ONNX model)")
    return None


def check_wire(path: Path) -> None:
    """``wire_problem`` of the file at ``path`` as a ``ModelLoadError`` (what the server runs before hashing)."""
    try:
        with open(path, "rb") as handle:
            problem = wire_problem(handle, os.fstat(handle.fileno()).st_size)
    except OSError as exc:
        raise ModelLoadError(str(path), f"cannot read file: {exc.strerror or exc}") from None
    if problem is not None:
        raise ModelLoadError(str(path), f"not a valid ONNX protobuf: {problem}; refused before reading it")


def read_varint(view: memoryview, pos: int, end: int) -> tuple[int | None, int | None]:
    value = shift = 0
    while pos < end and shift < 64:
        byte = view[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
    return None, None
