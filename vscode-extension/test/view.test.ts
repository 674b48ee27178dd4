// The drawing of a finding, the quantize report and the ONNX text grammar: `npm test`.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import * as oniguruma from "vscode-oniguruma";
import * as textmate from "vscode-textmate";
import { edgeTable, FindingGraph, findingSvg, layoutFinding } from "../src/graphView";
import { frontierHtml, safeSvg } from "../src/reportHtml";
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
