"""Watch a file for opens and reads by *any* code (C++ included) via Linux inotify."""

from __future__ import annotations

import ctypes
import os
import struct
from pathlib import Path

IN_ACCESS = 0x001
IN_MODIFY = 0x002
IN_OPEN = 0x020
_libc = ctypes.CDLL(None, use_errno=True)


class FileWatch:
    """Counts IN_OPEN / IN_ACCESS / IN_MODIFY events on one file while active."""

    def __init__(self, path: Path) -> None:
        self.fd = _libc.inotify_init1(os.O_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        if _libc.inotify_add_watch(self.fd, str(path).encode(), IN_OPEN | IN_ACCESS | IN_MODIFY) < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch failed for {path}")

    def events(self) -> list[int]:
        masks = []
        while True:
            try:
                data = os.read(self.fd, 4096)
            except BlockingIOError:
                return masks
            offset = 0
            while offset < len(data):
                _wd, mask, _cookie, length = struct.unpack_from("iIII", data, offset)
                masks.append(mask)
                offset += 16 + length

    def close(self) -> None:
        os.close(self.fd)
