"""Configuration: ``[tool.onnx-lint]`` in pyproject.toml or a top-level onnx-lint.toml.

Selectors are code prefixes as in ruff (``OL`` all, ``OL00`` a group, ``OL001``
one rule, ``ALL``). The most specific selector wins; at equal specificity an
ignore beats a select.
"""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from onnx_lint.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KEYS = {"select", "extend-select", "ignore", "per-file-ignores"}


@dataclass(frozen=True)
class Settings:
    """Which rules run on which files."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    source: Path | None = None

    def enabled(self, code: str, all_codes: Iterable[str], default_codes: Iterable[str],
                file: Path | None = None) -> bool:
        """Whether rule ``code`` runs on ``file`` under these settings."""
        if code not in set(all_codes):
            return False
        selects = list(self.select) if self.select is not None else list(default_codes)
        selects += list(self.extend_select)
        ignores = list(self.ignore) + (list(self._file_ignores(file)) if file is not None else [])
        best_select = max((_specificity(s) for s in selects if _matches(s, code)), default=-1)
        best_ignore = max((_specificity(s) for s in ignores if _matches(s, code)), default=-1)
        return best_select >= 0 and best_select > best_ignore

    def _file_ignores(self, file: Path) -> Iterable[str]:
        base = self.source.parent if self.source else Path.cwd()
        try:
            relative = PurePosixPath(Path(file).resolve().relative_to(base.resolve()).as_posix())
        except ValueError:
            relative = PurePosixPath(Path(file).as_posix())
        for pattern, codes in self.per_file_ignores:
            if _glob_match(relative, pattern):
                yield from codes


def _specificity(selector: str) -> int:
    return 0 if selector == "ALL" else len(selector)


def _matches(selector: str, code: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def _glob_match(path: PurePosixPath, pattern: str) -> bool:
    text = str(path)
    if "/" not in pattern:
        return fnmatch.fnmatchcase(path.name, pattern)
    if fnmatch.fnmatchcase(text, pattern):
        return True
    if pattern.startswith("**/"):
        return fnmatch.fnmatchcase(text, pattern[3:]) or fnmatch.fnmatchcase(path.name, pattern[3:])
    return False


def find_config(start: Path) -> Path | None:
    """The nearest onnx-lint.toml, or pyproject.toml with ``[tool.onnx-lint]``, from start upwards."""
    folder = start.resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        own = candidate / "onnx-lint.toml"
        if own.is_file():
            return own
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
                continue
            if "onnx-lint" in data.get("tool", {}):
                return pyproject
    return None


def _codes(value: Any, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"'{key}' in {where} must be a list of rule codes, for example [\"OL001\"]")
    return tuple(v.strip().upper() for v in value)


def load_config(path: Path) -> Settings:
    """Settings from a configuration file; ``ConfigError`` names the file and the bad key."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("onnx-lint", {})
        where = f"{path} [tool.onnx-lint]"
    else:
        table = data
        where = str(path)
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    for key in table:
        if key not in KEYS:
            raise ConfigError(f"unknown key '{key}' in {where} (known: {', '.join(sorted(KEYS))})")
    per_file: list[tuple[str, tuple[str, ...]]] = []
    raw_per_file = table.get("per-file-ignores", {})
    if not isinstance(raw_per_file, dict):
        raise ConfigError(f"'per-file-ignores' in {where} must be a table of glob = [codes]")
    for pattern, codes in raw_per_file.items():
        per_file.append((pattern, _codes(codes, f"per-file-ignores.{pattern}", where)))
    return Settings(
        select=_codes(table["select"], "select", where) if "select" in table else None,
        extend_select=_codes(table.get("extend-select", []), "extend-select", where),
        ignore=_codes(table.get("ignore", []), "ignore", where),
        per_file_ignores=tuple(per_file),
        source=path,
    )


def merge_cli(settings: Settings, *, select: tuple[str, ...] | None = None,
              extend_select: tuple[str, ...] | None = None, ignore: tuple[str, ...] | None = None) -> Settings:
    """Command-line options on top of a file: ``--select`` replaces, the others extend."""
    return replace(
        settings,
        select=select if select is not None else settings.select,
        extend_select=settings.extend_select + (extend_select or ()),
        ignore=settings.ignore + (ignore or ()),
    )
