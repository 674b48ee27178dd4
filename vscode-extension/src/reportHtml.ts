// Pure logic (no `vscode` import): the quantize report (the server's `report` JSON) as HTML.
// The report grows (per-output FP32 scale, relative error, ...): every field it has is shown,
// known ones first and in words, unknown ones by their own names.
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

/** The whole report: where it went, the accuracy table, then every other field as a definition list. */
export function renderReport(report: Report, warnings: readonly string[] = []): string {
  const outputs = Array.isArray(report.outputs) ? (report.outputs as Record<string, unknown>[]) : [];
  const shown = new Set(["outputs", "warnings", "output", "model"]);
  const facts = Object.entries(report).filter(([k]) => !shown.has(k))
    .map(([k, v]) => `<dt>${escapeHtml(words(k))}</dt><dd>${factHtml(v)}</dd>`).join("");
  const allWarnings = [...new Set([...warnings, ...(Array.isArray(report.warnings) ? report.warnings.map(String) : [])])];
  return `<section class="quantize-report" aria-labelledby="quantize-title">
    <h2 id="quantize-title" tabindex="-1" data-autofocus>Quantized INT8+FP16</h2>
    <p>Wrote <code>${escapeHtml(String(report.output ?? ""))}</code> (opened beside this view).</p>
    ${outputs.length ? outputsTable(outputs) : "<p>No outputs were compared.</p>"}
    ${allWarnings.length ? `<ul class="warnings">${allWarnings.map((w) => `<li>${escapeHtml(w)}</li>`).join("")}</ul>` : ""}
    <dl class="facts">${facts}</dl>
  </section>`;
}
