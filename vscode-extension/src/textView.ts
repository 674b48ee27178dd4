import * as vscode from "vscode";
import { ServerConnection, VIEW_SCHEME } from "./client";

/** `onnx-lint:/abs/model.onnx.txt`: the server's textual view, where diagnostics sit on real lines. */
export function viewUri(model: vscode.Uri): vscode.Uri {
  return vscode.Uri.from({ scheme: VIEW_SCHEME, path: `${model.fsPath}.txt` });
}

/** The model a textual view shows. */
export function modelOfView(view: vscode.Uri): vscode.Uri {
  return vscode.Uri.file(view.path.replace(/\.txt$/, ""));
}

export class TextViewProvider implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly server: ServerConnection) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const model = modelOfView(uri);
    const shown = await this.server.command<{ text: string }>("onnx-lint.showModel", model.toString());
    return shown.text;
  }

  /** The model changed on disk: its open view must be fetched again. */
  modelChanged(model: vscode.Uri): void {
    this.changed.fire(viewUri(model));
  }

  async open(model: vscode.Uri): Promise<void> {
    const document = await vscode.workspace.openTextDocument(viewUri(model));
    await vscode.window.showTextDocument(document, { preview: false });
  }
}
