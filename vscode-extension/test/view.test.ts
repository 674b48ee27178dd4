// The drawing of a finding, the quantize report and the ONNX text grammar: `npm test`.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import * as oniguruma from "vscode-oniguruma";
import * as textmate from "vscode-textmate";
import { edgeTable, FindingGraph, findingSvg, layoutFinding } from "../src/graphView";
import { frontierHtml, outputsTable, renderReport, safeSvg, sensitivityHtml } from "../src/reportHtml";
import { renderView, toViewDiagnostics } from "../src/viewHtml";

const ROOT = path.join(__dirname, "..", "..");

// What `onnx-lint.findingGraph` answers for OL001 on examples/defects.weakly_typed_mlp
// (tests/test_neighbourhood.py checks the server side of this shape).
const drawing: FindingGraph = {
  graph: "graph",
  location: "graph/output[0] 'Y'",
  truncated: false,
  nodes: [
    { id: "node:3", kind: "node", label: "Add_2", op: "Add", domain: "", path: "graph/node[3]", focus: true, hidden: 0 },
    { id: "node:2", kind: "node", label: "MatMul_2", op: "MatMul", domain: "", path: "graph/node[2]", focus: false, hidden: 0 },
    { id: "node:1", kind: "node", label: "Gelu_1", op: "Gelu", domain: "com.microsoft", path: "graph/node[1]", focus: false, hidden: 3 },
    { id: "output:Y", kind: "output", label: "Y", op: "output", focus: true, hidden: 0 },
  ],
  edges: [
    { from: "node:1", to: "node:2", tensor: "activated", declared: null, derived: "float[batch, 32]", engine: "onnxruntime-symbolic", stale: false, focus: false },
    { from: "node:2", to: "node:3", tensor: "projected", declared: null, derived: "float[batch, 8]", engine: "onnxruntime-symbolic", stale: false, focus: false },
    { from: "node:3", to: "output:Y", tensor: "Y", declared: "float", derived: "float[batch, 8]", engine: "onnxruntime-symbolic", stale: true, focus: true },
  ],
};

test("dagre lays the neighbourhood out top to bottom, in data-flow order, without overlaps", () => {
  const layout = layoutFinding(drawing);
  const y = (id: string) => layout.nodes.get(id)!.y;
  assert.ok(y("node:1") < y("node:2") && y("node:2") < y("node:3") && y("node:3") < y("output:Y"));
  const boxes = [...layout.nodes.values()];
  for (const a of boxes) {
    for (const b of boxes) {
      if (a !== b) {
        const apart = Math.abs(a.x - b.x) * 2 >= a.width + b.width || Math.abs(a.y - b.y) * 2 >= a.height + b.height;
        assert.ok(apart, "node boxes overlap");
      }
    }
  }
  assert.ok(layout.edges.every((e) => e.points.length >= 2 && e.label.width > 0));
  assert.ok(layout.width > 0 && layout.height > 0);
});

test("the SVG highlights the finding's node and its stale edge with declared and derived shapes", () => {
  const svg = findingSvg(drawing);
  assert.match(svg, /<g class="node node focus" data-id="node:3" data-op="Add" tabindex="0"/);
  assert.match(svg, /<g class="node output focus" data-id="output:Y"/);
  const stale = /<g class="edge stale focus" data-tensor="Y">[\s\S]*?<\/g><\/g>/.exec(svg)![0];
  assert.match(stale, /marker-end="url\(#arrow-stale\)"/);
  assert.match(stale, />declared float</);
  assert.match(stale, />derived float\[batch, 8\]</);
  assert.match(stale, /aria-label="tensor Y, declared float, derived float\[batch, 8\] by onnxruntime-symbolic \(stale\)"/);
  assert.match(svg, />com\.microsoft\.Gelu</);
  assert.match(svg, />\+3 not drawn</);  // what the bounds left out is said, not hidden
  assert.doesNotMatch(svg, /style=/);  // colours come from the stylesheet (theme variables), never inline
});

