"""Code actions per rule, as ruff's editors offer them: fix all of a rule, ignore it for this file, its docs."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
import pytest_lsp
from lsp_support import SERVER, code_actions, diagnostics_for, execute, open_binary, push_capabilities, start
from pytest_lsp import LanguageClient

from examples import defects
from onnx_lint.lint.config import load_config
from onnx_lint.server.per_file_ignores import CannotIgnore, ignore_rule

RULE_KIND = "quickfix.onnx-lint.rule"


def _model(folder: Path, name: str = "weak.onnx") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    onnx.save(defects.weakly_typed_mlp(), path)
    return path


def _ignored(config: Path) -> dict[str, tuple[str, ...]]:
    return dict(load_config(config).per_file_ignores)


def test_without_a_configuration_file_one_is_made_in_the_workspace_folder(tmp_path):
    model = _model(tmp_path / "models")
    config = ignore_rule(model, "OL003", tmp_path)
    assert config == tmp_path / "onnx-lint.toml"
    assert _ignored(config) == {"models/weak.onnx": ("OL003",)}


def test_an_existing_file_keeps_its_text_and_gains_one_line(tmp_path):
    config = tmp_path / "onnx-lint.toml"
    config.write_text('# our settings\nignore = ["OL005"]\n\n[per-file-ignores]\n"other.onnx" = ["OL001"]\n')
    model = _model(tmp_path)
    ignore_rule(model, "OL003")
    assert config.read_text() == ('# our settings\nignore = ["OL005"]\n\n[per-file-ignores]\n'
                                  '"weak.onnx" = ["OL003"]\n"other.onnx" = ["OL001"]\n')
    ignore_rule(model, "OL001")  # the file's own entry grows
    assert _ignored(config)["weak.onnx"] == ("OL003", "OL001")
    before = config.read_text()
    ignore_rule(model, "OL001")  # already there: nothing changes
    assert config.read_text() == before
    assert load_config(config).ignore == ("OL005",)


def test_pyproject_gets_its_tool_table(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\n\n[tool.onnx-lint]\nselect = ["OL0"]\n')
    model = _model(tmp_path / "m")
    assert ignore_rule(model, "OL001") == pyproject
    assert pyproject.read_text().endswith('\n[tool.onnx-lint.per-file-ignores]\n"m/weak.onnx" = ["OL001"]\n')
    assert _ignored(pyproject) == {"m/weak.onnx": ("OL001",)} and load_config(pyproject).select == ("OL0",)


def test_an_inline_table_is_left_alone_with_what_to_do(tmp_path):
    config = tmp_path / "onnx-lint.toml"
    text = 'per-file-ignores = { "a.onnx" = ["OL001"] }\n'
    config.write_text(text)
    with pytest.raises(CannotIgnore, match="by hand"):
        ignore_rule(_model(tmp_path), "OL003")
    assert config.read_text() == text


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path, push_capabilities())
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_the_lightbulb_offers_ignore_and_docs_and_ignoring_takes_the_finding_away(client, tmp_path):
    model = _model(tmp_path)
    open_binary(client, model)
    diagnostics = await diagnostics_for(client, model.as_uri(), bool)
    actions = await code_actions(client, model.as_uri(), diagnostics=diagnostics)
    rule = {a.title: a for a in actions if a.kind == RULE_KIND}
    assert set(rule) == {"Ignore OL001 for this file", "Show documentation for OL001",
                         "Ignore OL003 for this file", "Show documentation for OL003"}
    docs = await execute(client, "onnx-lint.showRuleDocs", *rule["Show documentation for OL003"].command.arguments)
    assert docs["url"] == "https://onnx-lint.github.io/onnx-lint/rules/OL003/"
    client.diagnostics.pop(model.as_uri(), None)
    done = await execute(client, "onnx-lint.ignoreRule", *rule["Ignore OL003 for this file"].command.arguments)
    assert done["message"] == "OL003 is ignored for weak.onnx (onnx-lint.toml)"
    remaining = await diagnostics_for(client, model.as_uri(), lambda ds: [d.code for d in ds] == ["OL001"])
    assert [d.code for d in remaining] == ["OL001"]
    assert _ignored(tmp_path / "onnx-lint.toml") == {"weak.onnx": ("OL003",)}


@pytest.mark.asyncio
async def test_fix_all_of_one_rule_fixes_that_rule_only(client, tmp_path):
    model = _model(tmp_path)
    open_binary(client, model)
    await diagnostics_for(client, model.as_uri(), bool)
    client.diagnostics.pop(model.as_uri(), None)
    result = await execute(client, "onnx-lint.fixRule", model.as_uri(), "OL003")
    assert result["written"] is True and result["fixed"] == 1
    remaining = await diagnostics_for(client, model.as_uri())
    assert [d.code for d in remaining] == ["OL001"]
