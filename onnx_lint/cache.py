"""A per-file lint cache, like ruff's: keyed by path, size, mtime and settings.

A hit skips parsing and inference entirely. External data files are part of
the key (their size and mtime are re-checked), because their validity is part
of the lint result.
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


@functools.lru_cache(maxsize=1)
def _runtime_version() -> str:
    try:
        return importlib.metadata.version("onnxruntime")
    except importlib.metadata.PackageNotFoundError:
        return "none"


def _stat_key(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


class LintCache:
    """Lint results stored as small JSON files under ``<root>/.onnx-lint-cache``."""

    def __init__(self, root: Path, settings_fingerprint: str) -> None:
        self.folder = root / CACHE_DIR_NAME / onnx_lint.__version__
        # ONNX Runtime's version too: OL106/OL107 report what the installed runtime accepts.
        self.salt = f"{onnx_lint.__version__}|{_onnx_version()}|{_runtime_version()}|{settings_fingerprint}"

    def _entry(self, path: Path) -> Path | None:
        stat = _stat_key(path)
        if stat is None:
            return None
        raw = f"{self.salt}|{path.resolve()}|{stat[0]}|{stat[1]}".encode()
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
        for location, size, mtime in payload.get("external", []):
            if _stat_key(path.parent / location) != (size, mtime):
                return None
        try:
            diagnostics = [Diagnostic.from_record(r) for r in payload["diagnostics"]]
        except (KeyError, TypeError, ValueError):
            return None
        for d in diagnostics:
            d.file = display
        return diagnostics

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
