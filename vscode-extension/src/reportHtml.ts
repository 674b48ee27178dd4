// Pure logic (no `vscode` import): the quantize report (the server's `report`, the JSON of `--report`) as a page
// a new user reads top-down: the verdict first and the warnings that explain the accuracy, then the accuracy per
// output, the INT8 coverage with the nodes kept out of INT8 and why, the sensitivity, the frontier, how the model
// was made, and the raw JSON behind a disclosure (never dumped on the page).
import { escapeHtml } from "./html";
import { count as plural, thousands } from "./words";

export type Report = Record<string, unknown>;

const TARGETS: Record<string, string> = { onnxruntime: "ONNX Runtime", tensorrt: "TensorRT" };

/** Where a user sets the accuracy target: the editor's setting, and the command line's flag. */
const TARGET_SETTING = "onnxLint.quantize.minCosine";

/** How many of the most costly INT8 nodes the sensitivity table lists (the JSON report has every one). */
export const SENSITIVITY_ROWS = 10;

/** How many node names one line of "kept out of INT8" lists before "and N more". */
export const KEPT_NAMES = 12;

/** The raw JSON shown on the page is cut here (a big model's report lists every node). */
export const RAW_JSON_LIMIT = 200_000;

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined;
}

function records(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter((v): v is Record<string, unknown> => record(v) !== undefined) : [];
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value ? value : undefined;
}

export function formatValue(value: unknown): string {
  if (value === null || value === undefined) {
    return "—";
  }
  if (typeof value === "number") {
    return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(6)));
  }
  if (Array.isArray(value)) {
    return value.length === 0 ? "none" : value.map((v) => formatValue(v)).join(", ");
  }
  if (typeof value === "object") {
    return Object.entries(value as Record<string, unknown>).map(([k, v]) => `${k.replace(/_/g, " ")}: ${formatValue(v)}`)
      .join("; ");
  }
  return String(value);
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
  return n === undefined ? "—" : thousands(n);
}

/** A number of multiply-accumulates as the CLI's summary writes it: 1.23M, 640. */
export function macsText(value: unknown): string {
  const n = num(value);
  if (n === undefined) {
    return "—";
  }
  for (const [unit, size] of [["G", 1e9], ["M", 1e6], ["k", 1e3]] as const) {
    if (n >= size) {
      return `${Number((n / size).toPrecision(3))}${unit}`;
    }
  }
  return String(n);
}

/** The runtime the model was quantized for, in words ("TensorRT"); undefined when the report does not say. */
function runtimeName(report: Report): string | undefined {
  const target = str(report.target);
  return target === undefined ? undefined : TARGETS[target] ?? target;
}

/** The lowest cosine over the outputs; NaN when an output has none (its values became inf/NaN). */
function worstCosine(outputs: Record<string, unknown>[]): number | undefined {
  if (outputs.length === 0) {
    return undefined;
  }
  return Math.min(...outputs.map((o) => num(o.cosine_similarity) ?? num(o.cosine) ?? Number.NaN));
}

/** The accuracy target the run had: the report's own field, else the fallback search's (older reports). */
export function accuracyTarget(report: Report): number | undefined {
  return num(report.min_cosine) ?? num(record(report.fallback)?.target);
}

export type VerdictKind = "met" | "missed" | "unchecked";

/**
 * Did the quantized model meet its target, in one sentence: the runtime, the worst output's cosine, the target
 * and the samples it was measured on. Without a target the CLI checks only that the outputs stay finite (a model
 * whose outputs become inf/NaN is refused, so never reported), and the sentence says that no target was set.
 */