test("long shapes are cut in the drawing and whole in its description and table", () => {
  const long = "float[batch, floor(floor((height - 1)/2 + 1)/2 + 1), floor(floor((width - 1)/2 + 1)/2 + 1)]";
  const wide = { ...drawing, edges: [{ ...drawing.edges[2], derived: long }] };
  const svg = findingSvg(wide);
  assert.match(svg, />derived float\[batch, floor\(floor\(\(heigh…</);
  assert.ok(svg.includes(`derived ${long} by onnxruntime-symbolic`));  // the aria-label
  assert.ok(edgeTable(wide).includes(long));
});

test("names from the model are escaped in the drawing", () => {
  const hostile = { ...drawing, edges: [{ ...drawing.edges[2], tensor: "<img src=x onerror=alert(1)>" }] };
  const svg = findingSvg(hostile);
  assert.doesNotMatch(svg, /<img/);
  assert.match(svg, /&lt;img src=x onerror=alert\(1\)&gt;/);
});

test("an open graph is drawn in the view under a heading that takes the keyboard focus", () => {
  const diagnostics = toViewDiagnostics([{ code: "OL001", message: "stale", severity: 1,
    data: { fixable: true, key: ["OL001"], location: { path: "graph/output[0]", tensor: "Y" }, engine: "onnxruntime-symbolic" } }]);
  const html = renderView({ file: "weak.onnx", summary: null, diagnostics, trusted: true, graph: { index: 0, drawing } },
    { cspSource: "c", script: "s.js", style: "s.css" });
  assert.match(html, /<section id="graph" class="graph"/);
  assert.match(html, /<h2 id="graph-title" tabindex="-1" data-autofocus>OL001 in its graph<\/h2>/);
  assert.match(html, /derived by <span class="engine-name">onnxruntime-symbolic<\/span>/);
  assert.match(html, /aria-pressed="true"/);
  assert.match(html, /<table class="edges">[\s\S]*<tr class="stale"><td><code>Y<\/code><\/td><td>Add_2 → output Y<\/td>/);
  const failed = renderView({ file: "w", summary: null, diagnostics, trusted: true, graph: { index: 0, error: "no graph" } },
    { cspSource: "c", script: "s.js", style: "s.css" });
  assert.match(failed, /<p class="failure">no graph<\/p>/);
});

test("the quantize report shows every output field it has, known ones first and unknown ones too", () => {
  const table = outputsTable([
    { name: "Y", shape: [3, 8], max_abs_error: 0.0123456789, cosine_similarity: 0.99991234, fp32_scale: 2.5,
      relative_error: 0.004, percentile_error: 0.5 },
    { name: "Z", shape: [], cosine_similarity: 1 },
  ]);
  const headers = [...table.matchAll(/<th[^>]*>([^<]*)<\/th>/g)].map((m) => m[1]);
  assert.deepEqual(headers, ["output", "shape", "cosine similarity", "relative error", "max abs error", "FP32 scale",
    "percentile error"]);
  assert.match(table, /<td class="number">0\.999912<\/td>/);
  assert.match(table, /<td>3 × 8<\/td>/);
  assert.match(table, /<td>scalar<\/td>/);
  assert.match(table, /<td class="number">—<\/td>/);  // Z has no relative error
  const report = renderReport({ output: "/m/weak.int8-fp16.onnx", outputs: [{ name: "Y", cosine_similarity: 0.99 }],
    opset: { from: 17, to: 21 }, nodes: { total: 9, QuantizeLinear: 2 }, fixes: [], warnings: ["random calibration"] },
    ["random calibration"]);
  assert.match(report, /Wrote <code>\/m\/weak\.int8-fp16\.onnx<\/code>/);
  assert.match(report, /<dt>opset<\/dt><dd>from: 17; to: 21<\/dd>/);
  assert.match(report, /<dt>fixes<\/dt><dd>none<\/dd>/);
  assert.equal((report.match(/random calibration/g) ?? []).length, 1);
  // The fixes quantize applied first read as findings, one per line, not as a field dump.
  const fixed = renderReport({ output: "/m/q.onnx", fixes: [{ code: "OL001", message: "graph output 'Y' is declared as a scalar",
    fix: { title: "Declare the computed shape [batch, 8] on output 'Y'" }, location: { path: "graph/output[0]", tensor: "Y" } }] });
  assert.match(fixed, /<dt>fixes<\/dt><dd><ul class="report-list"><li>OL001: Declare the computed shape \[batch, 8\] on output &#39;Y&#39; \(graph\/output\[0\]\)<\/li><\/ul><\/dd>/);
});

// What onnx_lint/quantization/frontier_plot.py writes (shortened): theme colours, every text escaped.
const FRONTIER_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 480 300" width="480" height="300" role="img" aria-labelledby="frontier-title" class="frontier" font-family="sans-serif" font-size="11" fill="currentColor" stroke="currentColor">
<title id="frontier-title">Accuracy against INT8 coverage: each build the accuracy target tried</title>
<line x1="64" y1="256" x2="464" y2="256"/>
<text x="64.0" y="272" text-anchor="middle" stroke="none">0%</text>
<line x1="64" y1="24.0" x2="464" y2="24.0" stroke-dasharray="5 4" opacity="0.7"/>
<polyline points="64.0,30.1 330.7,120.4 464.0,240.2" fill="none" opacity="0.4"/>
<circle cx="64.0" cy="30.1" r="4" fill="currentColor" class="met"><title>FP16 only: INT8 0.0%, cosine 1.000000</title></circle>
<circle cx="464.0" cy="240.2" r="4" fill="none" class="missed"><title>first pass: INT8 100.0%, cosine 0.999963</title></circle>
</svg>
`;

const SENSITIVITY = {
  samples: 2, all_int8_cosine: 0.99812, stopped: "time budget of 60 s spent", not_measured: ["Conv_12", "Conv_13"],
  nodes: Array.from({ length: 12 }, (_x, i) => ({ node: i === 0 ? "<b>Conv_0</b>" : `Conv_${i}`, op_type: "Conv",
    cosine_alone: 0.9981234567 + i * 1e-5, error: 0.01 / (i + 1), share: i === 0 ? 0.342 : 0.05, macs: 1_204_224 * (i + 1),
    error_per_mac: 1e-9 })),
};

test("the quantize report shows the target, the 10 costliest INT8 nodes and the frontier, not their raw dumps", () => {
  const report = renderReport({
    output: "/m/q.onnx", target: "tensorrt", outputs: [{ name: "Y", cosine_similarity: 0.998 }],
    sensitivity: SENSITIVITY,
    kept_in_fp32: { threshold: 65504, reason: "their outputs exceed 65504", nodes: [{ node: "Pow_3", op_type: "Pow", max_abs: 123456.7 }] },
    fallback: { target: 0.999, met: true, frontier: [
      { int8_mac_share: 1, cosine: 0.999963, build: "first pass", met: false },
      { int8_mac_share: 0, cosine: 1, build: "FP16 only", met: true }] },
    provenance: { tool: "onnx-lint", sensitivity: { Conv_0: [0.342, 0.998] } },
    target_runtime: "TensorRT (explicit quantization) and ONNX Runtime",
  }, [], FRONTIER_SVG);
  assert.match(report, /<p class="quantize-target">Target runtime: <strong>TensorRT<\/strong><\/p>/);
  // Sensitivity: the first 10 of 12, most costly first, names escaped, figures as the CLI prints them.
  const table = /<table class="sensitivity">[\s\S]*?<\/table>/.exec(report)![0];
  const headers = [...table.matchAll(/<th[^>]*>([^<]*)<\/th>/g)].map((m) => m[1]);
  assert.deepEqual(headers, ["node", "op", "cosine alone", "share of error", "MACs"]);
  assert.equal((table.match(/<tr>/g) ?? []).length, 11);  // the header row and 10 nodes
  assert.match(table, /<tr><td><code>&lt;b&gt;Conv_0&lt;\/b&gt;<\/code><\/td><td>Conv<\/td><td class="number">0\.998123<\/td>/ );
  assert.match(table, /<td class="number">34\.2%<\/td><td class="number">1,204,224<\/td>/);
  assert.doesNotMatch(table, /Conv_10|Conv_11/);
  assert.match(report, /<h3 id="sensitivity-title">Sensitivity<\/h3>/);
  assert.match(report, /on 2 samples[^<]*the first 10 of 12\. Every INT8 node at once: cosine 0\.998120\./);
  assert.match(report, /Not measured: 2 INT8 nodes \(time budget of 60 s spent\): Conv_12, Conv_13/);
  // The plot, as the server drew it, with its points as a table too.
  assert.ok(report.includes(FRONTIER_SVG.trim()));
  assert.match(report, /<figure class="frontier-plot"><svg [^>]*class="frontier"/);
  assert.match(report, /<td>first pass<\/td><td class="number">100\.0%<\/td><td class="number">0\.999963<\/td><td>no<\/td>/);
  // Kept in FP32: in words, one line per node.
  assert.match(report, /<dt>kept in FP32<\/dt><dd><p>their outputs exceed 65504<\/p><ul class="report-list"><li><code>Pow_3<\/code> Pow, max \|x\| 123457<\/li>/);
  // The facts list keeps the rest, without the dumps rendered above.
  const facts = /<dl class="facts">[\s\S]*<\/dl>/.exec(report)![0];
  assert.doesNotMatch(facts, /<dt>sensitivity<\/dt>|<dt>target<\/dt>|frontier|first pass|Conv_0/);
  assert.match(facts, /<dt>fallback<\/dt><dd>target: 0\.999; met: true<\/dd>/);
  assert.match(facts, /<dt>provenance<\/dt><dd>tool: onnx-lint<\/dd>/);
  assert.match(facts, /<dt>target runtime<\/dt><dd>TensorRT \(explicit quantization\) and ONNX Runtime<\/dd>/);
  // ONNX Runtime, no sensitivity measured, no search: none of these sections.
  const plain = renderReport({ output: "/m/q.onnx", target: "onnxruntime", sensitivity: null, fallback: null, kept_in_fp32: null });
  assert.match(plain, /Target runtime: <strong>ONNX Runtime<\/strong>/);
  assert.doesNotMatch(plain, /Sensitivity|frontier|kept in FP32/);
  assert.match(sensitivityHtml({ samples: 1, nodes: [] }), /No INT8 node was measured/);
});

test("the frontier plot is inserted only when it is an SVG without script or event handlers", () => {
  assert.equal(safeSvg(FRONTIER_SVG), FRONTIER_SVG.trim());
  for (const hostile of [
    `<svg><script>alert(1)</script></svg>`,
    `<svg onload="alert(1)"><circle/></svg>`,
    `<svg><circle r="4" ONCLICK = "x()"/></svg>`,
    `<svg><a href="javascript:alert(1)"><text>x</text></a></svg>`,
    `<svg><foreignObject><div>x</div></foreignObject></svg>`,
    `<img src=x onerror=alert(1)><svg></svg>`,
    `<div><svg></svg></div>`,
    `<svgx></svgx>`,
    "",
  ]) {
    assert.equal(safeSvg(hostile), undefined, hostile);
  }
  assert.equal(safeSvg(null), undefined);
  assert.equal(safeSvg(undefined), undefined);
  // Without a usable plot, the frontier still reads as a table; without points and plot, nothing.
  const points = { frontier: [{ int8_mac_share: 0.5, cosine: 0.9995, build: "3 node(s) in FP16", met: true }] };
  const rejected = frontierHtml(points, `<svg onload="x()"></svg>`);
  assert.doesNotMatch(rejected, /<svg|onload/);
  assert.match(rejected, /<table class="frontier-points">[\s\S]*<td>3 node\(s\) in FP16<\/td><td class="number">50\.0%<\/td>/);
  assert.equal(frontierHtml(null, null), "");
  assert.equal(frontierHtml({ frontier: [] }, undefined), "");
  // The plot reaches the view from the quantize result (src/modelEditor.ts → QuantizeShown.frontierSvg).
  const html = renderView({ file: "m.onnx", summary: null, diagnostics: [], trusted: true,
    quantize: { report: { output: "/m/q.onnx", fallback: points }, warnings: [], frontierSvg: FRONTIER_SVG } },
  { cspSource: "c", script: "s.js", style: "s.css" });
  assert.match(html, /<section class="quantize-frontier"[\s\S]*<svg [^>]*class="frontier"/);
});

async function grammar(): Promise<textmate.IGrammar> {
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(Uint8Array.from(wasm).buffer);
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({ createOnigScanner: (s) => new oniguruma.OnigScanner(s),
      createOnigString: (s) => new oniguruma.OnigString(s) }),
    loadGrammar: async () => textmate.parseRawGrammar(
      fs.readFileSync(path.join(ROOT, "syntaxes", "onnx-text.tmLanguage.json"), "utf8"), "onnx-text.tmLanguage.json"),
  });
  return (await registry.loadGrammar("source.onnx-text"))!;
}

function scopesOf(g: textmate.IGrammar, text: string): Map<string, string> {
  const found = new Map<string, string>();
  let stack = textmate.INITIAL;
  for (const line of text.split("\n")) {
    const result = g.tokenizeLine(line, stack);
    for (const token of result.tokens) {
      const piece = line.slice(token.startIndex, token.endIndex).trim();
      if (piece && !found.has(piece)) {
        found.set(piece, token.scopes[token.scopes.length - 1]);
      }
    }
    stack = result.ruleStack;
  }
  return found;
}

test("the ONNX text grammar names types, shapes, op names, graph names and attributes", async () => {
  // onnx.printer's output, as onnx-lint's textual view shows it.
  const text = [
    "<", "   ir_version: 8,", "   opset_import: [\"\" : 17, \"com.microsoft\" : 1],", "   producer_name: \"tf2onnx\"", ">",
    "main_graph (float[batch,16] X, bool cond) => (float Y) ",
    "   <float[16,32] W1 = [\"not shown\": \"2,048 bytes\"], float[batch,8] h>",
    "{",
    "   [MatMul_1] hidden = MatMul (X, W1)",
    "   [Gelu_1] activated = com.microsoft.Gelu (hidden)",
    "   t = Transpose <perm: ints = [1, 0]> (activated)",
    "   [If_0] Y = If (cond) <then_branch: graph = then_body () => (float16[?,4] then_out) {",
    "   }>",
    "}",
  ].join("\n");
  const scopes = scopesOf(await grammar(), text);
  assert.equal(scopes.get("ir_version"), "support.type.property-name.onnx-text");
  assert.equal(scopes.get("main_graph"), "entity.name.type.graph.onnx-text");
  assert.equal(scopes.get("then_body"), "entity.name.type.graph.onnx-text");
  assert.equal(scopes.get("float"), "storage.type.onnx-text");
  assert.equal(scopes.get("float16"), "storage.type.onnx-text");
  assert.equal(scopes.get("batch"), "variable.other.constant.dim.onnx-text");
  assert.equal(scopes.get("16"), "constant.numeric.dim.onnx-text");
  assert.equal(scopes.get("MatMul"), "entity.name.function.operator.onnx-text");
  assert.equal(scopes.get("Gelu"), "entity.name.function.operator.onnx-text");
  assert.equal(scopes.get("com.microsoft."), "entity.name.namespace.domain.onnx-text");
  assert.equal(scopes.get("MatMul_1"), "entity.name.tag.node.onnx-text");
  assert.equal(scopes.get("perm"), "entity.other.attribute-name.onnx-text");
  assert.equal(scopes.get("ints"), "storage.type.attribute.onnx-text");
  assert.equal(scopes.get("then_branch"), "entity.other.attribute-name.onnx-text");
  assert.equal(scopes.get("=>"), "keyword.operator.arrow.onnx-text");
  assert.equal(scopes.get("\"tf2onnx\"") ?? scopes.get("tf2onnx"), "string.quoted.double.onnx-text");
});
