// The quantize report page (src/reportHtml.ts) on real reports: the JSON that `onnx-lint quantize --report` wrote
// for small models, committed under test/fixtures/ by test/fixtures/make_quantize_reports.py: `npm test`.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { keptGroups, outputsTable, precisionCounts, Report, renderReport, sensitivityHtml, verdict } from "../src/reportHtml";

const FIXTURES = path.join(__dirname, "..", "..", "test", "fixtures");

function fixture(name: string): Report {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), "utf8")) as Report;
}

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };
const decode = (html: string) => html.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]);

/** What a reader sees: the page's text, without the raw JSON (a closed disclosure) and the plot's own labels. */
function visibleText(html: string): string {
  const shown = html.replace(/<details class="raw-report">[\s\S]*?<\/details>/, "").replace(/<svg[\s\S]*?<\/svg>/g, "");
  // Inline elements run on with the text around them; a block starts a new line.
  const text = shown.replace(/<\/?(code|strong|span)\b[^>]*>/g, "").replace(/<[^>]+>/g, " ");
  return decode(text).replace(/\s+/g, " ").trim();
}

/** Where each part of the page starts, in reading order (-1: not on the page). */
function positions(html: string): Record<string, number> {
  const at = (marker: string) => html.indexOf(marker);
  return { verdict: at('class="verdict '), warnings: at('class="warnings report-warnings"'), written: at('class="written"'),
    outputs: at('class="quantize-outputs"'), coverage: at('class="quantize-coverage"'), kept: at('class="kept-out'),
    sensitivity: at('<section class="sensitivity"'), frontier: at('class="quantize-frontier"'),
    made: at('class="quantize-made"'), raw: at('class="raw-report"') };
}

function assertReadingOrder(html: string, parts: string[]): void {
  const found = positions(html);
  const order = parts.map((p) => [p, found[p]] as const);
  for (const [part, position] of order) {
    assert.ok(position >= 0, `${part} is on the page`);
  }
  const sorted = [...order].sort((a, b) => a[1] - b[1]).map(([p]) => p);
  assert.deepEqual(sorted, parts);
}

function worst(report: Report): number {
  return Math.min(...(report.outputs as { cosine_similarity: number }[]).map((o) => o.cosine_similarity));
}

function calibration(report: Report): { samples: number; validation_samples: number; source: string; random: boolean } {
  return report.calibration as { samples: number; validation_samples: number; source: string; random: boolean };
}

test("a target the first pass met: the verdict first, in words, against the target the report names", () => {
  const report = fixture("classifier-met");
  assert.equal(report.min_cosine, 0.99);
  assert.equal(report.fallback, null);  // no search ran: min_cosine is the only place the target is named
  const html = renderReport(report);
  const samples = calibration(report).validation_samples;
  const said = verdict(report);
  assert.equal(said.kind, "met");
  assert.equal(said.text, `Meets the accuracy target for ONNX Runtime (cosine ≥ 0.99): the worst output's cosine ` +
    `similarity with FP32 is ${worst(report).toFixed(6)} on ${samples} samples.`);
  // The verdict is the first thing under the heading, marked for the stylesheet and for assistive technology.
  assert.match(html, /<h2 id="quantize-title"[^>]*>Quantized INT8\+FP16<\/h2>\s*<p id="quantize-verdict" class="verdict verdict-met" data-verdict="met"><span class="verdict-mark" aria-hidden="true">✓<\/span> Meets the accuracy target/);
  assert.match(html, /<section class="quantize-report" aria-labelledby="quantize-title" aria-describedby="quantize-verdict">/);
  assertReadingOrder(html, ["verdict", "written", "outputs", "coverage", "kept", "sensitivity", "made", "raw"]);
});

