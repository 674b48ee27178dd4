// Pure logic (no `vscode`, no DOM): a model compared with its twin, as the model view shows it.
//
// The server's onnx-lint.compareModels answer (onnx_lint/lint/compare.py) says, for two models it has put in
// order (the original "before", its fixed, quantized, converted or simplified twin "after"), which node now runs
// in what precision, which were kept in FP32, rewritten, removed or added, and which declarations changed. The
// view shows it twice: a section of grouped lists (each row selects its node in the graph, or opens the other
// model's view where the node is only there), and marks on the graph's nodes (`compareMarks`).
import { escapeHtml } from "./html";
import { count, thousands } from "./words";

export type NodeChangeKind = "precision" | "kept" | "rewritten" | "removed" | "added";

export interface NodeChange {
  kind: NodeChangeKind;
  graph: string;
  name: string;
  op: string;
  detail: string;
  index: number | null; // in the twin ("after")
  before: number | null; // in the original
  precision: string | null;
}

export interface DeclarationChange {
  graph: string;
  tensor: string;
  where: "input" | "output" | "value_info";
  before: string | null;
  after: string | null;
  node: number | null; // the twin's node that computes it
  nodeBefore: number | null;
  change: "changed" | "dropped" | "added";
}

export interface ModelSide {
  file: string;
  nodes: number;
  weightBytes: number;
  precision: Record<string, number>;
}

export interface Comparison {
  before: ModelSide;
  after: ModelSide;
  ops: [string, number, number][];
  nodes: NodeChange[];
  declarations: DeclarationChange[];
  weightsRetyped: Record<string, number>;
  counts: Record<string, number>;
  identical: boolean;
  viewed: "before" | "after"; // which of the two the view shows
  why: string; // how the server told them apart ("q.onnx was quantized from m.onnx")
}

/** A comparison the view shows (or is waiting for, or failed to get). */
export interface CompareShown {
  other: string; // the other model's file name
  result?: Comparison;
  error?: string;
}

/** One row of the section: where its node is in this model's graph (`node`), or only in the other's (`otherNode`). */
export interface CompareRow {
  graph: string;
  node: number | null;
  otherNode: number | null;
  label: string;
}

/** How a mark on the graph reads: its kind (for the colour), its badge and its line in the node's details. */
export interface ChangeMark {
  graph: string;
  node: number;
  kind: "quantized" | "half" | "kept" | "rewritten" | "removed" | "added" | "declaration";
  badge: string;
  detail: string;
}

/** Rows listed per kind; beyond them the section says how many more and where to read them all. */
export const MAX_ROWS = 200;

const NODE_SECTIONS: [NodeChangeKind, string][] = [["precision", "Precision changed"], ["kept", "Kept in FP32"],
  ["rewritten", "Rewritten"], ["removed", "Removed"], ["added", "Added"]];
const DECLARATION_SECTIONS: [DeclarationChange["change"], string][] = [["changed", "Declarations changed"],
  ["dropped", "Declarations dropped"], ["added", "Annotations added"]];

function size(bytes: number): string {
  for (const [unit, scale] of [["GB", 2 ** 30], ["MB", 2 ** 20], ["KB", 2 ** 10]] as const) {
    if (bytes >= scale) {
      return `${(bytes / scale).toFixed(1)} ${unit}`;
    }
  }
  return `${bytes} B`;
}

function precisionText(counts: Record<string, number>): string {
  const parts = Object.entries(counts).map(([name, n]) => `${name} ${thousands(n)}`);
  return parts.join(", ") || "unknown";
}

function isHalf(precision: string | null): boolean {
  return precision === "FP16" || precision === "BF16";
}