export function verdict(report: Report): { kind: VerdictKind; text: string } {
  const runtime = runtimeName(report);
  const forRuntime = runtime ? ` for ${runtime}` : "";
  const worst = worstCosine(records(report.outputs));
  const samples = num(record(report.calibration)?.validation_samples);
  const onSamples = samples === undefined ? "" : ` on ${plural(samples, "sample")}`;
  const cosine = worst === undefined ? "" : Number.isNaN(worst) ? "an output has no cosine (inf/NaN values)"
    : `the worst output's cosine similarity with FP32 is ${cosineText(worst)}`;
  const goal = accuracyTarget(report);
  const fallback = record(report.fallback);
  const moved = records(fallback?.steps).length > 0 ? movedByTarget(report) : 0;
  const afterMoving = moved > 0 ? `, after moving ${plural(moved, "node")} to FP16` : "";
  const fp16Only = report.fp16_only === true ? " Nothing could be quantized to INT8: the written model is FP16 only." : "";
  if (report.written === false) {
    const ceiling = num(fallback?.ceiling);
    if (goal !== undefined && ceiling !== undefined && ceiling < goal) {
      return { kind: "missed", text: `Not written: no INT8 placement can meet the accuracy target${forRuntime} ` +
        `(cosine ≥ ${goal}): even with every node in FP16 the worst output's cosine is ${cosineText(ceiling)}${onSamples}.` };
    }
    return { kind: "missed", text: `Not written: the quantized model misses the accuracy target${forRuntime}` +
      (goal === undefined ? "" : ` (cosine ≥ ${goal})`) + (cosine ? `: ${cosine}${onSamples}` : "") +
      (moved > 0 ? `, even after moving ${plural(moved, "node")} to FP16` : "") + "." };
  }
  if (goal !== undefined) {
    return { kind: "met", text: `Meets the accuracy target${forRuntime} (cosine ≥ ${goal})` +
      (cosine ? `: ${cosine}${onSamples}${afterMoving}.` : ".") + fp16Only };
  }
  return { kind: "unchecked", text: `Quantized${forRuntime} with no accuracy target set (${TARGET_SETTING}, ` +
    `--min-cosine on the command line)` + (cosine ? `: ${cosine}${onSamples}.` : ".") + fp16Only };
}

/** The nodes the accuracy target moved to FP16 (the fallback's "accuracy: --min-cosine" placement). */
function movedByTarget(report: Report): number {
  return records(report.kept_in_float).filter((k) => String(k.reason ?? "").startsWith("accuracy"))
    .reduce((total, k) => total + (Array.isArray(k.nodes) ? k.nodes.length : 0), 0);
}

function verdictHtml(report: Report): string {
  const { kind, text } = verdict(report);
  // A missed target is said in the error colour (`failure`: the theme's, mixed toward the foreground for 4.5:1); the
  // class `verdict-<kind>` is the stylesheet's hook for the others, and the mark says it without colour.
  const mark = { met: "✓", missed: "✗", unchecked: "○" }[kind];
  return `<p id="quantize-verdict" class="verdict verdict-${kind}${kind === "missed" ? " failure" : ""}" ` +
    `data-verdict="${kind}"><span class="verdict-mark" aria-hidden="true">${mark}</span> ${escapeHtml(text)}</p>`;
}

/** The warnings, first the ones the caller passed (the server's result), each once, with what kind they are. */
function warningsHtml(report: Report, warnings: readonly string[]): string {
  const all = [...new Set([...warnings, ...(Array.isArray(report.warnings) ? report.warnings.map(String) : [])])];
  if (all.length === 0) {
    return "";
  }
  const item = (w: string) => {
    const [, label, rest] = /^(WARNING|NOTICE): ([\s\S]*)$/.exec(w) ?? [undefined, "WARNING", w];
    return `<li><strong>${label === "NOTICE" ? "Notice" : "Warning"}:</strong> ${escapeHtml(rest)}</li>`;
  };
  return `<ul class="warnings report-warnings" aria-label="Warnings">${all.map(item).join("")}</ul>`;
}

