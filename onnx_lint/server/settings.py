"""The editor's settings for the server, and how they combine with configuration files.

Settings arrive as ``initializationOptions`` and with
``workspace/didChangeConfiguration`` (VS Code sends its ``onnxLint`` section;
other editors send the keys directly). As in ruff's server, the editor's
select/ignore are a layer on top of the nearest ``onnx-lint.toml`` /
``pyproject.toml [tool.onnx-lint]`` of the file, like the command line's
options are.

Workspace trust is not a setting: a workspace's own settings file must not be able to
grant it. The client says whether the workspace is trusted with a top-level
``workspaceTrusted`` key of the payload (beside ``settings``, never inside the
``onnxLint`` section that VS Code fills from settings files). In an untrusted workspace
the server lints statically only: no model is run (no runtime probe, no ONNX Runtime
check) and nothing is written (no fix, no quantize).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from onnx_lint.base.errors import ConfigError
from onnx_lint.lint.config import Settings, find_config, load_config, merge_cli
from onnx_lint.server.quantize_options import MAX_SECONDS, checked_quantize_options

SECTION = "onnxLint"
QUANTIZE_KEYS = ("calibrationData", "calibrationMethod", "perChannel", "keepIoTypes", "validationSamples",
                 "samples", "opTypes", "excludeNodes", "inputShapes", "output", "minCosine", "fallbackSeconds",
                 "outputQdq", "int8OutputLayers", "int8SmallLayers", "target", "sensitivitySeconds")


def _codes(value: Any, key: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"setting '{key}' must be a list of rule codes, for example [\"OL001\"]")
    codes = tuple(v.strip().upper() for v in value if v.strip())
    # An empty list is the Settings UI's default: like null, it leaves the configuration file in charge
    # (an empty select would otherwise enable no rule at all).
    return codes or None


@dataclass(frozen=True)
class ServerSettings:
    """What the editor asked for; ``None`` selectors leave the configuration file in charge."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    lint_on_open: bool = True
    lint_on_save: bool = True
    lint_on_change: bool = True
    runtime_check: bool = True
    runtime_probe: bool = True  # False: never run the model, whatever the configuration file says
    lint_timeout: float = 300.0
    quantize_timeout: float = 3600.0  # a quantize run is stopped (and writes nothing) after this many seconds
    quantize: Mapping[str, Any] = field(default_factory=dict)
    workspace_trusted: bool = True

    @classmethod
    def from_client(cls, raw: Any, base: ServerSettings | None = None) -> ServerSettings:
        """Settings from a client payload; unknown keys are ignored, bad values raise ``ConfigError``."""
        base = base or cls()
        if not isinstance(raw, Mapping):
            return base
        changes: dict[str, Any] = {}
        if "workspaceTrusted" in raw:  # top level only: see the module's docstring
            if not isinstance(raw["workspaceTrusted"], bool):
                raise ConfigError("'workspaceTrusted' must be true or false")
            changes["workspace_trusted"] = raw["workspaceTrusted"]
        if isinstance(raw.get("settings"), Mapping):  # {"settings": {...}}, a common initializationOptions shape
            raw = raw["settings"]
        if isinstance(raw.get(SECTION), Mapping):  # VS Code's section
            raw = raw[SECTION]
        for key, attr in (("select", "select"), ("extendSelect", "extend_select"), ("ignore", "ignore")):
            if key in raw:
                changes[attr] = _codes(raw[key], key)
        for key, attr in (("lintOnOpen", "lint_on_open"), ("lintOnSave", "lint_on_save"),
                          ("lintOnChange", "lint_on_change"), ("runtimeCheck", "runtime_check"),
                          ("runtimeProbe", "runtime_probe")):
            if key in raw:
                if not isinstance(raw[key], bool):
                    raise ConfigError(f"setting '{key}' must be true or false")
                changes[attr] = raw[key]
        for key, attr in (("lintTimeout", "lint_timeout"), ("quantizeTimeout", "quantize_timeout")):
            if key in raw:
                value = raw[key]
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_SECONDS:
                    raise ConfigError(f"setting '{key}' must be a positive number of seconds up to "
                                      f"{MAX_SECONDS:.0f} (a day)")
                changes[attr] = float(value)
        if "quantize" in raw:
            if not isinstance(raw["quantize"], Mapping):
                raise ConfigError("setting 'quantize' must be an object")
            checked = checked_quantize_options(raw["quantize"])  # ConfigError names a bad option
            changes["quantize"] = {k: v for k, v in checked.items() if k in QUANTIZE_KEYS}
        return replace(base, **changes)

    @property
    def untrusted_reason(self) -> str | None:
        """Why nothing runs or is written (``None`` in a trusted workspace)."""
        if self.workspace_trusted:
            return None
        return ("static lint only: this workspace is not trusted, so onnx-lint runs no model "
                "(no runtime probe, no ONNX Runtime check) and writes no file (no fix, no quantize)")

    def layered(self, settings: Settings) -> Settings:
        """The editor's selectors as a layer on top of a configuration file's settings."""
        return merge_cli(settings, select=self.select, extend_select=self.extend_select, ignore=self.ignore)

    def enabled_codes(self, model: Path, all_codes: list[str]) -> list[str]:
        """The codes that run on ``model``; ``ConfigError`` for a broken file or an unknown selector."""
        config = find_config(model.parent)
        return self.codes_for(load_config(config) if config else Settings(), model, all_codes)

    def codes_for(self, file_settings: Settings, model: Path, all_codes: list[str]) -> list[str]:
        """The codes that run on ``model`` under an already loaded configuration; ``ConfigError`` for an
        unknown selector."""
        settings = self.layered(file_settings)
        settings.check_selectors(all_codes)
        return [c for c in all_codes if settings.enabled(c, all_codes, all_codes, model)]
