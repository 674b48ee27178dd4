"""Configuration files and rule selection (docs/configuration.md), with ruff's semantics."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from onnx_lint.base.errors import ConfigError
from onnx_lint.lint.config import Settings, find_config, glob_match, load_config, merge_cli

ALL = ("OL000", "OL001", "OL002", "OL003", "OL007", "OL101")
DEFAULT = ("OL000", "OL001", "OL002", "OL003", "OL007")


def enabled(settings: Settings, file: Path | None = None) -> list[str]:
    return [c for c in ALL if settings.enabled(c, ALL, DEFAULT, file)]


# --- selection --------------------------------------------------------------------------------------


def test_defaults_and_prefix_selectors():
    assert enabled(Settings()) == list(DEFAULT)
    assert enabled(Settings(select=("OL",))) == list(ALL)
    assert enabled(Settings(select=("ALL",))) == list(ALL)
    assert enabled(Settings(select=("OL00",))) == ["OL000", "OL001", "OL002", "OL003", "OL007"]
    assert enabled(Settings(select=("OL001",))) == ["OL001"]
    assert enabled(Settings(select=("OL1",))) == ["OL101"]
    assert enabled(Settings(select=())) == []
    assert enabled(Settings(extend_select=("OL101",))) == [*DEFAULT, "OL101"]
    assert not Settings(select=("ALL",)).enabled("OL999", ALL, DEFAULT)  # not a rule at all


def test_ignore_applies_to_the_default_set():
    assert enabled(Settings(ignore=("OL00",))) == []
    assert enabled(Settings(ignore=("OL",))) == []
    assert enabled(Settings(ignore=("OL001",))) == ["OL000", "OL002", "OL003", "OL007"]


def test_more_specific_selector_wins():
    assert enabled(Settings(select=("OL",), ignore=("OL001",))) == ["OL000", "OL002", "OL003", "OL007", "OL101"]
    assert enabled(Settings(select=("OL001",), ignore=("OL",))) == ["OL001"]
    assert enabled(Settings(select=("OL00",), ignore=("OL0",))) == ["OL000", "OL001", "OL002", "OL003", "OL007"]
    assert enabled(Settings(select=("ALL",), ignore=("OL1",))) == list(DEFAULT)
    assert enabled(Settings(select=("OL1",), ignore=("ALL",))) == ["OL101"]


def test_equal_specificity_ignore_wins():
    assert enabled(Settings(select=("OL001",), ignore=("OL001",))) == []
    assert enabled(Settings(select=("OL",), ignore=("OL",))) == []
    assert enabled(Settings(extend_select=("OL101",), ignore=("OL101",))) == list(DEFAULT)


def test_command_line_layers_like_ruff(tmp_path):
    config = Settings(select=("OL00",), ignore=("OL001",), source=tmp_path / "onnx-lint.toml")
    assert enabled(merge_cli(config)) == ["OL000", "OL002", "OL003", "OL007"]
    assert merge_cli(config) is config
    # --select starts afresh: the file's ignore no longer counts
    assert enabled(merge_cli(config, select=("OL001",))) == ["OL001"]
    assert enabled(merge_cli(config, select=("OL",), ignore=("OL1",))) == list(DEFAULT)
    # --extend-select and --ignore adjust what the file enabled, whatever their specificity
    assert enabled(merge_cli(config, extend_select=("OL001",))) == ["OL000", "OL001", "OL002", "OL003", "OL007"]
    assert enabled(merge_cli(config, extend_select=("OL1",))) == ["OL000", "OL002", "OL003", "OL007", "OL101"]
    assert enabled(merge_cli(Settings(select=("OL001",)), ignore=("OL",))) == []
    assert enabled(merge_cli(Settings(), select=("OL001",), extend_select=("OL007",))) == ["OL001", "OL007"]
    assert enabled(merge_cli(Settings(), select=("OL00",), ignore=("OL001",))) == [
        "OL000", "OL002", "OL003", "OL007"]
    merged = merge_cli(config, ignore=("OL7",))
    assert merged.source == config.source
    assert sorted(merged.selectors()) == ["OL00", "OL001", "OL7"]


# --- per-file-ignores -------------------------------------------------------------------------------


@pytest.mark.parametrize(("pattern", "path", "hit"), [
    ("*.onnx", "a.onnx", True),
    ("*.onnx", "deep/down/a.onnx", True),          # no slash: the name, in any folder
    ("legacy_*.onnx", "models/legacy_v1.onnx", True),
    ("legacy_*.onnx", "models/v1.onnx", False),
    ("models/*.onnx", "models/a.onnx", True),
    ("models/*.onnx", "other/a.onnx", False),
    ("**/nested/*.onnx", "models/nested/b.onnx", True),
    ("**/nested/*.onnx", "nested/b.onnx", True),     # **/ may be zero folders
    ("**/nested/*.onnx", "models/b.onnx", False),
    ("models/**/*.onnx", "models/a.onnx", True),
    ("models/**/*.onnx", "models/x/y/a.onnx", True),
    ("./models/*.onnx", "models/a.onnx", True),
    ("legacy/**", "legacy/x/a.onnx", True),
    ("legacy/**", "new/a.onnx", False),
])
def test_glob_match(pattern, path, hit):
    from pathlib import PurePosixPath

    assert glob_match(PurePosixPath(path), pattern) is hit


def test_per_file_ignores_are_relative_to_the_config_folder(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "models" / "nested").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[tool.onnx-lint]\nextend-select = ["OL101"]\n\n'
        '[tool.onnx-lint.per-file-ignores]\n"**/nested/*.onnx" = ["OL003"]\n"legacy_*.onnx" = ["OL1"]\n'
        '"models/special.onnx" = ["OL001"]\n')
    settings = load_config(project / "pyproject.toml")
    assert settings.per_file_ignores == (("**/nested/*.onnx", ("OL003",)), ("legacy_*.onnx", ("OL1",)),
                                         ("models/special.onnx", ("OL001",)))
    nested = project / "models" / "nested" / "b.onnx"
    assert "OL003" not in enabled(settings, nested)
    assert "OL003" in enabled(settings, project / "models" / "b.onnx")
    assert enabled(settings, project / "models" / "legacy_v2.onnx") == list(DEFAULT)
    assert "OL001" not in enabled(settings, project / "models" / "special.onnx")
    assert enabled(settings) == [*DEFAULT, "OL101"]  # no file: no per-file ignores
    # a relative path from another working folder resolves against it, then against the config folder
    monkeypatch.chdir(project / "models")
    assert "OL003" not in enabled(settings, Path("nested/b.onnx"))
    assert "OL001" not in enabled(settings, Path("special.onnx"))
    # per-file-ignores stay in force under the command line's options, even a more specific --select
    assert "OL003" not in enabled(merge_cli(settings, select=("OL003",)), nested)


# --- discovery --------------------------------------------------------------------------------------


def test_find_config_walks_up(tmp_path):
    deep = tmp_path / "repo" / "models" / "nested"
    deep.mkdir(parents=True)
    model = deep / "m.onnx"
    model.write_bytes(b"")
    assert find_config(model) is None
    # a pyproject.toml without [tool.onnx-lint] is not ours
    (tmp_path / "repo" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert find_config(deep) is None
    (tmp_path / "repo" / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.onnx-lint]\nignore = []\n')
    assert find_config(deep) == (tmp_path / "repo" / "pyproject.toml").resolve()
    assert find_config(model) == (tmp_path / "repo" / "pyproject.toml").resolve()
    # nearer wins; in one folder onnx-lint.toml wins over pyproject.toml
    (tmp_path / "repo" / "models" / "onnx-lint.toml").write_text("")
    assert find_config(model) == (tmp_path / "repo" / "models" / "onnx-lint.toml").resolve()
    (tmp_path / "repo" / "onnx-lint.toml").write_text("")
    assert find_config(tmp_path / "repo") == (tmp_path / "repo" / "onnx-lint.toml").resolve()
    # a start that does not exist yet still looks from its folder
    assert find_config(deep / "missing.onnx") == (tmp_path / "repo" / "models" / "onnx-lint.toml").resolve()


def test_find_config_picks_a_broken_pyproject_meant_for_us(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.onnx-lint]\nselect = ["OL001"\n')
    found = find_config(tmp_path)
    assert found == (tmp_path / "pyproject.toml").resolve()
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(found)
    (tmp_path / "pyproject.toml").write_text('[project\nname = "x"\n')
    assert find_config(tmp_path) is None


# --- loading ----------------------------------------------------------------------------------------


def test_load_onnx_lint_toml_top_level_keys(tmp_path):
    path = tmp_path / "onnx-lint.toml"
    path.write_text('select = ["ol00"]\nextend-select = ["OL101"]\nignore = ["OL001"]\n'
                    '[per-file-ignores]\n"*.onnx" = ["OL7"]\n')
    settings = load_config(path)
    assert settings == Settings(select=("OL00",), extend_select=("OL101",), ignore=("OL001",),
                                per_file_ignores=(("*.onnx", ("OL7",)),), source=path)
    assert load_config(tmp_path / "onnx-lint.toml").select == ("OL00",)


def test_load_pyproject_reads_only_its_table(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.ruff]\nselect = ["E"]\n[tool.onnx-lint]\nselect = ["OL001"]\n')
    assert load_config(path) == Settings(select=("OL001",), source=path)
    path.write_text('[project]\nname = "x"\n')
    assert load_config(path) == Settings(source=path)


def test_unknown_key_names_file_and_key(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.onnx-lint]\nselct = ["OL001"]\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert f"unknown key 'selct' in {path} [tool.onnx-lint]" in str(info.value)
    own = tmp_path / "onnx-lint.toml"
    own.write_text('extend_select = ["OL001"]\n')
    with pytest.raises(ConfigError, match=r"unknown key 'extend_select' in .*onnx-lint\.toml"):
        load_config(own)


def test_broken_toml_names_file_and_tomllib_problem(tmp_path):
    path = tmp_path / "onnx-lint.toml"
    path.write_text('select = ["OL001"]\nignore = [\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    try:
        tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        assert message == f"{path} is not valid TOML: {exc}"
    path.write_text('select = ["OL001"]\nignore = OL002\n')
    with pytest.raises(ConfigError, match=r"not valid TOML: .*line 2"):
        load_config(path)
    path.write_bytes(b'select = ["\xff"]\n')
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")


@pytest.mark.parametrize(("text", "problem"), [
    ('select = "OL001"\n', "'select' in .* must be a list"),
    ('ignore = [1]\n', "'ignore' in .* must be a list"),
    ('select = ["OL-1"]\n', "'OL-1' is not a rule selector"),
    ('per-file-ignores = ["x"]\n', "'per-file-ignores' in .* must be a table"),
    ('[per-file-ignores]\n"*.onnx" = "OL001"\n', r"'per-file-ignores\.\*\.onnx' in .* must be a list"),
])
def test_bad_values_name_the_key(tmp_path, text, problem):
    path = tmp_path / "onnx-lint.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=problem):
        load_config(path)
