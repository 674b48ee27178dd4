// Pure logic (no `vscode` import): the model view's HTML, from the server's describeModel answer.

export interface TensorRow {
  name: string;
  declared: string;
  derived?: string;
  engine?: string | null;
}

export interface ModelSummary {
  producer: string;
  producerVersion: string;
  irVersion: number;
  graph: string;
  nodes: number;
  opsets: { domain: string; version: number }[];
  inputs: TensorRow[];
  outputs: TensorRow[];
}

export interface ViewDiagnostic {
  code: string;
  message: string;
  severity: "error" | "warning" | "info";
  fixable: boolean;
  key: unknown[];
}

export interface ViewState {
  file: string;
  summary: ModelSummary | null;
  diagnostics: ViewDiagnostic[];
  trusted: boolean;
  busy?: string;
  error?: string;
}

export interface LspDiagnostic {
  code?: string;
  message: string;
  severity?: number;
  data?: { fixable?: boolean; key?: unknown[] };
}

const SEVERITY: Record<number, ViewDiagnostic["severity"]> = { 1: "error", 2: "warning", 3: "info", 4: "info" };

export function toViewDiagnostics(diagnostics: LspDiagnostic[]): ViewDiagnostic[] {
  return diagnostics.map((d) => ({
    code: String(d.code ?? ""),
    message: d.message,
    severity: SEVERITY[d.severity ?? 1] ?? "error",
    fixable: Boolean(d.data?.fixable),
    key: d.data?.key ?? [],
  }));
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

function tensorTable(title: string, rows: TensorRow[], derived: boolean): string {
  const head = derived ? "<th>name</th><th>declared</th><th>derived</th>" : "<th>name</th><th>declared</th>";
  const body = rows.map((r) => {
    const stale = derived && r.derived !== undefined && r.derived !== r.declared && r.derived !== "<no type>";
    const cells = [`<td><code>${escapeHtml(r.name)}</code></td>`, `<td class="${stale ? "stale" : ""}">${escapeHtml(r.declared)}</td>`];
    if (derived) {
      cells.push(`<td>${escapeHtml(r.derived ?? "")}${r.engine ? ` <span class="engine">(${escapeHtml(r.engine)})</span>` : ""}</td>`);
    }
    return `<tr data-tensor="${escapeHtml(r.name)}">${cells.join("")}</tr>`;
  });
  return `<h2>${title}</h2><table class="${title.toLowerCase()}"><thead><tr>${head}</tr></thead><tbody>${body.join("")}</tbody></table>`;
}

/** The whole page; `nonce` authorizes the one inline script (the webview's CSP allows nothing else). */
export function renderView(state: ViewState, nonce: string, cspSource: string): string {
  const s = state.summary;
  const write = state.trusted ? "" : " disabled title=\"Disabled in an untrusted workspace\"";
  const fixable = state.diagnostics.some((d) => d.fixable);
  const diagnostics = state.diagnostics.length === 0
    ? `<p class="clean">No problems.</p>`
    : `<ul class="diagnostics">${state.diagnostics.map((d, i) =>
      `<li class="${d.severity}"><span class="code">${escapeHtml(d.code)}</span> ${escapeHtml(d.message)}` +
      (d.fixable ? ` <button class="fix" data-index="${i}"${write}>Fix</button>` : "") + "</li>").join("")}</ul>`;
  const identity = s === null ? "" : `
    <dl class="identity">
      <dt>producer</dt><dd>${escapeHtml(s.producer || "(none)")} ${escapeHtml(s.producerVersion)}</dd>
      <dt>IR version</dt><dd>${s.irVersion}</dd>
      <dt>opsets</dt><dd>${s.opsets.map((o) => `${escapeHtml(o.domain)} ${o.version}`).join(", ")}</dd>
      <dt>graph</dt><dd>${escapeHtml(s.graph)} (${s.nodes} nodes)</dd>
    </dl>
    ${tensorTable("Inputs", s.inputs, false)}
    ${tensorTable("Outputs", s.outputs, true)}`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'unsafe-inline'; script-src 'nonce-${nonce}';">
<title>${escapeHtml(state.file)}</title>
<style>
  body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1.5em; }
  table { border-collapse: collapse; margin-bottom: 1em; } td, th { border: 1px solid var(--vscode-panel-border); padding: 2px 8px; text-align: left; }
  .stale { color: var(--vscode-errorForeground); } .engine { opacity: 0.7; }
  .error .code { color: var(--vscode-errorForeground); } .warning .code { color: var(--vscode-editorWarning-foreground); }
  .code { font-weight: bold; margin-right: 0.5em; } ul.diagnostics li { margin: 0.4em 0; }
  dl.identity { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; } dd { margin: 0; }
  .toolbar button { margin-right: 0.5em; } .busy { font-style: italic; } .failure { color: var(--vscode-errorForeground); }
</style></head>
<body>
  <h1>${escapeHtml(state.file)}</h1>
  <div class="toolbar">
    <button id="fix-all"${fixable ? write : " disabled"}>Fix all</button>
    <button id="quantize"${write}>Quantize INT8+FP16</button>
    <button id="show-text">Show model as text</button>
  </div>
  ${state.busy ? `<p class="busy">${escapeHtml(state.busy)}</p>` : ""}
  ${state.error ? `<p class="failure">${escapeHtml(state.error)}</p>` : ""}
  ${identity}
  <h2>Problems</h2>
  ${diagnostics}
  <script nonce="${nonce}">
    const vscode = acquireVsCodeApi();
    const post = (type, extra) => vscode.postMessage(Object.assign({ type }, extra || {}));
    document.getElementById("fix-all").addEventListener("click", () => post("fixAll"));
    document.getElementById("quantize").addEventListener("click", () => post("quantize"));
    document.getElementById("show-text").addEventListener("click", () => post("showText"));
    for (const button of document.querySelectorAll("button.fix")) {
      button.addEventListener("click", () => post("fix", { index: Number(button.dataset.index) }));
    }
  </script>
</body></html>`;
}
