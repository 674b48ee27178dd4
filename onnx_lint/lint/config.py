"""Configuration: ``[tool.onnx-lint]`` in pyproject.toml or a top-level onnx-lint.toml.

Rule selection follows ruff, so people who know ruff need to learn nothing:

* selectors are code prefixes (``OL`` all, ``OL00`` a group, ``OL001`` one
  rule, ``ALL`` everything);
* within one layer (the file, or the command line on top of it) the most
  specific selector wins, and at equal specificity an ignore beats a select;
* a layer with ``select`` starts afresh; one without it adjusts the rules the
  layer below left enabled (the defaults, for the bottom layer);
* per-file-ignores always win for the files they match.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from onnx_lint.base.errors import ConfigError
from onnx_lint.engines.budget import parse_budget

CONFIG_NAME = "onnx-lint.toml"
PYPROJECT = "pyproject.toml"
TABLE = "onnx-lint"
KEYS = ("select", "extend-select", "ignore", "per-file-ignores", "runtime-probe", "inference-budget")
_SELECTOR = re.compile(r"ALL|[A-Z]+[0-9]*")


@dataclass(frozen=True)
class Settings:
    """Which rules run on which files.

    ``base`` is the layer these selectors apply on top of (the configuration
    file, under the command line's options); ``None`` for the bottom layer,
    which starts from the default rule set.
    """

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Run the model in ONNX Runtime for outputs no static engine shapes (docs/design.md, "the runtime probe").
    runtime_probe: bool = True
    # Seconds each slow inference engine may run on one model; None: set by the model's size.
    inference_budget: float | None = None
    source: Path | None = None
    base: Settings | None = None

    def enabled(self, code: str, all_codes: Iterable[str], default_codes: Iterable[str],
                file: Path | None = None) -> bool:
        """Whether rule ``code`` runs (on ``file``, when given) under these settings."""
        if code not in set(all_codes):
            return False
        if not self._selected(code, frozenset(default_codes)):
            return False
        return file is None or not any(_matches(s, code) for s in self.file_ignores(file))

    def _selected(self, code: str, default_codes: frozenset[str]) -> bool:
        if self.select is not None:
            before = False
        elif self.base is not None:
            before = self.base._selected(code, default_codes)
        else:
            before = code in default_codes
        selects = (*(self.select or ()), *self.extend_select)
        best_select = max((_specificity(s) for s in selects if _matches(s, code)), default=-1)
        best_ignore = max((_specificity(s) for s in self.ignore if _matches(s, code)), default=-1)
        if best_select < 0 and best_ignore < 0:
            return before
        return best_select > best_ignore

    def selectors(self) -> Iterator[str]:
        """Every selector of every layer, for checking that each names some rule."""
        if self.base is not None:
            yield from self.base.selectors()
        yield from self.select or ()
        yield from self.extend_select
        yield from self.ignore
        for _, codes in self.per_file_ignores:
            yield from codes

    def check_selectors(self, all_codes: Iterable[str]) -> None:
        """``ConfigError`` for a selector that names no rule (a typo would silently select nothing)."""
        codes = list(all_codes)
        for selector in self.selectors():
            if selector != "ALL" and not any(code.startswith(selector) for code in codes):
                raise ConfigError(f"unknown rule selector '{selector}' (see `onnx-lint list-rules`)")

    def file_ignores(self, file: Path) -> Iterator[str]:
        """The per-file-ignores selectors whose glob matches ``file``.

        Globs are relative to the configuration file's folder (the working
        folder without one), so a config means the same from wherever it runs.
        """
        if not self.per_file_ignores:
            return  # the common case: no path resolution for every file and rule
        folder = self.source.parent if self.source else Path.cwd()
        relative = _relative_posix(Path(file), folder)
        for pattern, codes in self.per_file_ignores:
            if glob_match(relative, pattern):
                yield from codes


def _specificity(selector: str) -> int:
    return 0 if selector == "ALL" else len(selector)


def _matches(selector: str, code: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def _relative_posix(file: Path, folder: Path) -> PurePosixPath:
    try:
        return PurePosixPath(file.resolve().relative_to(folder.resolve()).as_posix())
    except (ValueError, OSError, RuntimeError):
        return PurePosixPath(file.as_posix())


def _star_variants(pattern: str) -> set[str]:
    """``pattern`` with each ``**/`` also read as zero folders (fnmatch alone needs one)."""
    variants = {pattern}
    for _ in range(pattern.count("**/")):
        variants |= {v.replace("**/", "", 1) for v in variants if "**/" in v}
        variants |= {v.replace("/**/", "/", 1) for v in variants if "/**/" in v}
    return variants


def glob_match(path: PurePosixPath, pattern: str) -> bool:
    """Whether a per-file-ignores glob matches a config-relative posix path.

    A pattern without ``/`` matches the file name in any folder, as in ruff.
    """
    pattern = pattern.removeprefix("./")
    if "/" not in pattern:
        return fnmatch.fnmatchcase(path.name, pattern) or fnmatch.fnmatchcase(str(path), pattern)
    return any(fnmatch.fnmatchcase(str(path), p) for p in _star_variants(pattern))


def _toml() -> Any:
    """The TOML parser, imported when a file is read: a run without a configuration file never needs it."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


# The largest configuration file read (a real one is a few hundred bytes).
MAX_CONFIG_BYTES = 1 << 20