const OUTPUT_COLUMNS: { key: string; title: string; text: (v: unknown) => string; number: boolean }[] = [
  { key: "name", title: "output", text: (v) => String(v ?? ""), number: false },
  { key: "shape", title: "shape", text: (v) => (Array.isArray(v) ? (v.length ? v.join(" × ") : "scalar") : formatValue(v)),
    number: false },
  { key: "cosine_similarity", title: "cosine similarity", text: cosineText, number: true },
  { key: "top1_agreement", title: "top-1 agreement", text: percent, number: true },
  { key: "top5_agreement", title: "top-5 agreement", text: percent, number: true },
  { key: "max_abs_error", title: "max abs error", text: formatValue, number: true },
  { key: "relative_error", title: "relative error", text: (v) => (num(v) === undefined ? "—" : String(Number(num(v)!.toPrecision(3)))),
    number: true },
  { key: "fp32_max_abs", title: "FP32 max |x|", text: (v) => (num(v) === undefined ? "—" : String(Number(num(v)!.toPrecision(4)))),
    number: true },
];

/**
 * One row per output: cosine, top-1/top-5 agreement (outputs shaped like class scores; the columns appear only
 * when an output has them), max abs and relative error, the FP32 scale. A field a newer report adds gets a column
 * of its own name; `non_finite` only when an output has such values.
 */
export function outputsTable(outputs: Record<string, unknown>[]): string {
  const present = (key: string) => outputs.some((o) => o[key] !== undefined && o[key] !== null);
  const known = new Set(OUTPUT_COLUMNS.map((c) => c.key));
  const always = new Set(["name", "shape", "cosine_similarity", "max_abs_error"]);
  const columns = OUTPUT_COLUMNS.filter((c) => always.has(c.key) || present(c.key));
  for (const o of outputs) {
    for (const key of Object.keys(o)) {
      const useful = key !== "non_finite" || outputs.some((x) => num(x.non_finite) !== 0);
      if (!known.has(key) && useful && !columns.some((c) => c.key === key)) {
        columns.push({ key, title: key.replace(/_/g, " "), text: formatValue, number: true });
      }
    }
  }
  const head = columns.map((c) => `<th${c.number ? " class=\"number\"" : ""}>${escapeHtml(c.title)}</th>`).join("");
  const body = outputs.map((o) => "<tr>" + columns.map((c) => c.key === "name"
    ? `<td><code>${escapeHtml(c.text(o.name))}</code></td>`
    : `<td${c.number ? " class=\"number\"" : ""}>${escapeHtml(c.text(o[c.key]))}</td>`).join("") + "</tr>").join("");
  return `<table class="quantize-outputs"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** Where the figures come from: how many samples, out of which calibration data; what the figures mean. */
function samplesText(report: Report, topK: boolean): string {
  const calibration = record(report.calibration) ?? {};
  const compared = num(calibration.validation_samples);
  const total = num(calibration.samples);
  const source = str(calibration.source);
  const from = calibration.random === true ? ", random inputs" : source === undefined ? "" : `, from ${source}`;
  if (compared === undefined) {
    return "Each output of the quantized model against the FP32 model's.";
  }
  // The validation samples are the first of the calibration samples, not held out: say so.
  const of = total === undefined ? "" : compared === total ? ` (all ${plural(total, "calibration sample")}${from})`
    : ` (the first ${compared} of the ${plural(total, "calibration sample")}${from})`;
  return `Each output of the quantized model against the FP32 model's on the same ${plural(compared, "sample")}${of}. ` +
    "A cosine similarity of 1 means the same values" + (topK ? "; top-1 agreement is the share of rows whose " +
    "highest class stays the same, top-5 the share whose FP32 class stays among the five highest." : ".");
}

function accuracyHtml(report: Report): string {
  const outputs = records(report.outputs);
  const table = outputs.length ? outputsTable(outputs) : "<p>No outputs were compared.</p>";
  const hint = samplesText(report, outputs.some((o) => num(o.top1_agreement) !== undefined));
  return `<section class="quantize-accuracy" aria-labelledby="accuracy-title"><h3 id="accuracy-title">Accuracy per output</h3>` +
    `<p class="hint samples">${escapeHtml(hint)}</p>${table}</section>`;
}

