"""The editor's settings: the payload shapes clients send, bad values, and layering over config files."""

from __future__ import annotations

import pytest

from onnx_lint.errors import ConfigError
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


@pytest.mark.parametrize("payload, message", [
    ({"ignore": [1]}, "must be a list of rule codes"),
    ({"lintOnOpen": "yes"}, "must be true or false"),
    ({"lintTimeout": 0}, "positive number"),
    ({"quantize": []}, "must be an object"),
])
def test_bad_values_are_named(payload, message):
    with pytest.raises(ConfigError, match=message):
        ServerSettings.from_client(payload)


def test_editor_selectors_are_a_layer_over_the_configuration_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.onnx-lint]\nselect = ["OL00"]\n')
    model = tmp_path / "sub" / "m.onnx"
    model.parent.mkdir()
    assert ServerSettings().enabled_codes(model, CODES) == [c for c in CODES if c.startswith("OL00")]
    assert "OL001" not in ServerSettings(ignore=("OL001",)).enabled_codes(model, CODES)
    assert ServerSettings(select=("OL101",)).enabled_codes(model, CODES) == ["OL101"]
    with pytest.raises(ConfigError, match="unknown rule selector 'OL9'"):
        ServerSettings(ignore=("OL9",)).enabled_codes(model, CODES)
