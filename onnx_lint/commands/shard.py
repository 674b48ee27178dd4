"""``check --shard K/N``: split the files of one scan over the N jobs of a CI matrix.

Each file goes to one shard, chosen by a hash of its path relative to the project root (the
configuration file's folder, else the working folder), so every job of the matrix, on its own
checkout and in its own order of discovery, agrees on who checks what, run after run.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from onnx_lint.base.errors import ConfigError

_DIGITS = re.compile(r"[0-9]{1,9}")


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``: shard numbers start at 1, as CI matrices count them."""
    k, sep, n = text.partition("/")
    k, n = k.strip(), n.strip()
    # ASCII digits only: "²".isdigit() is True, and int("²") raises.
    if not sep or not _DIGITS.fullmatch(k) or not _DIGITS.fullmatch(n) or not 1 <= int(k) <= int(n):
        raise ConfigError(f"--shard '{text}' must be K/N with 1 <= K <= N, e.g. --shard 2/4")
    return int(k), int(n)


def shard_key(path: Path, root: Path) -> str:
    """The path that decides the shard: relative to ``root`` where it lies below it, with ``/`` separators."""
    absolute = Path(os.path.abspath(path))
    try:
        relative = absolute.relative_to(os.path.abspath(root))
    except ValueError:
        relative = absolute
    return relative.as_posix()


def in_shard(path: Path, root: Path, shard: tuple[int, int]) -> bool:
    k, n = shard
    digest = hashlib.sha256(shard_key(path, root).encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % n == k - 1
