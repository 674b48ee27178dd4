"""Every command name the server and the VS Code extension use, in one list.

The server registers exactly ``SERVER_COMMANDS`` (``workspace/executeCommand``); the extension calls
them through a type made from the same list, ``vscode-extension/src/commandNames.ts``, which
``python -m onnx_lint.server.command_names`` writes from this module (tests/test_server_commands.py
fails when the two differ, when the server registers a command not listed here, or when the
extension names one that is not). ``EXTENSION_COMMANDS`` are VS Code's own commands, the ones the
extension registers; the package.json contributes the ``PALETTE`` ones.
"""

from __future__ import annotations

import json
import sys

FIX_ALL = "onnx-lint.fixAll"
FIX = "onnx-lint.fix"
FIX_RULE = "onnx-lint.fixRule"
IGNORE_RULE = "onnx-lint.ignoreRule"
SHOW_RULE_DOCS = "onnx-lint.showRuleDocs"
QUANTIZE = "onnx-lint.quantize"
SHOW_MODEL = "onnx-lint.showModel"
DESCRIBE_MODEL = "onnx-lint.describeModel"
FINDING_GRAPH = "onnx-lint.findingGraph"
MODEL_GRAPH = "onnx-lint.modelGraph"
GRAPH_NODE = "onnx-lint.graphNode"
COMPARE_MODELS = "onnx-lint.compareModels"

SERVER_COMMANDS = (FIX_ALL, FIX, FIX_RULE, IGNORE_RULE, SHOW_RULE_DOCS, QUANTIZE, SHOW_MODEL, DESCRIBE_MODEL,
                   FINDING_GRAPH, MODEL_GRAPH, GRAPH_NODE, COMPARE_MODELS)
# Commands that write files: an untrusted workspace refuses them (the server, and the extension before asking).
WRITING_COMMANDS = (FIX_ALL, FIX, FIX_RULE, IGNORE_RULE, QUANTIZE)
# Commands after which the model's open views show it again (its bytes or its configuration changed).
CHANGING_MODEL = (FIX, FIX_ALL, FIX_RULE, IGNORE_RULE)

# VS Code's commands, registered by the extension: the palette's (contributed in package.json) and the link a
# Problems entry's rule code carries (arguments only a link can give, so not in the palette).
PALETTE = ("onnxLint.showModelText", "onnxLint.fixAll", "onnxLint.quantize", "onnxLint.compareWith",
           "onnxLint.restartServer")
EXTENSION_COMMANDS = (*PALETTE, "onnxLint.showInGraph")

TYPESCRIPT_MODULE = "vscode-extension/src/commandNames.ts"


def _array(names: tuple[str, ...], indent: str = "  ") -> str:
    return "[\n" + "".join(f"{indent}{json.dumps(name)},\n" for name in names) + "]"


def typescript() -> str:
    """The extension's copy of these lists, as ``commandNames.ts`` holds it."""
    return (
        "// Written by `python -m onnx_lint.server.command_names > vscode-extension/src/commandNames.ts` from\n"
        "// onnx_lint/server/command_names.py, the one list the server registers its commands from; do not edit\n"
        "// (tests/test_server_commands.py fails when this file differs from that list).\n\n"
        "/** The server's commands (`workspace/executeCommand`). */\n"
        f"export const SERVER_COMMANDS = {_array(SERVER_COMMANDS)} as const;\n"
        "export type ServerCommand = (typeof SERVER_COMMANDS)[number];\n\n"
        "/** Server commands that write files: refused in an untrusted workspace. */\n"
        f"export const WRITING_COMMANDS: readonly ServerCommand[] = {_array(WRITING_COMMANDS)};\n\n"
        "/** Server commands after which the model's open views show it again. */\n"
        f"export const CHANGING_MODEL: readonly ServerCommand[] = {_array(CHANGING_MODEL)};\n\n"
        "/** VS Code's commands the extension registers; package.json contributes the palette's. */\n"
        f"export const PALETTE_COMMANDS = {_array(PALETTE)} as const;\n"
        f"export const EXTENSION_COMMANDS = {_array(EXTENSION_COMMANDS)} as const;\n"
        "export type ExtensionCommand = (typeof EXTENSION_COMMANDS)[number];\n"
    )


if __name__ == "__main__":
    sys.stdout.write(typescript())