interface KeptGroup {
  precision: "FP16" | "FP32";
  reason: string;
  nodes: { node: string; opType: string; macs?: number; maxAbs?: number; constant?: string }[];
}

/** The accuracy target's placement in words ("accuracy: --min-cosine 0.995" is the pipeline's shorthand). */
function reasonText(reason: string): string {
  const target = /^accuracy: --min-cosine (\S+)$/.exec(reason);
  return target ? `the accuracy target (cosine ≥ ${target[1]}) moved it to FP16: its INT8 rounding cost the most ` +
    "accuracy for its multiply-accumulates" : reason;
}

/**
 * The nodes that stayed out of INT8, grouped by precision and reason: the compute nodes coverage lists in FP16
 * (with the reason placement gave), the other nodes placement kept in float, and the nodes kept in FP32 because
 * FP16 cannot hold their values.
 */
export function keptGroups(report: Report): KeptGroup[] {
  const fp32 = record(report.kept_in_fp32);
  const wide = records(fp32?.nodes);
  const constants = records(fp32?.constants);
  const fp32Names = new Set([...wide, ...constants].map((n) => String(n.node ?? "")));
  const groups = new Map<string, KeptGroup>();
  const listed = new Set<string>();
  const add = (precision: KeptGroup["precision"], reason: string, entry: KeptGroup["nodes"][number]) => {
    const key = `${precision}\u0000${reason}`;
    const group = groups.get(key) ?? { precision, reason, nodes: [] };
    groups.set(key, group);
    group.nodes.push(entry);
    listed.add(entry.node);
  };
  for (const n of records(record(report.coverage)?.fp16_compute_nodes)) {
    const name = String(n.node ?? "");
    if (!fp32Names.has(name)) {
      add("FP16", reasonText(String(n.reason ?? "")), { node: name, opType: String(n.op_type ?? ""), macs: num(n.macs) });
    }
  }
  for (const kept of records(report.kept_in_float)) {
    for (const name of Array.isArray(kept.nodes) ? kept.nodes.map(String) : []) {
      if (!listed.has(name) && !fp32Names.has(name)) {
        add("FP16", reasonText(String(kept.reason ?? "")), { node: name, opType: String(kept.op_type ?? "") });
      }
    }
  }
  const fp32Reason = str(fp32?.reason) ?? "FP16 cannot hold its values";
  for (const n of wide) {
    add("FP32", fp32Reason, { node: String(n.node ?? ""), opType: String(n.op_type ?? ""), maxAbs: num(n.max_abs) });
  }
  for (const n of constants) {
    add("FP32", fp32Reason, { node: String(n.node ?? ""), opType: String(n.op_type ?? ""), maxAbs: num(n.max_abs),
      constant: str(n.constant) });
  }
  const macs = (g: KeptGroup) => g.nodes.reduce((sum, n) => sum + (n.macs ?? 0), 0);
  return [...groups.values()].sort((a, b) => (a.precision === b.precision ? macs(b) - macs(a)
    : a.precision === "FP16" ? -1 : 1));
}

function keptNodeHtml(n: KeptGroup["nodes"][number], totalMacs: number | undefined): string {
  const facts = [n.opType,
    n.macs !== undefined && totalMacs ? `${percent(n.macs / totalMacs)} of the MACs` : undefined,
    n.maxAbs !== undefined ? `max |x| ${formatValue(n.maxAbs)}` : undefined,
    n.constant ? `reads ${n.constant}` : undefined].filter(Boolean).join(", ");
  return `<code>${escapeHtml(n.node)}</code>${facts ? ` (${escapeHtml(facts)})` : ""}`;
}

