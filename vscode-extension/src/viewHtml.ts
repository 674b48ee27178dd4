// Pure logic (no `vscode` import): the model view's HTML, from the server's describeModel answer.
// Colours and fonts come from VS Code's `--vscode-*` variables (media/view.css), so the page follows
// the light, dark and high-contrast themes; the only script is the extension's own media file.
import { edgeTable, FindingGraph, findingSvg } from "./graphView";
import { escapeHtml } from "./html";
import { renderReport, Report } from "./reportHtml";
import { GraphFinding, INT8_LEVELS } from "./wholeGraph";

export { escapeHtml } from "./html";

export interface TensorRow {
  name: string;
  declared: string;
  derived?: string;
  engine?: string | null;
}

export interface ModelSummary {
  producer: string;
  producerVersion: string;
  /** "Quantized by onnx-lint 0.1.0 from model.onnx, ..." for a model `onnx-lint quantize` wrote; else null. */
  provenance?: string | null;
  irVersion: number;
  graph: string;
  nodes: number;
  opsets: { domain: string; version: number }[];
  inputs: TensorRow[];
  outputs: TensorRow[];
}

export interface DiagnosticLocation {
  path: string;
  tensor?: string | null;
  node?: string | null;
  op_type?: string | null;
}

export interface ViewDiagnostic {
  code: string;
  message: string;
  severity: "error" | "warning" | "info";
  fixable: boolean;
  key: unknown[];
  location: DiagnosticLocation | null;
  engine: string | null;
}

/** The finding whose neighbourhood is drawn (or why it could not be). */
export interface OpenGraph {
  index: number;
  drawing?: FindingGraph;
  error?: string;
}

export interface QuantizeShown {
  report: Report;
  warnings: string[];
  /** The server's plot of the accuracy/coverage frontier (an `--min-cosine` search), or null. */
  frontierSvg?: string | null;
}

export interface ViewState {
  file: string;
  summary: ModelSummary | null;
  diagnostics: ViewDiagnostic[];
  trusted: boolean;
  busy?: string;
  error?: string;
  graph?: OpenGraph;
  quantize?: QuantizeShown;
}

/** Where the page's own files are, as webview URIs, and the webview's CSP source. */
export interface PageResources {
  cspSource: string;
  script: string;
  style: string;
  worker?: string; // the whole-graph view's layout worker (no worker: no whole-graph view)
}

export interface LspDiagnostic {
  code?: string;
  message: string;
  severity?: number;
  data?: { fixable?: boolean; key?: unknown[]; location?: DiagnosticLocation; engine?: string | null };
}

const SEVERITY: Record<number, ViewDiagnostic["severity"]> = { 1: "error", 2: "warning", 3: "info", 4: "info" };

export function toViewDiagnostics(diagnostics: LspDiagnostic[]): ViewDiagnostic[] {
  return diagnostics.map((d) => ({
    code: String(d.code ?? ""),
    message: d.message,
    severity: SEVERITY[d.severity ?? 1] ?? "error",
    fixable: Boolean(d.data?.fixable),
    key: d.data?.key ?? [],
    location: d.data?.location ?? null,
    engine: d.data?.engine ?? null,
  }));
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
  return `<h3>${title}</h3><table class="${title.toLowerCase()}"><thead><tr>${head}</tr></thead><tbody>${body.join("")}</tbody></table>`;
}

const SEVERITY_WORD = { error: "Error", warning: "Warning", info: "Info" };

/**
 * Findings located on a graph element can be shown in the graph: a node, a graph input, output or
 * value_info, an initializer (shown by the nodes that read it), or a tensor or node a graph names. The
 * model itself, its IR version and its opset imports are not graph elements, nor a graph as a whole.
 */
export function drawable(d: ViewDiagnostic): boolean {
  const where = d.location;
  if (where === null || !(where.path === "graph" || where.path.startsWith("graph/"))) {
    return false;
  }
  return /\]$/.test(where.path) || Boolean(where.tensor) || Boolean(where.node);
}

/** The findings the whole-graph view places: those located in a graph. */
export function graphFindings(diagnostics: ViewDiagnostic[]): GraphFinding[] {
  return diagnostics.flatMap((d, index) => drawable(d) && d.location ? [{ index, code: d.code, severity: d.severity,
    path: d.location.path, tensor: d.location.tensor ?? null, node: d.location.node ?? null }] : []);
}