def _read_toml(path: Path) -> dict[str, Any]:
    tomllib = _toml()
    try:
        text = _read_text(path)
        return tomllib.loads(text)
    except RecursionError:  # tomllib recurses once per nesting level of an array or inline table
        raise ConfigError(f"{path} is not valid TOML for onnx-lint: a value is nested too deeply") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: not UTF-8 ({exc.reason})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None


def _read_text(path: Path) -> str:
    """A configuration file's text: a regular file of at most ``MAX_CONFIG_BYTES`` (a FIFO would block)."""
    with open(path, "rb") as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file")
        if info.st_size > MAX_CONFIG_BYTES:
            raise OSError(0, f"larger than {MAX_CONFIG_BYTES // 1024} KiB")
        return stream.read(MAX_CONFIG_BYTES + 1).decode("utf-8")


def _has_table(pyproject: Path) -> bool:
    try:
        text = _read_text(pyproject)
    except (OSError, UnicodeDecodeError):
        return False
    tomllib = _toml()
    try:
        tool = tomllib.loads(text).get("tool")
    except (tomllib.TOMLDecodeError, RecursionError):
        # Broken, but meant for us: pick it so that load_config reports the error
        # instead of silently linting with the defaults.
        return f"[tool.{TABLE}" in text or f'[tool."{TABLE}"' in text
    return isinstance(tool, dict) and TABLE in tool


def find_config(start: Path, skipped: list[str] | None = None) -> Path | None:
    """The nearest onnx-lint.toml, or pyproject.toml with ``[tool.onnx-lint]``, from ``start`` up.

    In one folder onnx-lint.toml wins over pyproject.toml, as ruff.toml does for ruff. A file another user
    could have planted (``untrusted``) is passed over, and why goes to ``skipped``.
    """
    folder = Path(start).resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        for path in (candidate / CONFIG_NAME, candidate / PYPROJECT):
            if not path.is_file() or (path.name == PYPROJECT and not _has_table(path)):
                continue
            reason = untrusted(path)
            if reason is None:
                return path
            if skipped is not None:
                skipped.append(f"ignored {path}: {reason}; pass --config {path} to use it")
    return None


def untrusted(path: Path) -> str | None:
    """Why a discovered configuration file is not trusted (``None``: it is), as git's ``safe.directory`` reasons:
    a file anyone may write, or one owned by another user (not root) in a folder a group or anyone may write
    (``/tmp``, a shared folder above the project), could have been put there to turn rules off."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # Windows: no owners to compare
        return None
    try:
        info, parent = path.stat(), path.parent.stat()
    except OSError:
        return None
    if info.st_mode & stat.S_IWOTH:
        return "anyone may write it"
    me = getuid()
    if info.st_uid not in (me, 0) and parent.st_mode & (stat.S_IWOTH | stat.S_IWGRP):
        return f"it belongs to another user (uid {info.st_uid}) in a folder others may write"
    return None


def _codes(value: Any, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"'{key}' in {where} must be a list of rule codes, for example [\"OL001\"]")
    codes = tuple(v.strip().upper() for v in value)
    for code in codes:
        if not _SELECTOR.fullmatch(code):
            raise ConfigError(f"'{key}' in {where}: {code!r} is not a rule selector "
                              '(like "OL001", "OL00" or "ALL")')
    return codes


def load_config(path: Path) -> Settings:
    """Settings from a configuration file; ``ConfigError`` names the file and the bad key."""
    path = Path(path)
    data = _read_toml(path)
    if path.name == PYPROJECT:
        tool = data.get("tool", {})
        table = tool.get(TABLE, {}) if isinstance(tool, dict) else {}
        where = f"{path} [tool.{TABLE}]"
    else:
        table, where = data, str(path)
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    for key in table:
        if key not in KEYS:
            raise ConfigError(f"unknown key '{key}' in {where} (known keys: {', '.join(KEYS)})")
    raw_per_file = table.get("per-file-ignores", {})
    if not isinstance(raw_per_file, dict):
        raise ConfigError(f"'per-file-ignores' in {where} must be a table of \"glob\" = [codes]")
    per_file = tuple((glob, _codes(codes, f"per-file-ignores.{glob}", where))
                     for glob, codes in raw_per_file.items())
    probe = table.get("runtime-probe", True)
    if not isinstance(probe, bool):
        raise ConfigError(f"'runtime-probe' in {where} must be true or false")
    try:
        budget = parse_budget(table.get("inference-budget", "auto"), where)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return Settings(
        runtime_probe=probe,
        inference_budget=budget,
        select=_codes(table["select"], "select", where) if "select" in table else None,
        extend_select=_codes(table.get("extend-select", []), "extend-select", where),
        ignore=_codes(table.get("ignore", []), "ignore", where),
        per_file_ignores=per_file,
        source=path,
    )


def merge_cli(settings: Settings, *, select: Iterable[str] | None = None,
              extend_select: Iterable[str] | None = None, ignore: Iterable[str] | None = None) -> Settings:
    """The command line's options as a layer on top of ``settings``, as in ruff.

    ``--select`` starts afresh (the file's select and ignore no longer count);
    ``--extend-select`` and ``--ignore`` adjust what the file enabled, and being
    a later layer they win over the file's selectors whatever their specificity.
    per-file-ignores stay in force.
    """
    if select is None and extend_select is None and ignore is None:
        return settings
    return Settings(
        select=tuple(select) if select is not None else None,
        extend_select=tuple(extend_select or ()),
        ignore=tuple(ignore or ()),
        per_file_ignores=settings.per_file_ignores,
        runtime_probe=settings.runtime_probe,
        inference_budget=settings.inference_budget,
        source=settings.source,
        base=settings,
    )
