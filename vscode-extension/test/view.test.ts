// The drawing of a finding, the quantize report and the ONNX text grammar: `npm test`.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import * as oniguruma from "vscode-oniguruma";
import * as textmate from "vscode-textmate";
import { edgeTable, FindingGraph, findingSvg, layoutFinding } from "../src/graphView";
import { outputsTable, renderReport } from "../src/reportHtml";
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