/** The node change's mark on the viewed side's graph ("INT8" on the twin, "→ INT8" on the original). */
function nodeMark(change: NodeChange, viewed: Comparison["viewed"]): ChangeMark | undefined {
  const node = viewed === "after" ? change.index : change.before;
  if (node === null) {
    return undefined;
  }
  const arrow = viewed === "before" ? "→ " : "";
  const precision = change.precision ?? "";
  const kind: ChangeMark["kind"] = change.kind === "precision" ? (isHalf(change.precision) ? "half" : "quantized")
    : change.kind;
  const badge = { precision: `${arrow}${precision.replace(" weights", " w")}`, kept: "FP32", rewritten: "rewritten",
    removed: "removed", added: "new" }[change.kind];
  return { graph: change.graph, node, kind, badge, detail: change.detail };
}

/** The marks on the viewed model's nodes: each changed node once (a node change before a declaration's). */
export function compareMarks(result: Comparison): ChangeMark[] {
  const marks = new Map<string, ChangeMark>();
  for (const change of result.nodes) {
    const mark = nodeMark(change, result.viewed);
    if (mark && !marks.has(`${mark.graph}:${mark.node}`)) {
      marks.set(`${mark.graph}:${mark.node}`, mark);
    }
  }
  for (const d of result.declarations) {
    const node = result.viewed === "after" ? d.node : d.nodeBefore;
    if (node !== null && d.change !== "added" && !marks.has(`${d.graph}:${node}`)) {
      marks.set(`${d.graph}:${node}`, { graph: d.graph, node, kind: "declaration", badge: "declared",
        detail: `${d.where.replace("_", " ")} '${d.tensor}': ${d.before ?? "not declared"} → ${d.after ?? "not declared"}` });
    }
  }
  return [...marks.values()];
}

/** The section's rows in the order they are rendered (a row's button carries its index here). */
export function compareRows(result: Comparison): CompareRow[] {
  const rows: CompareRow[] = [];
  const after = result.viewed === "after";
  for (const [kind] of NODE_SECTIONS) {
    for (const c of result.nodes.filter((n) => n.kind === kind).slice(0, MAX_ROWS)) {
      rows.push({ graph: c.graph, node: after ? c.index : c.before, otherNode: after ? c.before : c.index,
        label: `${c.op} '${c.name}'` });
    }
  }
  for (const [change] of DECLARATION_SECTIONS) {
    for (const d of result.declarations.filter((x) => x.change === change).slice(0, MAX_ROWS)) {
      rows.push({ graph: d.graph, node: after ? d.node : d.nodeBefore, otherNode: after ? d.nodeBefore : d.node,
        label: `${d.where.replace("_", " ")} '${d.tensor}'` });
    }
  }
  return rows;
}

function opsText(ops: Comparison["ops"]): string {
  const moved = ops.slice(0, 6).map(([op, before, after]) =>
    `${after > before ? "+" : "−"}${thousands(Math.abs(after - before))} ${op}`);
  const more = ops.length - moved.length;
  return moved.length ? ` (${moved.join(", ")}${more > 0 ? `, ${count(more, "more op type")}` : ""})` : "";
}

function rowButton(row: CompareRow, index: number, other: string): string {
  return row.node !== null
    ? `<button class="link change-link" data-action="revealChange" data-index="${index}" ` +
      `title="Select it in the graph">${escapeHtml(row.label)}</button>`
    : `<span class="change-name">${escapeHtml(row.label)}</span> <button class="secondary change-other" ` +
      `data-action="revealInOther" data-index="${index}" title="Open ${escapeHtml(other)} with this node selected">` +
      `Show in ${escapeHtml(other)}</button>`;
}

function listSection(title: string, total: number, items: string[], command: string): string {
  if (!total) {
    return "";
  }
  const more = total > items.length ? `<li class="more">… and ${thousands(total - items.length)} more: ` +
    `<code>${escapeHtml(command)}</code> lists them all</li>` : "";
  return `<details class="compare-kind"><summary>${escapeHtml(title)} (${thousands(total)})</summary>` +
    `<ul>${items.join("")}${more}</ul></details>`;
}