function keptHtml(report: Report): string {
  const groups = keptGroups(report);
  if (groups.length === 0) {
    return `<p class="kept-none">Every node INT8 could speed up is INT8.</p>`;
  }
  const totalMacs = num(record(report.coverage)?.macs);
  const items = groups.map((g) => {
    const names = g.nodes.slice(0, KEPT_NAMES).map((n) => keptNodeHtml(n, totalMacs)).join(", ") +
      (g.nodes.length > KEPT_NAMES ? ` and ${g.nodes.length - KEPT_NAMES} more` : "");
    return `<li class="kept-${g.precision.toLowerCase()}"><strong>${g.precision}</strong>, ${plural(g.nodes.length, "node")}: ` +
      `${names}. <span class="why">Why: ${escapeHtml(g.reason)}</span></li>`;
  }).join("");
  return `<h4 id="kept-title">Kept out of INT8, and why</h4><ul class="kept-out report-list" aria-labelledby="kept-title">` +
    `${items}</ul>`;
}

/** How many nodes compute in INT8, FP16 and FP32, from the report's node counts and placements. */
export function precisionCounts(report: Report): { int8?: number; fp16?: number; fp32: number; qdq?: number; total?: number } {
  const nodes = record(report.nodes);
  const fp32 = record(report.kept_in_fp32);
  const fp32Count = new Set([...records(fp32?.nodes), ...records(fp32?.constants)].map((n) => String(n.node))).size;
  const total = num(nodes?.total);
  const int8 = num(nodes?.int8);
  const quantize = num(nodes?.QuantizeLinear);
  const dequantize = num(nodes?.DequantizeLinear);
  const qdq = quantize === undefined || dequantize === undefined ? undefined : quantize + dequantize;
  // Every other node of the written model computes in FP16 (with the Casts at float32 inputs and outputs).
  const fp16 = total === undefined || int8 === undefined || qdq === undefined ? undefined
    : Math.max(0, total - int8 - qdq - fp32Count);
  return { int8, fp16, fp32: fp32Count, qdq, total };
}

