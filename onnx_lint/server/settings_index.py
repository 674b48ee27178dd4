"""Configuration files resolved once per workspace folder (as ruff_server's settings index).

Finding a model's configuration walks its folders up to the root, and loading
one parses TOML: the CLI pays that once per run, but a server would pay it on
every lint of every change. The index remembers, per workspace folder, which
configuration file governs each folder it has seen and what that file says
(or the ``ConfigError`` it gives), until something says the files changed:
``workspace/didChangeConfiguration``, a watched or saved ``onnx-lint.toml`` /
``pyproject.toml``, or (for clients that cannot watch files) a changed stat
seen by the server's own polling.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from onnx_lint.base.errors import ConfigError
from onnx_lint.lint.config import CONFIG_NAME, PYPROJECT, Settings, find_config, load_config
from onnx_lint.server.results import stat_key
from onnx_lint.server.settings import ServerSettings

CONFIG_FILE_NAMES = (CONFIG_NAME, PYPROJECT)


def is_config_file(path: Path) -> bool:
    """Whether a change of ``path`` can change which rules run (see ``onnx_lint.lint.config``)."""
    return path.name in CONFIG_FILE_NAMES


@dataclass(frozen=True)
class RuleSelection:
    """What a lint of one model runs: the enabled codes, whether ONNX Runtime may probe it, and the
    slow engines' budget (seconds; None: computed from the model)."""

    enabled: tuple[str, ...]
    runtime_probe: bool
    inference_budget: float | None = None


@dataclass
class _FolderIndex:
    """What one workspace folder's models resolved to: folder -> config file, config file -> settings."""

    governing: dict[Path, Path | None] = field(default_factory=dict)
    loaded: dict[Path, Settings | ConfigError] = field(default_factory=dict)
    stats: dict[Path, tuple[int, int, int] | None] = field(default_factory=dict)


class SettingsIndex:
    """Per-workspace-folder cache of configuration files; the only place the server reads them."""

    def __init__(self, folders: Iterable[Path] = ()) -> None:
        self._folders: list[Path] = []
        self._index: dict[Path | None, _FolderIndex] = {}
        self.set_folders(folders)

    def set_folders(self, folders: Iterable[Path]) -> None:
        """The client's workspace folders (deepest first, so a nested folder owns its files)."""
        self._folders = sorted({Path(f) for f in folders}, key=lambda f: len(f.parts), reverse=True)
        self.invalidate()

    @property
    def folders(self) -> list[Path]:
        """The client's workspace folders, deepest first."""
        return list(self._folders)

    def folder_of(self, model: Path) -> Path | None:
        """The workspace folder a model belongs to (``None`` for a model outside every folder)."""
        return next((f for f in self._folders if model.is_relative_to(f)), None)

    def file_settings(self, model: Path) -> Settings:
        """The configuration file's settings for ``model`` (defaults without one); ``ConfigError`` if broken."""
        index = self._index.setdefault(self.folder_of(model), _FolderIndex())
        folder = model.parent
        if folder not in index.governing:
            index.governing[folder] = find_config(folder)
        config = index.governing[folder]
        if config is None:
            return Settings()
        if config not in index.loaded:
            index.stats[config] = stat_key(config)
            try:
                index.loaded[config] = load_config(config)
            except ConfigError as exc:
                index.loaded[config] = exc
        loaded = index.loaded[config]
        if isinstance(loaded, ConfigError):
            raise loaded
        return loaded

    def selection(self, model: Path, editor: ServerSettings, all_codes: list[str]) -> RuleSelection:
        """The rules that run on ``model``: its configuration file with the editor's selectors on top."""
        settings = self.file_settings(model)
        return RuleSelection(tuple(editor.codes_for(settings, model, all_codes)), settings.runtime_probe,
                             settings.inference_budget)

    def invalidate(self, changed: Path | None = None) -> None:
        """Forget what a changed configuration file can affect (everything, when ``changed`` is None).

        A file in folder D governs models under D, so it affects the workspace
        folders inside D and the one that contains D, and models outside every folder.
        """
        if changed is None:
            self._index.clear()
            return
        where = changed.parent
        for folder in list(self._index):
            if folder is None or folder.is_relative_to(where) or where.is_relative_to(folder):
                del self._index[folder]

    def changed_on_disk(self) -> list[Path]:
        """Configuration files read so far whose stat changed since (for clients that cannot watch files)."""
        return [config for index in self._index.values() for config, stat in index.stats.items()
                if stat_key(config) != stat]
