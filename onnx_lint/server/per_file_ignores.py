"""Ignore a rule for one file: add it to the governing configuration file's ``per-file-ignores``.

What ruff's and ESLint's editors offer as "disable this rule for this file". The configuration is
TOML and no TOML writer is a dependency, so the edit is textual and small: one line under the
``per-file-ignores`` table (added at the end of the file when there is none), or the file's existing
one-line entry extended. The result is read back with the configuration loader; anything it would not
accept, or a layout this cannot edit safely (an inline table, a multi-line entry), leaves the file as
it was and says why.
"""

from __future__ import annotations

import re
from pathlib import Path

from onnx_lint.base.errors import ConfigError
from onnx_lint.lint.config import CONFIG_NAME, PYPROJECT, TABLE, find_config, load_config


class CannotIgnore(Exception):
    """The configuration cannot be edited safely; the message says what to do by hand."""


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _codes_text(codes: list[str]) -> str:
    return "[" + ", ".join(_quoted(c) for c in codes) + "]"


def ignore_rule(model: Path, code: str, default_folder: Path | None = None) -> Path:
    """Add ``code`` to the per-file-ignores of ``model`` in its configuration file; that file's path.

    Without a configuration file, ``onnx-lint.toml`` is created in ``default_folder`` (the workspace
    folder), else next to the model.
    """
    model = model.resolve()
    config = find_config(model.parent)
    created = config is None
    if config is None:
        config = (default_folder or model.parent).resolve() / CONFIG_NAME
        config.write_text("")
    config = config.resolve()
    try:
        return _add(config, model, code)
    except CannotIgnore:
        if created:
            config.unlink(missing_ok=True)
        raise


def _add(config: Path, model: Path, code: str) -> Path:
    try:
        pattern = model.relative_to(config.parent).as_posix()
    except ValueError:
        raise CannotIgnore(f"{model} is outside the folder of {config}") from None
    original = config.read_text(encoding="utf-8")
    header = f"[tool.{TABLE}.per-file-ignores]" if config.name == PYPROJECT else "[per-file-ignores]"
    existing = load_config(config) if original.strip() else None
    codes = dict(existing.per_file_ignores).get(pattern, ()) if existing else ()
    if code in codes:
        return config
    lines = original.splitlines()
    at = next((i for i, line in enumerate(lines) if line.strip() == header), None)
    entry = f"{_quoted(pattern)} = {_codes_text([*codes, code])}"
    if codes:  # the file's own entry: extend it if it is one line
        names = re.escape(_quoted(pattern)) + "|" + re.escape(f"'{pattern}'")
        key = re.compile(r"^\s*(" + names + r")\s*=\s*\[.*\]\s*$")
        where = next((i for i, line in enumerate(lines) if key.match(line)), None)
        if where is None:
            raise CannotIgnore(f"add {code} to the per-file-ignores entry of {pattern!r} in {config} by hand")
        lines[where] = entry
    elif at is not None:
        lines.insert(at + 1, entry)
    elif existing is not None and existing.per_file_ignores:
        raise CannotIgnore(f"{config} writes per-file-ignores inline: add {pattern!r} = [{code!r}] there by hand")
    else:
        lines += ([""] if lines and lines[-1].strip() else []) + [header, entry]
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        written = load_config(config)
        if code not in dict(written.per_file_ignores).get(pattern, ()):
            raise ConfigError(f"{config}: the new entry is not where onnx-lint reads it")
    except ConfigError as exc:
        config.write_text(original, encoding="utf-8")
        raise CannotIgnore(f"could not add {code} for {pattern!r} to {config} ({exc}); it is unchanged") from None
    return config