function problemList(state: ViewState, write: string): string {
  if (state.diagnostics.length === 0) {
    // "No problems" only from a finished lint: never beside "the server is not running" or "Linting…".
    return state.error || state.busy || state.summary === null ? "" : `<p class="clean">No problems.</p>`;
  }
  const items = state.diagnostics.map((d, i) => {
    const open = state.graph?.index === i;
    const graphButton = drawable(d)
      ? `<button class="secondary show-graph" data-action="reveal" data-index="${i}" aria-controls="whole-graph">Show in graph</button>` +
        `<button class="secondary quick-look" data-action="graph" data-index="${i}" aria-pressed="${open}"` +
        ` aria-controls="graph">Quick look</button>`
      : `<span class="not-graph">not a graph element</span>`;
    const fix = d.fixable ? `<button class="fix" data-action="fix" data-index="${i}"${write}>Fix</button>` : "";
    return `<li class="${d.severity}${open ? " selected" : ""}"><span class="severity" title="${SEVERITY_WORD[d.severity]}">` +
      `${SEVERITY_WORD[d.severity]}</span> <span class="code">${escapeHtml(d.code)}</span> ` +
      `<span class="message">${escapeHtml(d.message)}</span><span class="actions">${graphButton}${fix}</span></li>`;
  });
  return `<ul class="diagnostics">${items.join("")}</ul>`;
}

function graphSection(state: ViewState): string {
  const open = state.graph;
  if (!open) {
    return "";
  }
  const diagnostic = state.diagnostics[open.index];
  const title = diagnostic ? `${diagnostic.code} in its graph` : "The finding in its graph";
  const head = `<div class="section-head"><h2 id="graph-title" tabindex="-1" data-autofocus>${escapeHtml(title)}</h2>` +
    `<button class="secondary" data-action="closeGraph" title="Close (Escape)">Close</button></div>`;
  if (!open.drawing) {
    return `<section id="graph" class="graph" aria-labelledby="graph-title">${head}` +
      `<p class="failure">${escapeHtml(open.error ?? "Drawing…")}</p></section>`;
  }
  const drawing = open.drawing;
  const engines = [...new Set(drawing.edges.filter((e) => e.stale || e.focus).map((e) => e.engine).filter(Boolean))];
  const engine = diagnostic?.engine ?? engines[0] ?? null;
  return `<section id="graph" class="graph" aria-labelledby="graph-title">${head}
    <p class="where"><code>${escapeHtml(drawing.location)}</code>${engine
      ? ` — derived by <span class="engine-name">${escapeHtml(engine)}</span>` : ""}</p>
    <p class="legend"><span class="swatch stale"></span>stale: the declaration contradicts what the graph computes
      <span class="swatch focus"></span>the finding${drawing.truncated
      ? ` <span class="truncated">(bounded: "+N not drawn" marks neighbours left out)</span>` : ""}</p>
    <div class="graph-canvas">${findingSvg(drawing)}</div>
    <details><summary>The same edges as a table</summary>${edgeTable(drawing)}</details>
  </section>`;
}

/** What the model view says in an untrusted workspace (the server lints statically only). */
export const RESTRICTED = "Static lint only: this workspace is not trusted, so onnx-lint runs no model " +
  "(no runtime probe, no ONNX Runtime check) and writes no file (no fix, no quantize).";

/** The page's parts the host re-renders (the whole-graph view between them keeps its own state). */
export function renderParts(state: ViewState): { top: string; bottom: string } {
  const s = state.summary;
  const write = state.trusted ? "" : " disabled title=\"Disabled in an untrusted workspace\"";
  const fixable = state.diagnostics.some((d) => d.fixable);
  const busy = Boolean(state.busy);
  const identity = s === null ? "" : `
    <section aria-labelledby="model-title"><h2 id="model-title">Model</h2>
    <dl class="identity">
      <dt>producer</dt><dd>${escapeHtml(s.producer || "(none)")} ${escapeHtml(s.producerVersion)}</dd>${s.provenance
        ? `\n      <dt>provenance</dt><dd class="provenance">${escapeHtml(s.provenance)}</dd>` : ""}
      <dt>IR version</dt><dd>${s.irVersion}</dd>
      <dt>opsets</dt><dd>${s.opsets.map((o) => `${escapeHtml(o.domain)} ${o.version}`).join(", ")}</dd>
      <dt>graph</dt><dd>${escapeHtml(s.graph)} (${s.nodes} nodes)</dd>
    </dl>
    ${tensorTable("Inputs", s.inputs, false)}
    ${tensorTable("Outputs", s.outputs, true)}</section>`;
  const working = busy ? " disabled aria-disabled=\"true\"" : "";
  const top = `
  <header>
    <h1>${escapeHtml(state.file)}</h1>
    <div class="toolbar" role="toolbar" aria-label="Model actions">
      <button id="fix-all" data-action="fixAll"${fixable ? write || working : " disabled"}>Fix all</button>
      <button id="quantize" class="secondary" data-action="quantize"${write || working}>Quantize INT8+FP16</button>
      <button id="show-text" class="secondary" data-action="showText">Show model as text</button>
    </div>
  </header>
  ${state.trusted ? "" : `<p class="restricted" role="note">${escapeHtml(RESTRICTED)}</p>`}
  ${state.busy ? `<p class="busy" role="status">${escapeHtml(state.busy)}</p>` : ""}
  ${state.error ? `<p class="failure" role="alert">${escapeHtml(state.error)}</p>` : ""}
  <section aria-labelledby="problems-title"><h2 id="problems-title">Problems</h2>
  ${problemList(state, write)}</section>
  ${graphSection(state)}`;
  const bottom = `${state.quantize ? renderReport(state.quantize.report, state.quantize.warnings, state.quantize.frontierSvg) : ""}
  ${identity}`;
  return { top, bottom };
}

