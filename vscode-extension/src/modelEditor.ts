import * as path from "path";
import * as vscode from "vscode";
import { ServerConnection, VIEW_SCHEME } from "./client";
import { Comparison, CompareRow, compareMarks, compareRows, CompareShown } from "./compareHtml";
import { FindingGraph } from "./graphView";
import { QuantizeResult } from "./quantize";
import {
  drawable, graphFindings, LspDiagnostic, ModelSummary, OpenGraph, QuantizeShown, renderParts, renderView, toViewDiagnostics,
  ViewDiagnostic, ViewState,
} from "./viewHtml";
import { graphDataMessage, ModelGraph } from "./wholeGraph";

interface Described {
  summary: ModelSummary | null;
  diagnostics: LspDiagnostic[];
  /** The Problems panel's entries: a run of findings of one cause as one, with its first finding's index. */
  problems?: { index: number; diagnostic: LspDiagnostic }[];
}

interface Panel {
  render(): Promise<void>;
  showQuantized(shown: QuantizeShown): void;
  reveal(index: number): void;
  compare(other: vscode.Uri): Promise<void>;
  revealNode(graph: string, node: number): void;
}

/** The other `.onnx` files of the workspace, likely twins first: the same folder and a shared name ("m.onnx" and
 * "m.int8.onnx"), then the same folder, then the rest; "Browse…" for a file outside the workspace. */
async function pickOther(model: vscode.Uri): Promise<vscode.Uri | undefined> {
  const stem = path.basename(model.fsPath).split(".")[0];
  const folder = path.dirname(model.fsPath);
  const rank = (uri: vscode.Uri) => (path.dirname(uri.fsPath) === folder ? 0 : 2) +
    (path.basename(uri.fsPath).split(".")[0] === stem ? 0 : 1);
  const found = (await vscode.workspace.findFiles("**/*.onnx", "**/node_modules/**", 500))
    .filter((uri) => uri.fsPath !== model.fsPath)
    .sort((a, b) => rank(a) - rank(b) || a.fsPath.localeCompare(b.fsPath));
  const browse = { label: "Browse…", description: "a model outside the workspace" };
  const items = [...found.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), uri,
    description: rank(uri) === 0 ? "same name" : undefined })), browse];
  const picked = await vscode.window.showQuickPick(items,
    { placeHolder: `Compare ${path.basename(model.fsPath)} with…`, matchOnDescription: true });
  if (!picked) {
    return undefined;
  }
  if ("uri" in picked) {
    return picked.uri;
  }
  const chosen = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { "ONNX models": ["onnx"] },
    defaultUri: vscode.Uri.file(folder), openLabel: "Compare" });
  return chosen?.[0];
}

/** The command a model entry's code link in the Problems panel runs: its finding, selected in the graph. */
export function showInGraphLink(model: string, index: number): vscode.Uri {
  return vscode.Uri.parse(`command:onnxLint.showInGraph?${encodeURIComponent(JSON.stringify([model, index]))}`);
}

/**
 * Whether a tab shows the textual view of a model. Tabs, not documents: the language client drops a
 * view's pulled entries when its last tab closes, while VS Code may keep the document for a while.
 */
export function textViewOpen(model: vscode.Uri): boolean {
  const viewPath = `${model.fsPath}.txt`;
  return vscode.window.tabGroups.all.some((group) => group.tabs.some((tab) =>
    tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === VIEW_SCHEME && tab.input.uri.path === viewPath));
}

/**
 * The read-only custom editor for `.onnx` files: the main way VS Code users meet onnx-lint.
 *
 * It also owns the Problems panel entries of the models it shows: VS Code sends no didOpen for a
 * binary file, and vscode-languageclient 9 pulls diagnostics only for tabs that exist when it starts
 * (a custom-editor tab opened later waits for a didOpen that never comes). One entry per finding:
 * while a model's textual view is open, its entries (on real lines) stand for the findings and the
 * model's own are withdrawn (docs/editors.md, "One entry per finding").
 */
export class ModelEditorProvider implements vscode.CustomReadonlyEditorProvider {
  static readonly viewType = "onnxLint.model";
  private readonly panels = new Map<string, Set<Panel>>();
  private readonly modelProblems = new Map<string, vscode.Diagnostic[]>();

