import * as crypto from "crypto";
import * as path from "path";
import * as vscode from "vscode";
import { ServerConnection } from "./client";
import { LspDiagnostic, ModelSummary, renderView, toViewDiagnostics, ViewDiagnostic, ViewState } from "./viewHtml";

interface Described {
  summary: ModelSummary | null;
  diagnostics: LspDiagnostic[];
}

/**
 * The read-only custom editor for `.onnx` files: the main way VS Code users meet onnx-lint.
 *
 * It also owns the Problems panel entries of the models it shows: VS Code sends no didOpen for a
 * binary file, and vscode-languageclient 9 pulls diagnostics only for tabs that exist when it starts
 * (a custom-editor tab opened later waits for a didOpen that never comes).
 */
export class ModelEditorProvider implements vscode.CustomReadonlyEditorProvider {
  static readonly viewType = "onnxLint.model";
  private readonly panels = new Map<string, Set<() => Promise<void>>>();

  constructor(private readonly server: ServerConnection, private readonly problems: vscode.DiagnosticCollection,
    private readonly actions: {
    quantize(uri: vscode.Uri): Promise<void>;
    showText(uri: vscode.Uri): Promise<void>;
  }) {}

  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    return { uri, dispose: () => undefined };
  }

  /** Re-render every open view of a model (after a fix, a change on disk, a trust change). */
  async refresh(uri?: vscode.Uri): Promise<void> {
    for (const [key, renders] of this.panels) {
      if (!uri || key === uri.toString()) {
        await Promise.all([...renders].map((render) => render()));
      }
    }
  }

  async resolveCustomEditor(document: vscode.CustomDocument, panel: vscode.WebviewPanel): Promise<void> {
    const uri = document.uri;
    const file = path.basename(uri.fsPath);
    panel.webview.options = { enableScripts: true };
    let diagnostics: ViewDiagnostic[] = [];
    let summary: ModelSummary | null = null;
    const show = (extra: Partial<ViewState> = {}) => {
      const nonce = crypto.randomBytes(16).toString("base64");
      panel.webview.html = renderView({ file, summary, diagnostics, trusted: vscode.workspace.isTrusted, ...extra },
        nonce, panel.webview.cspSource);
    };
    const render = async () => {
      try {
        const described = await this.server.command<Described>("onnx-lint.describeModel", uri.toString());
        summary = described.summary;
        diagnostics = toViewDiagnostics(described.diagnostics);
        const converter = this.server.client?.protocol2CodeConverter;
        if (converter) {
          this.problems.set(uri, await converter.asDiagnostics(described.diagnostics as never));
        }
        show();
      } catch (error) {
        show({ error: `onnx-lint: ${(error as Error).message}` });
      }
    };
    const run = async (busy: string, work: () => Promise<unknown>) => {
      show({ busy });
      try {
        await work();
      } catch (error) {
        void vscode.window.showErrorMessage(`onnx-lint: ${(error as Error).message}`);
      }
      await render();
    };

    const key = uri.toString();
    if (!this.panels.has(key)) {
      this.panels.set(key, new Set());
    }
    this.panels.get(key)!.add(render);
    const watcher = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(vscode.Uri.file(path.dirname(uri.fsPath)), path.basename(uri.fsPath)));
    let pending: NodeJS.Timeout | undefined;
    const changed = () => {
      clearTimeout(pending);
      pending = setTimeout(() => void render(), 200);
    };
    const subscriptions = [
      watcher, watcher.onDidChange(changed), watcher.onDidCreate(changed),
      this.server.onDidStart(() => void render()),
      panel.webview.onDidReceiveMessage((message: { type: string; index?: number }) => {
        if (message.type === "fixAll") {
          void run("Fixing…", () => this.server.command("onnx-lint.fixAll", key));
        } else if (message.type === "fix" && message.index !== undefined && diagnostics[message.index]) {
          void run("Fixing…", () => this.server.command("onnx-lint.fix", key, diagnostics[message.index!].key));
        } else if (message.type === "quantize") {
          void this.actions.quantize(uri);
        } else if (message.type === "showText") {
          void this.actions.showText(uri);
        }
      }),
    ];
    panel.onDidDispose(() => {
      this.panels.get(key)?.delete(render);
      if (this.panels.get(key)?.size === 0) {
        this.problems.delete(uri);  // like closing a file: its problems leave the panel
      }
      subscriptions.forEach((s) => s.dispose());
    });
    show({ busy: "Linting…" });
    await render();
  }
}
