// Pure logic (no `vscode` import): the model view's HTML, from the server's describeModel answer.
// Colours and fonts come from VS Code's `--vscode-*` variables (media/view.css), so the page follows
// the light, dark and high-contrast themes; the only script is the extension's own media file.
import { edgeTable, FindingGraph, findingSvg } from "./graphView";
import { escapeHtml } from "./html";
import { compareLegend, CompareShown, renderCompare } from "./compareHtml";
import { renderReport, Report } from "./reportHtml";
import { GraphFinding, INT8_LEVELS } from "./wholeGraph";
import { GRAPH_SHARE } from "./graphSplit";
import { count, thousands } from "./words";

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
  compare?: CompareShown;
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

/** A run of findings this long or longer, of one rule and one message but for the names it quotes, is one row. */
export const GROUP_MIN = 3;

/** A finding's message without where it is (the server's closing "(at graph/value_info[3] 'h3')") and without the
 * names it quotes: what the findings of one cause share. */
export function findingPattern(message: string): string {
  const at = message.lastIndexOf(" (at ");
  const cause = at > 0 && message.endsWith(")") ? message.slice(0, at) : message;
  return cause.replace(/\s*'[^']*'/g, "").replace(/\s+/g, " ").trim();
}

/** Findings of one rule, severity and message pattern, shown as one row until "show all" opens it. */
export interface FindingGroup {
  key: string;
  code: string;
  severity: ViewDiagnostic["severity"];
  pattern: string;
  members: number[]; // indexes into the diagnostics, in order
}

/**
 * The problems list's rows, in the order of their first finding: a finding alone (its index), or a group of
 * GROUP_MIN or more that differ only in the names they quote (200 stale value_info entries of one shape are
 * one row, "OL005 × 200", not 200 rows that push the graph out of the editor).
 */
export function groupFindings(diagnostics: ViewDiagnostic[]): (number | FindingGroup)[] {
  const groups = new Map<string, FindingGroup>();
  for (const [i, d] of diagnostics.entries()) {
    const pattern = findingPattern(d.message);
    const key = `${d.code} ${d.severity} ${pattern}`;
    const group = groups.get(key) ?? { key, code: d.code, severity: d.severity, pattern, members: [] };
    group.members.push(i);
    groups.set(key, group);
  }
  const rows: (number | FindingGroup)[] = [];
  for (const [i, d] of diagnostics.entries()) {
    const group = groups.get(`${d.code} ${d.severity} ${findingPattern(d.message)}`)!;
    if (group.members.length < GROUP_MIN) {
      rows.push(i);
    } else if (group.members[0] === i) {
      rows.push(group);
    }
  }
  return rows;
}

function findingRow(state: ViewState, write: string, i: number, member?: string): string {
  const d = state.diagnostics[i];
  const open = state.graph?.index === i;
  const graphButton = drawable(d)
    ? `<button class="secondary show-graph" data-action="reveal" data-index="${i}" aria-controls="whole-graph">Show in graph</button>` +
      `<button class="secondary quick-look" data-action="graph" data-index="${i}" aria-pressed="${open}"` +
      ` aria-controls="graph">Quick look</button>`
    : `<span class="not-graph">not a graph element</span>`;
  const fix = d.fixable ? `<button class="fix" data-action="fix" data-index="${i}"${write}>Fix</button>` : "";
  const classes = [d.severity, open ? "selected" : "", member === undefined ? "" : "member"].filter(Boolean).join(" ");
  // A group's member stays hidden until its "show all" opens it, unless it is the finding drawn now.
  const grouped = member === undefined ? "" : ` data-member="${escapeHtml(member)}"${open ? "" : " hidden"}`;
  return `<li class="${classes}"${grouped}><span class="severity" title="${SEVERITY_WORD[d.severity]}">` +
    `${SEVERITY_WORD[d.severity]}</span> <span class="code">${escapeHtml(d.code)}</span> ` +
    `<span class="message">${escapeHtml(d.message)}</span><span class="actions">${graphButton}${fix}</span></li>`;
}

function groupRow(state: ViewState, write: string, group: FindingGroup): string {
  const first = group.members[0];
  const show = drawable(state.diagnostics[first])
    ? `<button class="secondary show-graph" data-action="reveal" data-index="${first}" aria-controls="whole-graph"` +
      ` title="Show the first of them in the graph">Show in graph</button>` : "";
  const n = group.members.length;
  return `<li class="${group.severity} group" data-group="${escapeHtml(group.key)}" data-count="${n}">` +
    `<span class="severity" title="${SEVERITY_WORD[group.severity]}">${SEVERITY_WORD[group.severity]}</span> ` +
    `<span class="code">${escapeHtml(group.code)} × ${thousands(n)}</span> ` +
    `<span class="message">${escapeHtml(group.pattern)}</span><span class="actions">${show}` +
    `<button class="secondary show-all" data-action="toggleGroup" aria-expanded="false"` +
    ` title="List each of these ${escapeHtml(count(n, "finding"))}">Show all ${thousands(n)}</button></span></li>` +
    group.members.map((i) => findingRow(state, write, i, group.key)).join("");
}

