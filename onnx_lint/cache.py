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
from pathlib import Path
from typing import Any

import onnx_lint
from onnx_lint.diagnostics import Diagnostic

CACHE_DIR_NAME = ".onnx-lint-cache"


@functools.lru_cache(maxsize=1)
def _onnx_version() -> str:
    """onnx's version without importing onnx: a cache hit must not pay for that import."""
    try:
        return importlib.metadata.version("onnx")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - onnx is a dependency
        import onnx

        return onnx.__version__


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
        stat = path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino


class LintCache:
    """Lint results stored as small JSON files under ``<root>/.onnx-lint-cache``."""

    def __init__(self, root: Path, settings_fingerprint: str) -> None:
        self.folder = root / CACHE_DIR_NAME / onnx_lint.__version__
        self.salt = f"{onnx_lint.__version__}|{_onnx_version()}|{engines_key()}|{settings_fingerprint}"

    def _entry(self, path: Path) -> Path | None:
        stat = _stat_key(path)
        if stat is None:
            return None
        raw = f"{self.salt}|{path.resolve()}|{'|'.join(map(str, stat))}".encode()
        digest = hashlib.sha256(raw).hexdigest()
        return self.folder / digest[:2] / f"{digest}.json"

    def get(self, path: Path, display: str) -> list[Diagnostic] | None:
        entry = self._entry(path)
        if entry is None or not entry.is_file():
            return None
        try:
            payload: dict[str, Any] = json.loads(entry.read_text())
        except (OSError, ValueError):
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
            stat = _stat_key(path.parent / location)
            if stat is None:
                return
            ext.append([location, *stat])
        payload = {"diagnostics": [d.to_record() for d in diagnostics], "external": ext}
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            gitignore = self.folder.parent / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# Automatically created by onnx-lint.\n*\n")
            tmp = entry.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(payload))
            os.replace(tmp, entry)
        except OSError:
            pass  # a read-only checkout just runs without a cache
