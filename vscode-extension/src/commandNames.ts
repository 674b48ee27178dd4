// Written by `python -m onnx_lint.server.command_names > vscode-extension/src/commandNames.ts` from
// onnx_lint/server/command_names.py, the one list the server registers its commands from; do not edit
// (tests/test_server_commands.py fails when this file differs from that list).

/** The server's commands (`workspace/executeCommand`). */
export const SERVER_COMMANDS = [
  "onnx-lint.fixAll",
  "onnx-lint.fix",
  "onnx-lint.fixRule",
  "onnx-lint.ignoreRule",
  "onnx-lint.showRuleDocs",
  "onnx-lint.quantize",
  "onnx-lint.showModel",
  "onnx-lint.describeModel",
  "onnx-lint.findingGraph",
  "onnx-lint.modelGraph",
  "onnx-lint.graphNode",
  "onnx-lint.compareModels",
] as const;
export type ServerCommand = (typeof SERVER_COMMANDS)[number];

/** Server commands that write files: refused in an untrusted workspace. */
export const WRITING_COMMANDS: readonly ServerCommand[] = [
  "onnx-lint.fixAll",
  "onnx-lint.fix",
  "onnx-lint.fixRule",
  "onnx-lint.ignoreRule",
  "onnx-lint.quantize",
];

/** Server commands after which the model's open views show it again. */
export const CHANGING_MODEL: readonly ServerCommand[] = [
  "onnx-lint.fix",
  "onnx-lint.fixAll",
  "onnx-lint.fixRule",
  "onnx-lint.ignoreRule",
];

/** VS Code's commands the extension registers; package.json contributes the palette's. */
export const PALETTE_COMMANDS = [
  "onnxLint.showModelText",
  "onnxLint.fixAll",
  "onnxLint.quantize",
  "onnxLint.compareWith",
  "onnxLint.restartServer",
] as const;
export const EXTENSION_COMMANDS = [
  "onnxLint.showModelText",
  "onnxLint.fixAll",
  "onnxLint.quantize",
  "onnxLint.compareWith",
  "onnxLint.restartServer",
  "onnxLint.showInGraph",
] as const;
export type ExtensionCommand = (typeof EXTENSION_COMMANDS)[number];