function coverageHtml(report: Report): string {
  const coverage = record(report.coverage);
  const counts = precisionCounts(report);
  const parts: string[] = [];
  if (coverage && num(coverage.macs)) {
    const shapes = Object.entries(record(coverage.shapes) ?? {}).map(([name, dims]) =>
      `${name} ${Array.isArray(dims) ? dims.join("×") : formatValue(dims)}`).join(", ");
    parts.push(`<p class="coverage-share"><strong>${percent(coverage.int8_mac_share)}</strong> of the ` +
      `${escapeHtml(macsText(coverage.macs))} multiply-accumulates run in INT8` +
      `${shapes ? ` (at the calibration shapes: ${escapeHtml(shapes)})` : ""}.</p>`);
    const byType = Object.entries(record(coverage.by_op_type) ?? {}).map(([op, c]) => [op, record(c) ?? {}] as const);
    if (byType.length) {
      parts.push(`<table class="coverage-ops"><thead><tr><th>op</th><th class="number">INT8 nodes</th>` +
        `<th class="number">INT8 share of its MACs</th></tr></thead><tbody>` + byType.map(([op, c]) =>
        `<tr><td>${escapeHtml(op)}</td><td class="number">${count(c.int8_nodes)} of ${count(c.nodes)}</td>` +
        `<td class="number">${percent(c.share)}</td></tr>`).join("") + "</tbody></table>");
    }
  }
  if (counts.total !== undefined) {
    const line = [`${count(counts.int8)} in INT8`, `${count(counts.fp16)} in FP16`, `${count(counts.fp32)} in FP32`]
      .join(", ");
    parts.push(`<p class="precision-counts">Nodes: ${line}` + (counts.qdq ? `, and ${count(counts.qdq)} ` +
      "QuantizeLinear/DequantizeLinear" : "") + ` (${plural(counts.total, "node")} in the quantized model).</p>`);
  }
  const scales = record(report.fp32_scales);
  if (scales) {
    const ops = Object.entries(record(scales.op_types) ?? {}).map(([op, n]) => `${formatValue(n)} ${op}`).join(", ");
    parts.push(`<p class="fp32-scales">INT8 with float32 scales around ${escapeHtml(ops)}: ` +
      `${escapeHtml(String(scales.reason ?? ""))}.</p>`);
  }
  if (parts.length === 0 && !record(report.nodes)) {
    return "";
  }
  return `<section class="quantize-coverage" aria-labelledby="coverage-title"><h3 id="coverage-title">INT8 coverage</h3>` +
    `${parts.join("")}${keptHtml(report)}</section>`;
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
  // The accuracy target moves the costliest nodes to FP16: the table says which of them the written model keeps.
  const moved = nodes.some((n) => n.int8 === false);
  const intro = `Each INT8 node measured alone in INT8 (the rest in FP32)${samples === undefined ? ""
    : ` on ${plural(samples, "sample")}`}: the worst output's cosine similarity with FP32, and the node's ` +
    "share of the summed error. Most costly first" +
    (nodes.length > SENSITIVITY_ROWS ? `: the first ${SENSITIVITY_ROWS} of ${nodes.length}.` : ".") +
    (num(found.all_int8_cosine) === undefined ? "" : ` Every INT8 node at once: cosine ${cosineText(found.all_int8_cosine)}.`);
  const rows = nodes.slice(0, SENSITIVITY_ROWS).map((n) => `<tr><td><code>${escapeHtml(String(n.node ?? ""))}</code></td>` +
    `<td>${escapeHtml(String(n.op_type ?? ""))}</td><td class="number">${cosineText(n.cosine_alone)}</td>` +
    `<td class="number">${percent(n.share)}</td><td class="number">${count(n.macs)}</td>` +
    (moved ? `<td>${n.int8 === false ? "FP16 (accuracy target)" : "INT8"}</td>` : "") + "</tr>").join("");
  const table = nodes.length === 0 ? "<p>No INT8 node was measured.</p>" : `<table class="sensitivity"><thead><tr>` +
    `<th>node</th><th>op</th><th class="number">cosine alone</th><th class="number">share of error</th>` +
    `<th class="number">MACs</th>${moved ? "<th>written as</th>" : ""}</tr></thead><tbody>${rows}</tbody></table>`;
  const missing = notMeasured.length === 0 ? "" : `<p class="not-measured">Not measured: ${notMeasured.length} INT8 ` +
    `node${notMeasured.length === 1 ? "" : "s"}${typeof found.stopped === "string" && found.stopped
      ? ` (${escapeHtml(found.stopped)})` : ""}: ${escapeHtml(notMeasured.slice(0, 5).join(", "))}` +
    `${notMeasured.length > 5 ? ", …" : ""}</p>`;
  return `<section class="sensitivity" aria-labelledby="sensitivity-title"><h3 id="sensitivity-title">Sensitivity</h3>` +
    `<p class="hint">${escapeHtml(intro)}</p>${table}${missing}</section>`;
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

/** A fix quantize applied in memory before it began, in words: "OL001: Declare the shape … (where)". */
function findingText(fix: Record<string, unknown>): string {
  const title = str(record(fix.fix)?.title) ?? str(fix.message) ?? formatValue(fix);
  const path = str(record(fix.location)?.path);
  return `${str(fix.code) ?? ""}${str(fix.code) ? ": " : ""}${title}${path ? ` (${path})` : ""}`;
}

/** The calibration in words: "8 samples from random inputs; ranges: auto, kept minmax (…)". */
function calibrationText(calibration: Record<string, unknown>): string {
  const samples = num(calibration.samples);
  const batch = num(calibration.batch);
  const source = calibration.random === true ? "random inputs" : str(calibration.source) ?? "?";
  const chosen = str(calibration.chosen);
  const candidates = Object.entries(record(calibration.candidates) ?? {})
    .map(([method, cosine]) => `${method} ${cosineText(cosine)}`).join(", ");
  const method = chosen ? `${str(calibration.method) ?? "auto"}, kept ${chosen}` +
    (candidates ? ` (first-pass worst cosine: ${candidates})` : "") : str(calibration.method) ?? "";
  return `${samples === undefined ? "" : plural(samples, "sample")}${batch ? ` (batch ${batch} each)` : ""} from ` +
    `${source}${method ? `; ranges: ${method}` : ""}`;
}

/** How the model was made, in words: source, calibration, fixes, opset, checks, where the Q/DQ run. */
function madeHtml(report: Report): string {
  const facts: [string, string][] = [];
  if (str(report.model)) {
    facts.push(["quantized from", `<code>${escapeHtml(String(report.model))}</code>`]);
  }
  const calibration = record(report.calibration);
  if (calibration) {
    facts.push(["calibration", escapeHtml(calibrationText(calibration))]);
  }
  const fixes = records(report.fixes);
  if (fixes.length) {
    facts.push(["fixed first, in memory", `<ul class="report-list">${fixes.map((f) =>
      `<li>${escapeHtml(findingText(f))}</li>`).join("")}</ul>`]);
  }
  const opset = record(report.opset);
  if (opset && num(opset.from) !== undefined && opset.from !== opset.to) {
    facts.push(["opset", `raised from ${count(opset.from)} to ${count(opset.to)}`]);
  }
  const validation = record(report.validation);
  if (validation && str(validation.checker)) {
    facts.push(["checks", escapeHtml(`onnx.checker ${validation.checker}; ONNX Runtime ${validation.runtime ?? "?"}` +
      ` at ${validation.optimization_level ?? "its default level"}; ${plural(num(validation.fp16_initializers) ?? 0,
        "FP16 initializer")}`)]);
  }
  if (str(report.target_runtime)) {
    facts.push(["runs on", escapeHtml(String(report.target_runtime))]);
  }
  if (facts.length === 0) {
    return "";
  }
  return `<section class="quantize-made" aria-labelledby="made-title"><h3 id="made-title">How it was made</h3>` +
    `<dl class="facts">${facts.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${v}</dd>`).join("")}</dl></section>`;
}

/** The report as the CLI's `--report` writes it, behind a disclosure: every field, also those the page leaves out. */
function rawJsonHtml(report: Report): string {
  const json = JSON.stringify(report, null, 2);
  const cut = json.length > RAW_JSON_LIMIT;
  return `<details class="raw-report"><summary>The whole report as JSON</summary>` +
    (cut ? `<p class="hint">The first ${thousands(RAW_JSON_LIMIT)} of ${thousands(json.length)} ` +
      "characters (onnx-lint quantize --report FILE writes it whole).</p>" : "") +
    `<pre class="report-json"><code>${escapeHtml(cut ? json.slice(0, RAW_JSON_LIMIT) : json)}</code></pre></details>`;
}

/** The whole report, read top-down: the verdict, the warnings, what was written, the accuracy per output, the INT8
 * coverage and the nodes kept out of it, the sensitivity, the frontier, how it was made, the raw JSON. */
export function renderReport(report: Report, warnings: readonly string[] = [], frontierSvg?: string | null): string {
  const written = report.written !== false;
  const output = `<code>${escapeHtml(String(report.output ?? ""))}</code>`;
  const runtime = runtimeName(report);
  return `<section class="quantize-report" aria-labelledby="quantize-title" aria-describedby="quantize-verdict">
    <h2 id="quantize-title" tabindex="-1" data-autofocus>${written ? "Quantized INT8+FP16" : "Quantize INT8+FP16: not written"}</h2>
    ${verdictHtml(report)}
    ${warningsHtml(report, warnings)}
    <p class="written">${written ? `Wrote ${output} (opened beside this view).` : `Nothing was written to ${output}.`}</p>
    ${runtime ? `<p class="quantize-target">Target runtime: <strong>${escapeHtml(runtime)}</strong></p>` : ""}
    ${accuracyHtml(report)}
    ${coverageHtml(report)}
    ${sensitivityHtml(report.sensitivity)}
    ${frontierHtml(report.fallback, frontierSvg)}
    ${madeHtml(report)}
    ${rawJsonHtml(report)}
  </section>`;
}
