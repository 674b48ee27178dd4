"""Per-user folders (caches, the temporary-directory fallback) that only this user can have written.

Facts read from such a folder decide verdicts (which IR and opsets ONNX Runtime
accepts), so a folder another user could create or write, a predictable name in a
shared ``/tmp`` above all, is never read from or written to: it must be a real
directory (not a symbolic link), owned by the current user, with no write bit for
group or others. Ours are created ``0700``. A refused folder costs a recomputation,
never a wrong answer.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_POSIX = os.name == "posix"


def is_private(folder: Path) -> bool:
    """``folder`` exists as a real directory of this user that nobody else can write."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode):  # a symbolic link shows as a link here, never as its target
        return False
    if not _POSIX:
        return True
    return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def private_folder(folder: Path) -> Path | None:
    """``folder``, created ``0700`` if missing, when it is private (``is_private``); else ``None``."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return None
    return folder if is_private(folder) else None


def read_private_file(path: Path) -> str | None:
    """The text of ``path`` when its folder is private and it is a regular file of this user (no link followed)."""
    if not is_private(path.parent):
        return None
    return read_regular_file(path, own=True)


def read_regular_file(path: Path, *, own: bool = False) -> str | None:
    """The text of ``path`` when it is a regular file (and, with ``own``, one of this user), opened
    without following a link; ``None`` otherwise or when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "r", encoding="utf-8") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or (own and _POSIX and info.st_uid != os.getuid()):
                return None
            return handle.read()
    except (OSError, ValueError):
        return None
