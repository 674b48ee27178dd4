"""Checks of a model file that need only ``os.stat``: importable without onnx.

The language server runs them before it hashes a file, so a FIFO, a folder or
a 2 GiB file is refused without a byte read (docs/security.md).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from onnx_lint.errors import ModelLoadError

# Protobuf refuses messages above 2 GiB; a bigger file cannot hold a model in one message.
MAX_PROTO_BYTES = 2**31 - 1


def stat_model_file(path: Path) -> os.stat_result:
    """What ``os.stat`` can refuse before any byte is read: missing, a folder, a FIFO, over 2 GiB."""
    shown = str(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        broken = " (a broken symbolic link)" if path.is_symlink() else ""
        raise ModelLoadError(shown, "no such file" + broken) from None
    except OSError as exc:
        raise ModelLoadError(shown, f"cannot read file: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ModelLoadError(shown, "is a folder, not a model file")
    if not stat.S_ISREG(info.st_mode):  # a FIFO or a device would block or never end
        raise ModelLoadError(shown, "is not a regular file (a FIFO, socket or device); refusing to read it")
    if info.st_size == 0:
        raise ModelLoadError(shown, "empty file (0 bytes), not an ONNX model")
    if info.st_size > MAX_PROTO_BYTES:
        raise ModelLoadError(
            shown,
            f"file is {info.st_size / 2**30:.1f} GiB; an ONNX protobuf cannot exceed 2 GiB "
            "(store the weights as external data)",
        )
    return info
