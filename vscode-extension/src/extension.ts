import * as vscode from "vscode";
import { ServerConnection, VIEW_SCHEME } from "./client";
import { ExtensionCommand } from "./commandNames";
import { ModelEditorProvider } from "./modelEditor";
import { quantize } from "./quantize";
import { modelOfView, TextViewProvider } from "./textView";

let connection: ServerConnection | undefined;

/** The model a command is about: its argument, the active model view, or the active view document. */
function targetModel(argument: unknown): vscode.Uri | undefined {
  if (argument instanceof vscode.Uri) {
    return argument;
  }
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (tab instanceof vscode.TabInputCustom && tab.viewType === ModelEditorProvider.viewType) {
    return tab.uri;
  }
  const editor = vscode.window.activeTextEditor?.document.uri;
  if (editor?.scheme === VIEW_SCHEME) {
    return modelOfView(editor);
  }
  void vscode.window.showWarningMessage("onnx-lint: open an .onnx model first.");
  return undefined;
}

/** One of the extension's own commands (the names come from the list the server shares, `commandNames.ts`). */
function registerCommand<A extends unknown[]>(name: ExtensionCommand, run: (...args: A) => unknown): vscode.Disposable {
  return vscode.commands.registerCommand(name, run);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  // A log channel (levels, timestamps): vscode-languageclient 10+ writes its own output to one.
  const output = vscode.window.createOutputChannel("onnx-lint", { log: true });
  const server = new ServerConnection(output);
  connection = server;
  const textViews = new TextViewProvider(server);
  const showText = (uri: vscode.Uri) => textViews.open(uri);
  const problems = vscode.languages.createDiagnosticCollection("onnx-lint");
  const models = new ModelEditorProvider(server, problems, context.extensionUri,
    { quantize: (uri) => quantize(server, uri, context.workspaceState), showText });
  // One entry per finding: the textual view's entries replace the model's while a tab shows it.
  const viewTabsChanged = (event: vscode.TabChangeEvent) => {
    for (const tab of [...event.opened, ...event.closed]) {
      if (tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === VIEW_SCHEME) {
        models.syncProblems(modelOfView(tab.input.uri));
      }
    }
  };

  context.subscriptions.push(
    output, server, problems,
    vscode.window.registerCustomEditorProvider(ModelEditorProvider.viewType, models, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    vscode.workspace.registerTextDocumentContentProvider(VIEW_SCHEME, textViews),
    registerCommand("onnxLint.showModelText", async (uri?: vscode.Uri) => {
      const model = targetModel(uri);
      if (model) {
        await showText(model);
      }
    }),
    registerCommand("onnxLint.fixAll", async (uri?: vscode.Uri) => {
      const model = targetModel(uri);
      if (!model) {
        return;
      }
      try {
        const result = await server.command<{ message: string }>("onnx-lint.fixAll", model.toString());
        void vscode.window.showInformationMessage(`onnx-lint: ${result.message}`);
      } catch (error) {
        void vscode.window.showErrorMessage(`onnx-lint: ${(error as Error).message}`);
      }
      // The open views refresh through server.onDidWriteModel.
    }),
    registerCommand("onnxLint.quantize", async (uri?: vscode.Uri) => {
      const model = targetModel(uri);
      const result = model && await quantize(server, model, context.workspaceState);
      if (model && result) {
        await models.showQuantized(model, result);
      }
    }),
    registerCommand("onnxLint.compareWith", async (uri?: vscode.Uri, other?: vscode.Uri) => {
      const model = targetModel(uri);
      if (model) {
        await models.compare(model, other instanceof vscode.Uri ? other : undefined);
      }
    }),
    registerCommand("onnxLint.showInGraph", (model: string, index: number) => {
      models.reveal(vscode.Uri.parse(model), index);
    }),
    registerCommand("onnxLint.restartServer", async () => {
      await server.restart();
      await models.refresh();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(async () => {
      await server.grantTrust();
      await models.refresh();
    }),
    vscode.window.tabGroups.onDidChangeTabs(viewTabsChanged),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("onnxLint.interpreter") || event.affectsConfiguration("onnxLint.serverArgs")) {
        await server.restart();
        await models.refresh();
      } else if (event.affectsConfiguration("onnxLint")) {
        await models.refresh();  // the client has already sent the new settings to the server
      }
    }),
  );
  const watcher = vscode.workspace.createFileSystemWatcher("**/*.onnx");
  context.subscriptions.push(watcher, watcher.onDidChange((uri) => textViews.modelChanged(uri)),
    watcher.onDidCreate((uri) => textViews.modelChanged(uri)),
    // A fix refreshes every open view of its model at once: the model view (and its graph) and the text.
    server.onDidWriteModel(async (uri) => {
      textViews.modelChanged(uri);
      await models.refresh(uri);
    }));
  await server.start();
}

export async function deactivate(): Promise<void> {
  await connection?.stop();
}
