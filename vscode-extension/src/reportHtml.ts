// Pure logic (no `vscode` import): the quantize report (the server's `report` JSON) as HTML.
// The report grows (per-output FP32 scale, relative error, ...): every field it has is shown,
// known ones first and in words, unknown ones by their own names. The target runtime, the per-node
// sensitivity, the nodes kept in FP32 and the accuracy/coverage frontier have their own sections.
import { escapeHtml } from "./html";

export type Report = Record<string, unknown>;

const COLUMN_TITLES: Record<string, string> = {
  name: "output",
  shape: "shape",
  cosine_similarity: "cosine similarity",
  cosine: "cosine similarity",
  relative_error: "relative error",
  max_abs_error: "max abs error",
  fp32_scale: "FP32 scale",
};
const COLUMN_ORDER = Object.keys(COLUMN_TITLES);

function words(key: string): string {
  return COLUMN_TITLES[key] ?? key.replace(/_/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

export function formatValue(value: unknown): string {
  if (value === null || value === undefined) {
    return "—";
  }
  if (typeof value === "number") {
    return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(6)));
  }
  if (Array.isArray(value)) {
    if (value.length === 0) {
      return "none";
    }
    return value.every((v) => typeof v === "number" || typeof v === "string") ? value.join(", ")
      : value.map((v) => formatValue(v)).join(" | ");
  }
  if (typeof value === "object") {
    return Object.entries(value as Record<string, unknown>).map(([k, v]) => `${words(k)}: ${formatValue(v)}`).join("; ");
  }
  return String(value);
}