  constructor(private readonly server: ServerConnection, private readonly problems: vscode.DiagnosticCollection,
    private readonly extensionUri: vscode.Uri,
    private readonly actions: {
    quantize(uri: vscode.Uri): Promise<QuantizeResult | undefined>;
    showText(uri: vscode.Uri): Promise<void>;
  }) {}

  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    return { uri, dispose: () => undefined };
  }

  /** Re-render every open view of a model (after a fix, a change on disk, a trust change). */
  async refresh(uri?: vscode.Uri): Promise<void> {
    for (const [key, panels] of this.panels) {
      if (!uri || key === uri.toString()) {
        await Promise.all([...panels].map((panel) => panel.render()));
      }
    }
  }

  /** Select a finding in a model's open view and its graph ("Show in graph" from the Problems panel). */
  reveal(uri: vscode.Uri, index: number): void {
    for (const panel of this.panels.get(uri.toString()) ?? []) {
      panel.reveal(index);
    }
  }

  /** Compare a model's view with another model (asked for when not given), opening the view if none is open. */
  async compare(uri: vscode.Uri, other?: vscode.Uri): Promise<void> {
    const twin = other ?? await pickOther(uri);
    if (!twin) {
      return;
    }
    if (!this.panels.get(uri.toString())?.size) {
      await vscode.commands.executeCommand("vscode.openWith", uri, ModelEditorProvider.viewType);
    }
    await Promise.all([...this.panels.get(uri.toString()) ?? []].map((panel) => panel.compare(twin)));
  }

  /** Put a model's entries in the Problems panel, unless its textual view shows them already. */
  syncProblems(uri: vscode.Uri): void {
    const entries = this.modelProblems.get(uri.toString());
    if (entries && this.panels.get(uri.toString())?.size && !textViewOpen(uri)) {
      this.problems.set(uri, entries);
    } else {
      this.problems.delete(uri);
    }
  }

  /** Show a quantize report in the model's views (opening one if none is). */
  async showQuantized(uri: vscode.Uri, result: QuantizeResult): Promise<void> {
    if (!this.panels.get(uri.toString())?.size) {
      await vscode.commands.executeCommand("vscode.openWith", uri, ModelEditorProvider.viewType);
    }
    for (const panel of this.panels.get(uri.toString()) ?? []) {
      panel.showQuantized({ report: result.report ?? { output: result.output }, warnings: result.warnings ?? [],
        frontierSvg: result.frontierSvg ?? null });
    }
    await vscode.commands.executeCommand("vscode.openWith", vscode.Uri.file(result.output), ModelEditorProvider.viewType,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true });
  }

  async resolveCustomEditor(document: vscode.CustomDocument, panel: vscode.WebviewPanel): Promise<void> {
    const uri = document.uri;
    const key = uri.toString();
    const file = path.basename(uri.fsPath);
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    const scripts = vscode.Uri.joinPath(this.extensionUri, "out", "webview");
    panel.webview.options = { enableScripts: true, localResourceRoots: [media, scripts] };
    const resources = {
      cspSource: panel.webview.cspSource,
      script: panel.webview.asWebviewUri(vscode.Uri.joinPath(scripts, "main.js")).toString(),
      style: panel.webview.asWebviewUri(vscode.Uri.joinPath(media, "view.css")).toString(),
      worker: panel.webview.asWebviewUri(vscode.Uri.joinPath(scripts, "layout.js")).toString(),
    };
    let diagnostics: ViewDiagnostic[] = [];
    let summary: ModelSummary | null = null;
    let graph: OpenGraph | undefined;
    let quantized: QuantizeShown | undefined;
    let compared: CompareShown | undefined;  // the comparison the view shows, with the model compared with
    let comparedWith: vscode.Uri | undefined;
    let compareRowsShown: CompareRow[] = [];
    let graphPosted = false;  // the page has the graph: a node can be revealed now, else once it has
    let pendingNode: { graph: string; node: number } | undefined;
    // Once the page has loaded, later renders replace its text parts only: the whole-graph view keeps its
    // layout, zoom and selection. Before that (or after a reload), the page is set whole.
    let ready = false;
    let wholeGraph: Promise<ModelGraph> | undefined;
    const show = (extra: Partial<ViewState> = {}) => {
      const state: ViewState = { file, summary, diagnostics, trusted: vscode.workspace.isTrusted, graph,
        quantize: quantized, compare: compared, ...extra };
      if (ready) {
        void panel.webview.postMessage({ type: "render", ...renderParts(state), findings: graphFindings(diagnostics) });
      } else {
        panel.webview.html = renderView(state, resources);
      }
    };
    let failure: string | undefined;  // why the last lint gave no model (the server not running, …)
    let linted = false;  // until the first lint answers, the page says "Loading the graph…"
    const sendGraph = async (reload: boolean) => {
      if (!ready || !linted) {
        return;
      }
      if (failure !== undefined || summary === null) {  // never "Loading the graph…" for a graph that will not come
        void panel.webview.postMessage({ type: "graphError",
          error: `No graph: ${failure ?? "onnx-lint cannot read this model (see its problem)"}` });
        return;
      }
      if (reload || !wholeGraph) {
        wholeGraph = this.server.command<ModelGraph>("onnx-lint.modelGraph", key);
      }
      try {
        const data = await wholeGraph;
        void panel.webview.postMessage(graphDataMessage(data, graphFindings(diagnostics)));
        graphPosted = true;
        if (pendingNode) {
          void panel.webview.postMessage({ type: "revealNode", ...pendingNode });
          pendingNode = undefined;
        }
      } catch (error) {
        wholeGraph = undefined;
        void panel.webview.postMessage({ type: "graphError", error: `onnx-lint: ${(error as Error).message}` });
      }
    };
    const drawGraph = async (index: number) => {
      const diagnostic = diagnostics[index];
      if (!diagnostic || !drawable(diagnostic)) {
        return;
      }
      const location = diagnostic.location;
      graph = { index };
      show({ busy: "Drawing…" });
      try {
        graph.drawing = await this.server.command<FindingGraph>("onnx-lint.findingGraph", key, location);
      } catch (error) {
        graph.error = `onnx-lint: ${(error as Error).message}`;
      }
      show();
    };
    const render = async () => {
      try {
        const described = await this.server.command<Described>("onnx-lint.describeModel", key);
        failure = undefined;
        linted = true;
        summary = described.summary;
        const before = graph === undefined ? undefined : diagnostics[graph.index];
        diagnostics = toViewDiagnostics(described.diagnostics);
        const converter = this.server.client?.protocol2CodeConverter;
        if (converter) {
          // A binary model's entries sit at Ln 1: their code link goes to the finding in the graph instead
          // (the rule's docs stay one click away in the hover, the lightbulb and the view).
          // One entry per cause (an exporter's repeated artifact is said once, with its count), each linked
          // to its first finding; a server without `problems` lists every finding.
          const shown = described.problems ?? described.diagnostics.map((diagnostic, index) => ({ index, diagnostic }));
          const entries = await converter.asDiagnostics(shown.map((p) => p.diagnostic) as never);
          entries.forEach((entry, i) => {
            const index = shown[i].index;
            if (diagnostics[index] && drawable(diagnostics[index])) {
              entry.code = { value: diagnostics[index].code, target: showInGraphLink(key, index) };
            }
          });
          this.modelProblems.set(key, entries);
          this.syncProblems(uri);
        }
        // The drawn finding survives a re-lint if it is still there; otherwise the drawing closes.
        const again = before === undefined ? -1
          : diagnostics.findIndex((d) => JSON.stringify(d.key) === JSON.stringify(before.key));
        if (again >= 0 && graph) {
          await drawGraph(again);
          await sendGraph(true);
          return;
        }
        graph = undefined;
        show();
        if (comparedWith) {
          void compare(comparedWith);  // the model changed: so may have what differs
        }
      } catch (error) {
        failure = (error as Error).message;
        linted = true;
        show({ error: `onnx-lint: ${failure}` });
        await sendGraph(false);
        return;
      }
      await sendGraph(true);
    };
    const compare = async (other: vscode.Uri) => {
      comparedWith = other;
      compared = { other: path.basename(other.fsPath) };
      show();
      try {
        const result = await this.server.command<Comparison>("onnx-lint.compareModels", key, other.toString());
        if (comparedWith !== other) {
          return;  // the user has since stopped or compared with another model
        }
        compared = { other: compared.other, result };
        compareRowsShown = compareRows(result);
        void panel.webview.postMessage({ type: "compareMarks", marks: compareMarks(result) });
      } catch (error) {
        compared = { other: compared.other, error: `onnx-lint: ${(error as Error).message}` };
        void panel.webview.postMessage({ type: "compareMarks", marks: [] });
      }
      show();
    };
    const revealNode = (graphPath: string, node: number) => {
      if (graphPosted) {
        void panel.webview.postMessage({ type: "revealNode", graph: graphPath, node });
      } else {
        pendingNode = { graph: graphPath, node };
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
    const entry: Panel = {
      render,
      showQuantized: (shown) => {
        quantized = shown;
        show();
      },
      reveal: (index) => {
        panel.reveal(undefined, false);
        void panel.webview.postMessage({ type: "reveal", index });
      },
      compare,
      revealNode,
    };

    if (!this.panels.has(key)) {
      this.panels.set(key, new Set());
    }
    this.panels.get(key)!.add(entry);
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
      panel.webview.onDidReceiveMessage((message: { type: string; index?: number; graph?: string }) => {
        const index = message.index;
        if (message.type === "ready") {
          ready = true;
          void sendGraph(false);
        } else if (message.type === "nodeDetails" && typeof message.graph === "string" && index !== undefined) {
          this.server.command("onnx-lint.graphNode", key, message.graph, index).then(
            (details) => panel.webview.postMessage({ type: "nodeDetails", details }),
            (error: Error) => panel.webview.postMessage({ type: "nodeDetails", details: { error: `onnx-lint: ${error.message}` } }));
        } else if (message.type === "fixAll") {
          void run("Fixing…", () => this.server.command("onnx-lint.fixAll", key));
        } else if (message.type === "fix" && index !== undefined && diagnostics[index]) {
          void run("Fixing…", () => this.server.command("onnx-lint.fix", key, diagnostics[index].key));
        } else if (message.type === "graph" && index !== undefined) {
          void drawGraph(index);
        } else if (message.type === "closeGraph") {
          graph = undefined;
          show();
        } else if (message.type === "quantize") {
          // Its buttons stay disabled while it runs; VS Code shows the server's progress, with Cancel.
          show({ busy: "Quantizing…" });
          void this.actions.quantize(uri).then((result) => result ? this.showQuantized(uri, result) : show());
        } else if (message.type === "compare") {
          void this.compare(uri);
        } else if (message.type === "stopCompare") {
          compared = comparedWith = undefined;
          compareRowsShown = [];
          void panel.webview.postMessage({ type: "compareMarks", marks: [] });
          show();
        } else if (message.type === "revealChange" && index !== undefined && compareRowsShown[index]?.node != null) {
          const row = compareRowsShown[index];
          revealNode(row.graph, row.node!);
        } else if (message.type === "revealInOther" && index !== undefined && comparedWith
            && compareRowsShown[index]?.otherNode != null) {
          // The node is only in the other model: its view, beside this one, compared with this model, the node selected.
          const row = compareRowsShown[index];
          const other = comparedWith;
          void (async () => {
            await vscode.commands.executeCommand("vscode.openWith", other, ModelEditorProvider.viewType,
              { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false });
            for (const twin of this.panels.get(other.toString()) ?? []) {
              twin.revealNode(row.graph, row.otherNode!);
              void twin.compare(uri);
            }
          })();
        } else if (message.type === "showText") {
          void this.actions.showText(uri);
        }
      }),
    ];
    panel.onDidDispose(() => {
      this.panels.get(key)?.delete(entry);
      if (this.panels.get(key)?.size === 0) {
        this.panels.delete(key);
        this.modelProblems.delete(key);
        this.problems.delete(uri);  // like closing a file: its problems leave the panel
      }
      subscriptions.forEach((s) => s.dispose());
    });
    show({ busy: "Linting…" });
    await render();
  }
}