/** The legend of a quantized model's colouring: one swatch per step of the INT8 error share ("<1%" … "≥35%"). */
export function int8Legend(): string {
  const pct = (share: number) => `${Number((share * 100).toFixed(1))}%`;
  const steps = [`&lt;${pct(INT8_LEVELS[0])}`, ...INT8_LEVELS.slice(1).map((high, i) => `${pct(INT8_LEVELS[i])}–${pct(high)}`),
    `≥${pct(INT8_LEVELS[INT8_LEVELS.length - 1])}`];
  return `<p id="graph-int8-legend" class="legend int8-legend" hidden><strong>INT8 error share</strong>` +
    steps.map((label, level) => `<span class="step"><span class="swatch int8-l${level}" aria-hidden="true"></span>${label}</span>`)
      .join("") +
    `<span class="hint">Each INT8 node's share of the error INT8 adds at the outputs, measured with only that node in ` +
    `INT8 (a group: its nodes' sum), as the tint of its box and the bar along its bottom.</span></p>`;
}

/** The whole-graph view's frame: the page's script fills it (see src/webview/graphCanvas.ts). */
export function wholeGraphSection(): string {
  return `<section id="whole-graph" class="whole-graph" aria-labelledby="whole-graph-title">
    <div class="section-head"><h2 id="whole-graph-title">Graph</h2>
      <span id="graph-status" class="engine" role="status">Loading the graph…</span>
      <span id="graph-busy" class="busy" hidden>Laying out…</span></div>
    <div class="graph-toolbar" role="toolbar" aria-label="Graph">
      <input id="graph-search" type="search" placeholder="Search node, tensor or op type"
        aria-label="Search the graph by node name, tensor name or op type" aria-controls="graph-hits" autocomplete="off">
      <button class="secondary" data-graph="zoomIn" title="Zoom in (+)" aria-label="Zoom in">+</button>
      <button class="secondary" data-graph="zoomOut" title="Zoom out (−)" aria-label="Zoom out">−</button>
      <button class="secondary" data-graph="fit" title="Fit the graph in view (0)">Fit</button>
      <button class="secondary" data-graph="collapse">Collapse all</button>
    </div>
    <ul id="graph-hits" class="graph-hits" role="listbox" aria-label="Matches" hidden></ul>
    ${int8Legend()}
    <div class="graph-body">
      <div id="graph-viewport" class="graph-viewport" tabindex="0" role="application" aria-roledescription="graph"
        aria-label="The model's graph" aria-describedby="graph-help">
        <svg id="graph-svg" class="whole-graph-svg" xmlns="http://www.w3.org/2000/svg">
          <defs>${["", "-error", "-warning", "-info"].map((s) =>
            `<marker id="g-arrow${s}" class="arrow${s}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" ` +
            `orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker>`).join("")}</defs>
          <g id="graph-layer"></g>
        </svg>
        <canvas id="graph-minimap" class="graph-minimap" width="180" height="120" aria-hidden="true"></canvas>
      </div>
      <aside id="graph-details" class="graph-details" aria-label="Selected node"><p class="hint">Select a node for its
        attributes, inputs and outputs.</p></aside>
    </div>
    <p id="graph-help" class="hint">Click a node or group for its details, double-click to expand it, click empty space to clear; drag
      to pan, scroll to zoom. Arrow keys move between nodes, Enter expands a group or a node's body, + and − zoom, 0 fits. Errors, warnings and notes colour the nodes and the stale tensors' edges.</p>
    <div id="graph-announce" class="sr-only" aria-live="polite" aria-atomic="true"></div>
    <details><summary>The same graph as a table</summary>
      <table class="graph-table"><thead><tr><th>kind</th><th>node</th><th>inputs</th><th>outputs</th><th>finding</th>
      <th></th></tr></thead><tbody id="graph-table-body"></tbody></table></details>
  </section>`;
}

/** The whole page; `resources.cspSource` is the only origin scripts and styles may come from. */
export function renderView(state: ViewState, resources: PageResources): string {
  const { top, bottom } = renderParts(state);
  // The layout worker is fetched from the extension and started from a blob: (a webview may not start
  // a worker from its resource origin).
  const worker = resources.worker ? ` worker-src blob:; connect-src ${resources.cspSource};` : "";
  const csp = `default-src 'none'; img-src ${resources.cspSource} data:; style-src ${resources.cspSource}; ` +
    `font-src ${resources.cspSource}; script-src ${resources.cspSource};${worker}`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${escapeHtml(state.file)}</title>
<link rel="stylesheet" href="${escapeHtml(resources.style)}">
</head>
<body${resources.worker ? ` data-worker="${escapeHtml(resources.worker)}"` : ""}>
  <div id="top">${top}</div>
  ${resources.worker ? wholeGraphSection() : ""}
  <div id="bottom">${bottom}</div>
  <script src="${escapeHtml(resources.script)}"></script>
</body></html>`;
}