function problemList(state: ViewState, write: string): string {
  if (state.diagnostics.length === 0) {
    // "No problems" only from a finished lint: never beside "the server is not running" or "Linting…".
    return state.error || state.busy || state.summary === null ? "" : `<p class="clean">No problems.</p>`;
  }
  const rows = groupFindings(state.diagnostics).map((row) => typeof row === "number"
    ? findingRow(state, write, row) : groupRow(state, write, row));
  return `<ul class="diagnostics" aria-label="${escapeHtml(count(state.diagnostics.length, "problem"))}">${rows.join("")}</ul>`;
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
      <button id="compare-with" class="secondary" data-action="compare"${working}
        title="Compare with its original, or with its fixed, quantized or simplified twin">Compare with…</button>
    </div>
  </header>
  ${state.trusted ? "" : `<p class="restricted" role="note">${escapeHtml(RESTRICTED)}</p>`}
  ${state.busy ? `<p class="busy" role="status">${escapeHtml(state.busy)}</p>` : ""}
  ${state.error ? `<p class="failure" role="alert">${escapeHtml(state.error)}</p>` : ""}
  <section aria-labelledby="problems-title"><h2 id="problems-title">Problems</h2>
  ${problemList(state, write)}</section>
  ${state.compare ? renderCompare(state.compare, state.file) : ""}
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

/**
 * The whole-graph view's frame: the page's script fills it (see src/webview/graphCanvas.ts) and sizes it to the
 * editor's height below the page's header (src/webview/pageLayout.ts). The minimap has its own strip beside the
 * drawing, so it never covers a node; the details sit beside the drawing (below it in a narrow column), across a
 * split the mouse drags and the keyboard moves.
 */
export function wholeGraphSection(): string {
  return `<section id="whole-graph" class="whole-graph" aria-labelledby="whole-graph-title">
    <div id="graph-head" class="graph-head">
    <div class="section-head"><h2 id="whole-graph-title">Graph</h2>
      <span id="graph-status" class="engine" role="status">Loading the graph…</span>
      <span id="graph-busy" class="busy" hidden>Laying out…</span></div>
    <div class="graph-toolbar" role="toolbar" aria-label="Graph">
      <input id="graph-search" type="search" placeholder="Search node, tensor or op type"
        aria-label="Search the graph by node name, tensor name or op type" aria-controls="graph-hits"
        aria-describedby="graph-search-count" autocomplete="off">
      <span id="graph-search-count" class="search-count"></span>
      <button class="secondary" data-graph="zoomIn" title="Zoom in (+)" aria-label="Zoom in">+</button>
      <button class="secondary" data-graph="zoomOut" title="Zoom out (−)" aria-label="Zoom out">−</button>
      <button class="secondary" data-graph="fit" title="Fit the graph in view (0)">Fit</button>
      <button class="secondary" data-graph="collapse">Collapse all</button>
      <button class="secondary" data-graph="minimap" aria-pressed="true" aria-controls="graph-minimap-strip"
        title="Show or hide the minimap">Minimap</button>
    </div>
    <ul id="graph-hits" class="graph-hits" role="listbox" aria-label="Matches" hidden></ul>
    ${int8Legend()}
    ${compareLegend()}
    </div>
    <div id="graph-body" class="graph-body">
      <div class="graph-pane">
        <div id="graph-viewport" class="graph-viewport" tabindex="0" role="application" aria-roledescription="graph"
          aria-label="The model's graph" aria-describedby="graph-help">
          <svg id="graph-svg" class="whole-graph-svg" xmlns="http://www.w3.org/2000/svg">
            <defs>${["", "-error", "-warning", "-info"].map((s) =>
              `<marker id="g-arrow${s}" class="arrow${s}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" ` +
              `orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker>`).join("")}</defs>
            <g id="graph-layer"></g>
          </svg>
        </div>
        <div id="graph-minimap-strip" class="graph-minimap-strip">
          <canvas id="graph-minimap" class="graph-minimap" aria-hidden="true"></canvas>
        </div>
      </div>
      <div id="graph-split" class="graph-split" role="separator" tabindex="0" aria-orientation="vertical"
        aria-controls="graph-details" aria-label="Resize the graph and its details" aria-valuemin="${GRAPH_SHARE.min}"
        aria-valuemax="${GRAPH_SHARE.max}" aria-valuenow="${GRAPH_SHARE.initial}" title="Drag, or use the arrow keys, to resize"></div>
      <aside id="graph-details" class="graph-details" aria-label="Selected node"><p class="hint">Select a node for its
        attributes, inputs and outputs.</p></aside>
    </div>
    <p id="graph-help" class="hint">Click a node or group for its details, double-click to expand it, click empty space to clear; drag
      to pan, scroll to zoom; drag the bar between the drawing and the details to resize them. Arrow keys move between nodes, Enter
      expands a group or a node's body, + and − zoom, 0 fits. Errors, warnings and notes colour the nodes and the stale tensors' edges.</p>
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