/** The section of the model view that shows a comparison: the numbers first, then one list per kind of change. */
export function renderCompare(shown: CompareShown, file: string): string {
  const head = `<div class="section-head"><h2 id="compare-title">Compared with ${escapeHtml(shown.other)}</h2>` +
    `<button class="secondary" data-action="stopCompare">Stop comparing</button></div>`;
  const wrap = (body: string) => `<section id="compare" class="compare" aria-labelledby="compare-title">${head}${body}</section>`;
  if (shown.error) {
    return wrap(`<p class="failure" role="alert">${escapeHtml(shown.error)}</p>`);
  }
  const result = shown.result;
  if (!result) {
    return wrap(`<p class="busy" role="status">Comparing…</p>`);
  }
  const [before, after] = [result.before, result.after];
  const role = result.viewed === "after"
    ? `This model is the twin of ${escapeHtml(shown.other)}` : `This model is the original of ${escapeHtml(shown.other)}`;
  const direction = `<p class="compare-direction">${role} (${escapeHtml(result.why)}); what changed from the original to ` +
    `the twin:</p>`;
  if (result.identical) {
    return wrap(`${direction}<p class="clean">No node, declaration, operator count or weight type differs.</p>`);
  }
  const retyped = Object.entries(result.weightsRetyped).map(([types, n]) =>
    `<dt>weights retyped</dt><dd>${escapeHtml(count(n, "initializer"))} ${escapeHtml(types)}</dd>`).join("");
  const summary = `<dl class="compare-summary">` +
    `<dt>nodes</dt><dd>${thousands(before.nodes)} → ${thousands(after.nodes)}${escapeHtml(opsText(result.ops))}</dd>` +
    `<dt>weights</dt><dd>${size(before.weightBytes)} → ${size(after.weightBytes)}</dd>` +
    `<dt>precision</dt><dd>${escapeHtml(precisionText(before.precision))} → ${escapeHtml(precisionText(after.precision))}</dd>` +
    `${retyped}</dl>`;
  const [original, twin] = result.viewed === "after" ? [shown.other, file] : [file, shown.other];
  const command = `onnx-lint compare ${original} ${twin} --limit 0`;
  const rows = compareRows(result);
  let at = 0;
  const sections: string[] = [];
  for (const [kind, title] of NODE_SECTIONS) {
    const listed = result.nodes.filter((n) => n.kind === kind).slice(0, MAX_ROWS);
    const items = listed.map((c) => `<li class="change change-${kind}">${rowButton(rows[at], at++, shown.other)} ` +
      `<span class="change-detail">${escapeHtml(c.detail)}</span></li>`);
    sections.push(listSection(title, result.counts[kind] ?? 0, items, command));
  }
  for (const [change, title] of DECLARATION_SECTIONS) {
    const listed = result.declarations.filter((d) => d.change === change).slice(0, MAX_ROWS);
    const items = listed.map((d) => `<li class="change declaration-${change}">${rowButton(rows[at], at++, shown.other)}: ` +
      `<span class="change-detail">${escapeHtml(d.before ?? "not declared")} → ${escapeHtml(d.after ?? "not declared")}</span></li>`);
    sections.push(listSection(title, result.counts[`declarations.${change}`] ?? 0, items, command));
  }
  return wrap(`${direction}${summary}${sections.join("")}`);
}

/** The graph's legend while a comparison is shown: one swatch per kind of mark. */
export function compareLegend(): string {
  const kinds: [ChangeMark["kind"], string][] = [["quantized", "quantized"], ["half", "FP16/BF16"], ["kept", "kept FP32"],
    ["rewritten", "rewritten"], ["removed", "removed (original only)"], ["added", "added"], ["declaration", "declaration changed"]];
  return `<p id="graph-compare-legend" class="legend compare-legend" hidden><strong>Compared</strong>` +
    kinds.map(([kind, label]) => `<span class="step"><span class="swatch change-${kind}" aria-hidden="true"></span>${label}</span>`)
      .join("") + `</p>`;
}