test("no target set, random calibration: the verdict says so and the warning comes before any figure", () => {
  const report = fixture("weak-random-tensorrt");
  assert.equal(report.min_cosine, null);
  const html = renderReport(report, report.warnings as string[]);
  const said = verdict(report);
  assert.equal(said.kind, "unchecked");
  assert.equal(said.text, "Quantized for TensorRT with no accuracy target set (onnxLint.quantize.minCosine, " +
    `--min-cosine on the command line): the worst output's cosine similarity with FP32 is ${worst(report).toFixed(6)} ` +
    `on ${calibration(report).validation_samples} samples.`);
  assertReadingOrder(html, ["verdict", "warnings", "written", "outputs", "coverage", "sensitivity", "made", "raw"]);
  const text = visibleText(html);
  // The random-inputs warning, once (the server's result and the report both carry it), in words, not shouted.
  assert.equal(text.split("calibrating on RANDOM inputs").length - 1, 1);
  assert.match(text, /Warning: no --calibration-data given: calibrating on RANDOM inputs\. The accuracy figures below/);
  assert.match(text, /Target runtime: TensorRT/);
  const { samples, validation_samples: compared } = calibration(report);
  assert.match(text, new RegExp(`on the same ${compared} samples \\((all|the first ${compared} of the) ${samples} ` +
    "calibration samples, random inputs\\)"));
  // The fixes quantize applied first, as findings in words.
  assert.match(text, /fixed first, in memory OL001: /);
  assert.match(text, /runs on TensorRT \(explicit quantization/);
});

test("a target met after the fallback: the nodes it moved to FP16 are named with why, the frontier is drawn", () => {
  const report = fixture("outlier-fallback");
  const svg = fs.readFileSync(path.join(FIXTURES, "outlier-fallback.frontier.svg"), "utf8");
  const html = renderReport(report, [], svg);
  const said = verdict(report);
  assert.equal(said.kind, "met");
  assert.match(said.text, /^Meets the accuracy target for TensorRT \(cosine ≥ 0\.995\): the worst output's cosine similarity with FP32 is 0\.99\d{4} on 16 samples, after moving 1 node to FP16\.$/);
  assertReadingOrder(html, ["verdict", "written", "outputs", "coverage", "kept", "sensitivity", "frontier", "made", "raw"]);
  const moved = keptGroups(report).find((g) => g.reason.startsWith("the accuracy target"));
  assert.ok(moved, "the accuracy target's placement is a group");
  assert.equal(moved.precision, "FP16");
  assert.deepEqual(moved.nodes.map((n) => n.node), ["mm4"]);
  assert.match(visibleText(html), /FP16, 1 node: mm4 \(MatMul, \d+\.\d% of the MACs\)\. Why: the accuracy target \(cosine ≥ 0\.995\) moved it to FP16/);
  // The sensitivity table says which of its nodes the written model keeps in INT8.
  const sensitivity = /<table class="sensitivity">[\s\S]*?<\/table>/.exec(html)![0];
  assert.match(sensitivity, /<th>written as<\/th>/);
  assert.match(sensitivity, /<tr><td><code>mm4<\/code><\/td><td>MatMul<\/td>[^]*?<td>FP16 \(accuracy target\)<\/td><\/tr>/);
  assert.ok(html.includes(svg.trim()));
});

test("a target no build can meet: not written, and the verdict says why first", () => {
  const report = fixture("outlier-missed");
  assert.equal(report.written, false);
  const svg = fs.readFileSync(path.join(FIXTURES, "outlier-missed.frontier.svg"), "utf8");
  const html = renderReport(report, report.warnings as string[], svg);
  const said = verdict(report);
  assert.equal(said.kind, "missed");
  assert.match(said.text, /^Not written: /);
  assert.match(html, /<h2[^>]*>Quantize INT8\+FP16: not written<\/h2>\s*<p id="quantize-verdict" class="verdict verdict-missed failure" data-verdict="missed"><span class="verdict-mark" aria-hidden="true">✗<\/span> Not written/);
  assert.match(visibleText(html), /Nothing was written to \/workspace\/outlier-missed\.int8-fp16\.onnx\./);
  assert.doesNotMatch(html, /opened beside this view/);
  // Why, on the page too: the first pass and the FP16-only build, both below the target, plotted after the figures.
  assert.ok(html.includes(svg.trim()));
  assertReadingOrder(html, ["verdict", "warnings", "written", "outputs", "coverage", "sensitivity", "frontier", "made", "raw"]);
  assert.match(said.text, /\(cosine ≥ 0\.9999999\): even with every node in FP16 the worst output's cosine is 0\.999999 on 16 samples\.$/);
});

test("one row per output: cosine, top-1/top-5 agreement where the report has them, max abs error, on how many samples", () => {
  const classifier = fixture("classifier-met");
  const html = renderReport(classifier);
  const table = /<table class="quantize-outputs">[\s\S]*?<\/table>/.exec(html)![0];
  const headers = [...table.matchAll(/<th[^>]*>([^<]*)<\/th>/g)].map((m) => decode(m[1]));
  assert.deepEqual(headers, ["output", "shape", "cosine similarity", "top-1 agreement", "top-5 agreement", "max abs error",
    "relative error", "FP32 max |x|"]);
  const [out] = classifier.outputs as Record<string, number>[];
  const cells = [...table.matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((m) => decode(m[1].replace(/<[^>]+>/g, "")));
  assert.equal(cells[0], "logits");
  assert.equal(cells[2], out.cosine_similarity.toFixed(6));
  assert.equal(cells[3], `${(out.top1_agreement * 100).toFixed(1)}%`);
  assert.equal(cells[4], `${(out.top5_agreement * 100).toFixed(1)}%`);
  assert.equal(Number(cells[5]), Number(out.max_abs_error.toPrecision(6)));
  const samples = calibration(classifier);
  assert.match(visibleText(html), new RegExp(`against the FP32 model's on the same ${samples.validation_samples} samples`));
  assert.match(visibleText(html), /top-1 agreement is the share of rows whose highest class stays the same/);
  // Outputs that are not class scores have no agreement columns, and the page does not explain them.
  const outlier = renderReport(fixture("outlier-fallback"));
  const plain = /<table class="quantize-outputs">[\s\S]*?<\/table>/.exec(outlier)![0];
  assert.doesNotMatch(plain, /top-1|top-5|non finite/);
  assert.doesNotMatch(visibleText(outlier), /top-1 agreement is/);
  // A field a newer report adds gets a column of its own name; one no output has gets none.
  const grown = outputsTable([{ name: "Y", shape: [], cosine_similarity: 1, percentile_error: 0.5, top1_agreement: null }]);
  assert.deepEqual([...grown.matchAll(/<th[^>]*>([^<]*)<\/th>/g)].map((m) => m[1]),
    ["output", "shape", "cosine similarity", "max abs error", "percentile error"]);
  assert.match(grown, /<td>scalar<\/td>/);
});

test("INT8 coverage: the share of MACs, the nodes per precision, and each node kept out of INT8 with why", () => {
  const report = fixture("classifier-met");
  const html = renderReport(report);
  const text = visibleText(html);
  const coverage = report.coverage as { int8_mac_share: number; by_op_type: Record<string, { int8_nodes: number; nodes: number }> };
  assert.match(text, new RegExp(`INT8 coverage ${(coverage.int8_mac_share * 100).toFixed(1)}% of the [\\d.]+k? ` +
    "multiply-accumulates run in INT8 \\(at the calibration shapes: X "));
  const matmul = coverage.by_op_type.MatMul;
  assert.match(text, new RegExp(`MatMul ${matmul.int8_nodes} of ${matmul.nodes} `));
  const counts = precisionCounts(report);
  const nodes = report.nodes as { total: number; int8: number; QuantizeLinear: number; DequantizeLinear: number };
  assert.equal(counts.int8, nodes.int8);
  assert.equal(counts.fp32, 1);  // amplify: its output exceeds what FP16 holds safely
  assert.equal(counts.int8! + counts.fp16! + counts.fp32 + counts.qdq!, nodes.total);
  assert.match(text, new RegExp(`Nodes: ${nodes.int8} in INT8, ${counts.fp16} in FP16, 1 in FP32, and ` +
    `${nodes.QuantizeLinear + nodes.DequantizeLinear} QuantizeLinear/DequantizeLinear \\(${nodes.total} nodes in the quantized model\\)\\.`));
  const groups = keptGroups(report);
  const fp32 = groups.find((g) => g.precision === "FP32")!;
  assert.deepEqual(fp32.nodes.map((n) => n.node), ["amplify"]);
  assert.match(text, /FP32, 1 node: amplify \(Mul, max \|x\| [\d.e+]+\)\. Why: their outputs exceed 512 on the validation samples/);
  const head = groups.find((g) => g.nodes.some((n) => n.node === "head"))!;
  assert.equal(head.precision, "FP16");
  assert.match(head.reason, /^output layer: its INT8 rounding would reach the model's output undiluted/);
  // FP16 groups come before FP32, the costliest first.
  assert.deepEqual(groups.map((g) => g.precision), [...groups.map((g) => g.precision)].sort());
});

test("the raw JSON is behind a closed disclosure, whole, and nothing on the page is a field dump", () => {
  for (const name of ["classifier-met", "weak-random-tensorrt", "outlier-fallback", "outlier-missed"]) {
    const report = fixture(name);
    const html = renderReport(report, report.warnings as string[]);
    const raw = /<details class="raw-report"><summary>The whole report as JSON<\/summary><pre class="report-json"><code>([\s\S]*?)<\/code><\/pre><\/details>/.exec(html);
    assert.ok(raw, `${name}: the raw JSON behind a closed disclosure`);
    assert.deepEqual(JSON.parse(decode(raw[1])), report);
    const text = visibleText(html);
    assert.doesNotMatch(text, /validation_samples|fp16_compute_nodes|int8_mac_share|source: |samples: \d|: true|: false/, name);
  }
  // A big model's report is cut on the page, and says where the whole one is.
  const big = { ...fixture("outlier-fallback"), padding: "x".repeat(250_000) };
  assert.match(renderReport(big), /The first 200,000 of [\d,]+ characters \(onnx-lint quantize --report FILE writes it whole\)/);
});

test("names from the model are escaped everywhere on the page", () => {
  const hostile = "<img src=x onerror=alert(1)>";
  const report = JSON.parse(JSON.stringify(fixture("classifier-met")).replace(/"(amplify|head|logits)"/g, `"${hostile.replace(/"/g, "")}"`)) as Report;
  const html = renderReport(report);
  assert.doesNotMatch(html, /<img/);
  assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;/);
});

// The sensitivity of a model with more INT8 nodes than the table lists (real reports here have a few).
const SENSITIVITY = {
  samples: 2, all_int8_cosine: 0.99812, stopped: "time budget of 60 s spent", not_measured: ["Conv_12", "Conv_13"],
  nodes: Array.from({ length: 12 }, (_x, i) => ({ node: i === 0 ? "<b>Conv_0</b>" : `Conv_${i}`, op_type: "Conv",
    cosine_alone: 0.9981234567 + i * 1e-5, error: 0.01 / (i + 1), share: i === 0 ? 0.342 : 0.05, macs: 1_204_224 * (i + 1),
    error_per_mac: 1e-9, int8: true })),
};

test("the sensitivity table lists the 10 costliest INT8 nodes, says what it left out, and escapes names", () => {
  const html = sensitivityHtml(SENSITIVITY);
  const table = /<table class="sensitivity">[\s\S]*?<\/table>/.exec(html)![0];
  assert.deepEqual([...table.matchAll(/<th[^>]*>([^<]*)<\/th>/g)].map((m) => m[1]),
    ["node", "op", "cosine alone", "share of error", "MACs"]);  // every node INT8: no "written as" column
  assert.equal((table.match(/<tr>/g) ?? []).length, 11);  // the header row and 10 nodes
  assert.match(table, /<tr><td><code>&lt;b&gt;Conv_0&lt;\/b&gt;<\/code><\/td><td>Conv<\/td><td class="number">0\.998123<\/td>/);
  assert.match(table, /<td class="number">34\.2%<\/td><td class="number">1,204,224<\/td>/);
  assert.doesNotMatch(table, /Conv_10|Conv_11/);
  assert.match(html, /on 2 samples[^<]*the first 10 of 12\. Every INT8 node at once: cosine 0\.998120\./);
  assert.match(html, /Not measured: 2 INT8 nodes \(time budget of 60 s spent\): Conv_12, Conv_13/);
  assert.match(sensitivityHtml({ samples: 1, nodes: [] }), /No INT8 node was measured/);
  assert.equal(sensitivityHtml(null), "");
});