/** One row per output, one column per field any output has (known fields in a fixed order). */
export function outputsTable(outputs: Record<string, unknown>[]): string {
  const keys: string[] = [];
  for (const row of outputs) {
    for (const key of Object.keys(row)) {
      if (!keys.includes(key)) {
        keys.push(key);
      }
    }
  }
  const rank = (k: string) => (COLUMN_ORDER.includes(k) ? COLUMN_ORDER.indexOf(k) : COLUMN_ORDER.length);
  keys.sort((a, b) => rank(a) - rank(b));
  const head = keys.map((k) => `<th${k === "name" || k === "shape" ? "" : " class=\"number\""}>${escapeHtml(words(k))}</th>`).join("");
  const cell = (k: string, value: unknown) => {
    if (k === "name") {
      return `<td><code>${escapeHtml(formatValue(value))}</code></td>`;
    }
    if (k === "shape" && Array.isArray(value)) {
      return `<td>${escapeHtml(value.length ? value.join(" × ") : "scalar")}</td>`;
    }
    return `<td class="number">${escapeHtml(formatValue(value))}</td>`;
  };
  const body = outputs.map((row) => "<tr>" + keys.map((k) => cell(k, row[k])).join("") + "</tr>").join("");
  return `<table class="quantize-outputs"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** A finding-like record (a fix the report lists) in words: "OL001: Declare the shape … (where)". */
function findingText(record: Record<string, unknown>): string | undefined {
  const fix = record.fix as Record<string, unknown> | undefined;
  const what = (fix && typeof fix.title === "string" ? fix.title : undefined) ??
    (typeof record.message === "string" ? record.message : undefined);
  if (typeof record.code !== "string" || what === undefined) {
    return undefined;
  }
  const location = record.location as Record<string, unknown> | undefined;
  const where = location && typeof location.path === "string" ? ` (${location.path})` : "";
  return `${record.code}: ${what}${where}`;
}

/** A value of the report as HTML: lists of records become bulleted lines, never one long field dump. */
function factHtml(value: unknown): string {
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "object" && v !== null)) {
    const items = (value as Record<string, unknown>[]).map((v) => findingText(v) ?? formatValue(v));
    return `<ul class="report-list">${items.map((i) => `<li>${escapeHtml(i)}</li>`).join("")}</ul>`;
  }
  return escapeHtml(formatValue(value));
}

const TARGETS: Record<string, string> = { onnxruntime: "ONNX Runtime", tensorrt: "TensorRT" };

/** How many of the most costly INT8 nodes the sensitivity table lists (the JSON report has every one). */
export const SENSITIVITY_ROWS = 10;

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined;
}

function records(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter((v): v is Record<string, unknown> => record(v) !== undefined) : [];
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** "34.2%" for 0.342; "—" when the server sent no number. */
export function percent(value: unknown): string {
  const n = num(value);
  return n === undefined ? "—" : `${(n * 100).toFixed(1)}%`;
}

/** A cosine similarity as the CLI prints it: six decimals. */
export function cosineText(value: unknown): string {
  const n = num(value);
  return n === undefined ? "—" : n.toFixed(6);
}

function count(value: unknown): string {
  const n = num(value);
  return n === undefined ? "—" : n.toLocaleString("en");
}

/** The runtime the model was quantized for, in words ("TensorRT"); nothing when the report does not say. */
function targetHtml(report: Report): string {
  if (typeof report.target !== "string" || !report.target) {
    return "";
  }
  const name = TARGETS[report.target] ?? report.target;
  return `<p class="quantize-target">Target runtime: <strong>${escapeHtml(name)}</strong></p>`;
}

/** The INT8 nodes that cost the most accuracy: each alone in INT8, its worst-output cosine and share of the error. */
export function sensitivityHtml(value: unknown): string {
  const found = record(value);
  if (!found) {
    return "";
  }
  const nodes = records(found.nodes);
  const samples = num(found.samples);
  const notMeasured = Array.isArray(found.not_measured) ? found.not_measured.map(String) : [];
  const intro = `Each INT8 node measured alone in INT8 (the rest in FP32)${samples === undefined ? ""
    : ` on ${samples} sample${samples === 1 ? "" : "s"}`}: the worst output's cosine similarity with FP32, and the node's ` +
    "share of the summed error. Most costly first" +
    (nodes.length > SENSITIVITY_ROWS ? `: the first ${SENSITIVITY_ROWS} of ${nodes.length}.` : ".") +
    (num(found.all_int8_cosine) === undefined ? "" : ` Every INT8 node at once: cosine ${cosineText(found.all_int8_cosine)}.`);
  const rows = nodes.slice(0, SENSITIVITY_ROWS).map((n) => `<tr><td><code>${escapeHtml(String(n.node ?? ""))}</code></td>` +
    `<td>${escapeHtml(String(n.op_type ?? ""))}</td><td class="number">${cosineText(n.cosine_alone)}</td>` +
    `<td class="number">${percent(n.share)}</td><td class="number">${count(n.macs)}</td></tr>`).join("");
  const table = nodes.length === 0 ? "<p>No INT8 node was measured.</p>" : `<table class="sensitivity"><thead><tr>` +
    `<th>node</th><th>op</th><th class="number">cosine alone</th><th class="number">share of error</th>` +
    `<th class="number">MACs</th></tr></thead><tbody>${rows}</tbody></table>`;
  const missing = notMeasured.length === 0 ? "" : `<p class="not-measured">Not measured: ${notMeasured.length} INT8 ` +
    `node${notMeasured.length === 1 ? "" : "s"}${typeof found.stopped === "string" && found.stopped
      ? ` (${escapeHtml(found.stopped)})` : ""}: ${escapeHtml(notMeasured.slice(0, 5).join(", "))}` +
    `${notMeasured.length > 5 ? ", …" : ""}</p>`;
  return `<section class="sensitivity" aria-labelledby="sensitivity-title"><h3 id="sensitivity-title">Sensitivity</h3>` +
    `<p class="hint">${escapeHtml(intro)}</p>${table}${missing}</section>`;
}

/** The nodes kept in FP32 (outputs beyond what FP16 holds), one line each. */
function keptInFp32Html(value: unknown): string {
  const kept = record(value);
  const nodes = records(kept?.nodes);
  if (!kept || nodes.length === 0) {
    return "";
  }
  const items = nodes.map((n) => `<li><code>${escapeHtml(String(n.node ?? ""))}</code> ${escapeHtml(String(n.op_type ?? ""))}` +
    `${num(n.max_abs) === undefined ? "" : `, max |x| ${escapeHtml(formatValue(n.max_abs))}`}</li>`).join("");
  const reason = typeof kept.reason === "string" ? `<p>${escapeHtml(kept.reason)}</p>` : "";
  return `<dt>kept in FP32</dt><dd>${reason}<ul class="report-list">${items}</ul></dd>`;
}

/**
 * The server's plot of the accuracy/coverage frontier (onnx_lint/quantization/frontier_plot.py), as it is, or
 * undefined when it does not look like one: it must be an `<svg>` element and hold no script, no event handler
 * attribute, no `javascript:` link and no foreign HTML. The server escapes every text in it; this is a second
 * fence, not the first.
 */
export function safeSvg(svg: string | null | undefined): string | undefined {
  if (typeof svg !== "string") {
    return undefined;
  }
  const text = svg.trim();
  if (!/^<svg[\s>]/.test(text) || !/<\/svg>$/.test(text)) {
    return undefined;
  }
  if (/<script|<foreignobject|<iframe|javascript:|\son[a-z]+\s*=/i.test(text)) {
    return undefined;
  }
  return text;
}

/** The accuracy target's search: the plot (when the server drew one) and its points as a table. */
export function frontierHtml(fallback: unknown, svg?: string | null): string {
  const points = records(record(fallback)?.frontier);
  const plot = safeSvg(svg);
  if (points.length === 0 && !plot) {
    return "";
  }
  const rows = points.map((p) => `<tr><td>${escapeHtml(String(p.build ?? ""))}</td><td class="number">` +
    `${percent(p.int8_mac_share)}</td><td class="number">${cosineText(p.cosine)}</td><td>${p.met ? "yes" : "no"}</td></tr>`).join("");
  const table = points.length === 0 ? "" : `<table class="frontier-points"><thead><tr><th>build</th>` +
    `<th class="number">INT8 share of MACs</th><th class="number">worst-output cosine</th><th>meets the target</th>` +
    `</tr></thead><tbody>${rows}</tbody></table>`;
  return `<section class="quantize-frontier" aria-labelledby="frontier-heading"><h3 id="frontier-heading">Accuracy against INT8 coverage</h3>` +
    (plot ? `<figure class="frontier-plot">${plot}<figcaption class="hint">Each build the accuracy target tried: ` +
      "filled points meet it, the dashed line is the target.</figcaption></figure>" : "") +
    (table ? (plot ? `<details><summary>The same builds as a table</summary>${table}</details>` : table) : "") +
    `</section>`;
}

/** The report's fields the facts list shows as they are; those rendered in their own sections go, and so do
 * the raw per-node dumps (the fallback's frontier, the record's sensitivity map). */
function factEntries(report: Report): [string, unknown][] {
  const shown = new Set(["outputs", "warnings", "output", "model", "target", "sensitivity", "kept_in_fp32"]);
  return Object.entries(report).filter(([k]) => !shown.has(k)).flatMap(([k, v]): [string, unknown][] => {
    const object = record(v);
    if (object && ((k === "fallback" && "frontier" in object) || (k === "provenance" && "sensitivity" in object))) {
      const { [k === "fallback" ? "frontier" : "sensitivity"]: _dropped, ...rest } = object;
      return [[k, rest]];
    }
    return [[k, v]];
  });
}

/** The whole report: where it went, the target, the accuracy table, the sensitivity, the frontier, then every
 * other field as a definition list. */
export function renderReport(report: Report, warnings: readonly string[] = [], frontierSvg?: string | null): string {
  const outputs = Array.isArray(report.outputs) ? (report.outputs as Record<string, unknown>[]) : [];
  const facts = factEntries(report).map(([k, v]) => `<dt>${escapeHtml(words(k))}</dt><dd>${factHtml(v)}</dd>`).join("");
  const allWarnings = [...new Set([...warnings, ...(Array.isArray(report.warnings) ? report.warnings.map(String) : [])])];
  return `<section class="quantize-report" aria-labelledby="quantize-title">
    <h2 id="quantize-title" tabindex="-1" data-autofocus>Quantized INT8+FP16</h2>
    <p>Wrote <code>${escapeHtml(String(report.output ?? ""))}</code> (opened beside this view).</p>
    ${targetHtml(report)}
    ${outputs.length ? outputsTable(outputs) : "<p>No outputs were compared.</p>"}
    ${allWarnings.length ? `<ul class="warnings">${allWarnings.map((w) => `<li>${escapeHtml(w)}</li>`).join("")}</ul>` : ""}
    ${sensitivityHtml(report.sensitivity)}
    ${frontierHtml(report.fallback, frontierSvg)}
    <dl class="facts">${facts}${keptInFp32Html(report.kept_in_fp32)}</dl>
  </section>`;
}
