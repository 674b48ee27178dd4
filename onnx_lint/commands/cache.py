"""A per-file lint cache, like ruff's: keyed by path, file identity and settings.

A hit skips parsing and inference entirely. The file's identity is what git's
index uses: size, mtime, ctime and inode, so a same-size replacement with its
mtime preserved (``cp -p``, ``rsync -t``) still misses. The engines that could
run (onnx, and onnxruntime and sympy for the fallback engines) and their
versions are part of the key: a verdict reached without an engine must not
survive the engine's install. External data files are part of the key too
(their identity is re-checked), because their validity is part of the result.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from onnx_lint.base.private_dirs import read_regular_file
from onnx_lint.base.version import __version__
from onnx_lint.lint.diagnostics import Diagnostic

CACHE_DIR_NAME = ".onnx-lint-cache"


@functools.lru_cache(maxsize=1)
def _onnx_version() -> str:
    """onnx's version without importing onnx: a cache hit must not pay for that import."""
    try:
        return importlib.metadata.version("onnx")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - onnx is a dependency
        import onnx

        return onnx.__version__


# The form of a stored result: 2 since fix edits carry the proof of each number they write (an older
# record's edits have none, and the fix planner would refuse them).
RECORD_FORMAT = "records-2"

# Optional engines: whether each can be imported decides which facts a lint can derive.
OPTIONAL_ENGINES = ("onnxruntime", "sympy")


@functools.lru_cache(maxsize=1)
def engines_key() -> str:
    """``onnxruntime=1.32.0|sympy=absent``: which optional engines can run, found without importing them."""
    import importlib.util

    parts = []
    for name in OPTIONAL_ENGINES:
        try:
            importable = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # ValueError: sys.modules[name] is None (import blocked)
            importable = False
        try:
            version = importlib.metadata.version(name) if importable else "absent"
        except importlib.metadata.PackageNotFoundError:
            version = "unversioned"
        parts.append(f"{name}={version}")
    return "|".join(parts)


def _stat_key(path: Path) -> tuple[int, int, int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino


def _real_folder(folder: Path) -> bool:
    """``folder`` is a directory and not a symbolic link (a committed link would carry writes elsewhere)."""
    try:
        return stat.S_ISDIR(os.lstat(folder).st_mode)
    except OSError:
        return False


def _make_folder(folder: Path) -> bool:
    """Create ``folder`` if missing; whether it is now a real directory (a link in its place is refused)."""
    try:
        folder.mkdir(exist_ok=True)
    except OSError:
        return False
    return _real_folder(folder)


def _sealed(body: str) -> str:
    """An entry's text: the sha256 of its JSON body on the first line, then the body."""
    return hashlib.sha256(body.encode()).hexdigest() + "\n" + body


def _unsealed(text: str) -> str | None:
    """The JSON body of an entry whose checksum matches; ``None`` for a truncated or edited entry."""
    digest, _, body = text.partition("\n")
    return body if hashlib.sha256(body.encode()).hexdigest() == digest else None


class LintCache:
    """Lint results stored as small JSON files under ``<root>/.onnx-lint-cache``.

    The cache folder and everything in it are used only as real directories and regular
    files: a symbolic link there (committed to a repository, say) is never followed for a
    read or a write, and the ``.gitignore`` is created only where no file or link is. Each
    entry carries the checksum of its content, so a truncated or hand-edited entry is a miss.
    """

    def __init__(self, root: Path, settings_fingerprint: str) -> None:
        self.base = root / CACHE_DIR_NAME
        self.folder = self.base / __version__
        self.salt = f"{__version__}|{RECORD_FORMAT}|{_onnx_version()}|{engines_key()}|{settings_fingerprint}"

    def _entry(self, path: Path) -> Path | None:
        stat_key = _stat_key(path)
        if stat_key is None:
            return None
        raw = f"{self.salt}|{path.resolve()}|{'|'.join(map(str, stat_key))}".encode()
        digest = hashlib.sha256(raw).hexdigest()
        return self.folder / digest[:2] / f"{digest}.json"

    def _read(self, entry: Path) -> str | None:
        """The entry's text, read only through real folders and from a regular file (no link followed)."""
        if not all(_real_folder(f) for f in (self.base, self.folder, entry.parent)):
            return None
        return read_regular_file(entry)

    def get(self, path: Path, display: str) -> list[Diagnostic] | None:
        entry = self._entry(path)
        text = self._read(entry) if entry is not None else None
        body = _unsealed(text) if text is not None else None
        if body is None:
            return None
        try:
            payload: dict[str, Any] = json.loads(body)
        except ValueError:
            return None
        for location, *identity in payload.get("external", []):
            if list(_stat_key(path.parent / location) or ()) != identity:
                return None
        try:
            return [Diagnostic.from_record({**r, "file": display}) for r in payload["diagnostics"]]
        except (KeyError, TypeError, ValueError):
            return None

    def put(self, path: Path, diagnostics: list[Diagnostic], external: list[str]) -> None:
        entry = self._entry(path)
        if entry is None:
            return
        ext = []
        for location in external:
            stat_key = _stat_key(path.parent / location)
            if stat_key is None:
                return
            ext.append([location, *stat_key])
        payload = {"diagnostics": [d.to_record() for d in diagnostics], "external": ext}
        if not all(_make_folder(f) for f in (self.base, self.folder, entry.parent)):
            return  # a read-only checkout, or a link where a cache folder belongs: no cache
        self._ignore_in_git()
        try:
            fd, temp = tempfile.mkstemp(dir=entry.parent, prefix=entry.stem, suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(_sealed(json.dumps(payload)))
            os.replace(temp, entry)  # replaces a link at ``entry`` itself, never its target
        except OSError:
            Path(temp).unlink(missing_ok=True)

    def _ignore_in_git(self) -> None:
        """Create ``.gitignore`` in the cache folder unless a file or link of that name is there already."""
        try:
            fd = os.open(self.base / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL
                         | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError:
            return  # there already (or a dangling link, which is not followed)
        with os.fdopen(fd, "w") as out:
            out.write("# Automatically created by onnx-lint.\n*\n")
