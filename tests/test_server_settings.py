"""The editor's settings: the payload shapes clients send, bad values, and layering over config files."""

from __future__ import annotations

import pytest

from onnx_lint.base.errors import ConfigError
from onnx_lint.rules import ALL_RULES
from onnx_lint.server.settings import ServerSettings

CODES = [r.code for r in ALL_RULES]


@pytest.mark.parametrize("payload", [
    {"ignore": ["OL001"], "lintOnSave": False},
    {"settings": {"ignore": ["OL001"], "lintOnSave": False}},
    {"onnxLint": {"ignore": "OL001", "lintOnSave": False}},  # VS Code's section; a comma string is accepted
])
def test_every_payload_shape_clients_send(payload):
    settings = ServerSettings.from_client(payload)
    assert settings.ignore == ("OL001",) and settings.lint_on_save is False and settings.lint_on_open is True


def test_a_later_change_keeps_what_it_does_not_mention():
    first = ServerSettings.from_client({"ignore": ["OL001"], "quantize": {"perChannel": True, "bogus": 1}})
    second = ServerSettings.from_client({"lintOnOpen": False}, first)
    assert second.ignore == ("OL001",) and second.quantize == {"perChannel": True} and not second.lint_on_open


def test_the_quantize_target_left_to_ask_does_not_reject_the_other_settings():
    """VS Code sends its whole section: ``target`` "" (ask once per workspace) with the user's other changes."""
    settings = ServerSettings.from_client({"onnxLint": {"ignore": ["OL001"],
                                                        "quantize": {"target": "", "minCosine": 0.99}}})
    assert settings.ignore == ("OL001",) and settings.quantize == {"minCosine": 0.99}
    assert ServerSettings.from_client({"quantize": {"target": "tensorrt"}}).quantize == {"target": "tensorrt"}


@pytest.mark.parametrize("payload, message", [
    ({"quantize": {"target": "trt"}}, "'target' must be one of onnxruntime, tensorrt"),
    ({"ignore": [1]}, "must be a list of rule codes"),
    ({"lintOnOpen": "yes"}, "must be true or false"),
    ({"lintTimeout": 0}, "positive number"),
    ({"quantize": []}, "must be an object"),
])
def test_bad_values_are_named(payload, message):
    with pytest.raises(ConfigError, match=message):
        ServerSettings.from_client(payload)


def test_empty_selector_lists_leave_the_configuration_file_in_charge(tmp_path):
    """VS Code's Settings UI defaults select/ignore to [] and sends its whole section: [] must not mean "no rule"."""
    settings = ServerSettings.from_client({"onnxLint": {"select": [], "extendSelect": [], "ignore": [],
                                                        "runtimeProbe": False}})
    assert (settings.select, settings.extend_select, settings.ignore) == (None, None, None)
    assert settings.runtime_probe is False
    model = tmp_path / "m.onnx"
    assert settings.enabled_codes(model, CODES) == ServerSettings().enabled_codes(model, CODES) != []


def test_editor_selectors_are_a_layer_over_the_configuration_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.onnx-lint]\nselect = ["OL00"]\n')
    model = tmp_path / "sub" / "m.onnx"
    model.parent.mkdir()
    assert ServerSettings().enabled_codes(model, CODES) == [c for c in CODES if c.startswith("OL00")]
    assert "OL001" not in ServerSettings(ignore=("OL001",)).enabled_codes(model, CODES)
    assert ServerSettings(select=("OL101",)).enabled_codes(model, CODES) == ["OL101"]
    with pytest.raises(ConfigError, match="unknown rule selector 'OL9'"):
        ServerSettings(ignore=("OL9",)).enabled_codes(model, CODES)


def test_the_settings_index_reads_each_configuration_file_once_until_invalidated(tmp_path, monkeypatch):
    """A lint asks the index, not the disk: one search and one parse per folder until a change is reported."""
    from onnx_lint.server import settings_index
    from onnx_lint.server.settings_index import SettingsIndex

    calls = {"find": 0, "load": 0}
    find, load = settings_index.find_config, settings_index.load_config

    def counting_find(start):
        calls["find"] += 1
        return find(start)

    def counting_load(path):
        calls["load"] += 1
        return load(path)

    monkeypatch.setattr(settings_index, "find_config", counting_find)
    monkeypatch.setattr(settings_index, "load_config", counting_load)
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        (folder / "models").mkdir(parents=True)
    (one / "onnx-lint.toml").write_text('ignore = ["OL001"]\n')
    index = SettingsIndex([one, two])
    editor = ServerSettings()
    for _ in range(5):
        assert "OL001" not in index.selection(one / "models" / "a.onnx", editor, CODES).enabled
        assert "OL001" in index.selection(two / "models" / "b.onnx", editor, CODES).enabled
    assert calls == {"find": 2, "load": 1}
    assert index.changed_on_disk() == []

    (one / "onnx-lint.toml").write_text('ignore = ["OL001"]\nruntime-probe = false\n')
    assert index.changed_on_disk() == [one / "onnx-lint.toml"]
    index.invalidate(one / "onnx-lint.toml")  # only folder one's entries go
    assert index.selection(one / "models" / "a.onnx", editor, CODES).runtime_probe is False
    assert index.selection(two / "models" / "b.onnx", editor, CODES).runtime_probe is True
    assert calls == {"find": 3, "load": 2}


def test_a_broken_configuration_file_is_an_error_every_time_but_parsed_once(tmp_path, monkeypatch):
    from onnx_lint.server import settings_index
    from onnx_lint.server.settings_index import SettingsIndex

    loads = []
    load = settings_index.load_config
    monkeypatch.setattr(settings_index, "load_config", lambda path: loads.append(path) or load(path))
    (tmp_path / "onnx-lint.toml").write_text("select = [\n")
    index = SettingsIndex([tmp_path])
    for _ in range(3):
        with pytest.raises(ConfigError, match="onnx-lint.toml is not valid TOML"):
            index.selection(tmp_path / "m.onnx", ServerSettings(), CODES)
    assert len(loads) == 1
