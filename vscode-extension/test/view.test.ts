// The drawing of a finding, the model view's page (findings list, graph frame, wording), the quantize report and
// the ONNX text grammar: `npm test`.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import * as oniguruma from "vscode-oniguruma";
import * as textmate from "vscode-textmate";
import { edgeTable, FindingGraph, findingSvg, layoutFinding } from "../src/graphView";
import { frontierHtml, safeSvg } from "../src/reportHtml";
import { GRAPH_SHARE, shareAfterKey } from "../src/graphSplit";
import { findingPattern, groupFindings, renderView, toViewDiagnostics, wholeGraphSection } from "../src/viewHtml";
import { ModelGraph, WholeGraph } from "../src/wholeGraph";
import { count, SEARCH_SHOWN, searchSummary, thousands } from "../src/words";

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

// What the server says for the 100k-node weakly typed chain (benchmarks/models.py weakly_typed): 200 stale
// value_info entries of one shape, each naming its own tensor, and the stale output.
function weakChainDiagnostics(stale = 200) {
  return toViewDiagnostics([
    { code: "OL001", message: "graph output 'res24999' is declared as a scalar (rank 0), but the graph computes " +
      "float[batch, 64] (at graph/output[0] 'res24999')",
      severity: 1, data: { fixable: true, key: ["OL001"], location: { path: "graph/output[0]", tensor: "res24999" } } },
    ...Array.from({ length: stale }, (_x, i) => ({ code: "OL005", severity: 1,
      message: `value_info 'mm${i * 125}' is declared [batch, 7]: dim 1 is declared 7 but the graph computes 64 ` +
        `(at graph/value_info[${i}] 'mm${i * 125}')`,
      data: { fixable: true, key: ["OL005", i], location: { path: `graph/value_info[${i}]`, tensor: `mm${i * 125}` } } })),
  ]);
}

test("200 findings of one rule and message are one row with their count, and show all lists them", () => {
  const diagnostics = weakChainDiagnostics();
  assert.equal(findingPattern(diagnostics[1].message), "value_info is declared [batch, 7]: dim 1 is declared 7 but the graph computes 64");
  const rows = groupFindings(diagnostics);
  assert.equal(rows.length, 2);
  assert.equal(rows[0], 0);  // the stale output, alone, first as the server listed it
  const group = rows[1];
  assert.ok(typeof group !== "number" && group.members.length === 200 && group.members[0] === 1);
  const html = renderView({ file: "chain-100k.onnx", summary: null, diagnostics, trusted: true },
    { cspSource: "c", script: "s.js", style: "s.css" });
  // One visible row for the 200: the code with its count, the message without the names, "Show all 200".
  const row = /<li class="error group"[^>]*>[\s\S]*?<\/li>/.exec(html)![0];
  assert.match(row, /<span class="code">OL005 × 200<\/span> <span class="message">value_info is declared \[batch, 7\]: dim 1 is declared 7 but the graph computes 64<\/span>/);
  assert.match(row, /<button class="secondary show-all" data-action="toggleGroup" aria-expanded="false"[^>]*>Show all 200<\/button>/);
  assert.match(row, /data-action="reveal" data-index="1"/);  // "Show in graph": the first of them
  // Each of the 200 is there, hidden until "show all", with its own name and buttons.
  const members = html.match(/<li class="error member" data-member="[^"]*" hidden>/g) ?? [];
  assert.equal(members.length, 200);
  assert.match(html, /value_info &#39;mm24875&#39; is declared [^<]* \(at graph\/value_info\[199\] &#39;mm24875&#39;\)/);
  // Where a finding is, in the server's closing "(at …)", is not part of its cause; nor is a bracket in the cause.
  assert.equal(findingPattern("node 'n' (Gelu) has no schema (at graph/node[1] 'n' (Gelu))"), "node (Gelu) has no schema");
  assert.equal((html.match(/<li class="error"><span class="severity"/g) ?? []).length, 1);  // OL001, shown alone
  assert.match(html, /<ul class="diagnostics" aria-label="201 problems">/);
  // Two alike are not worth a group: both stay rows of their own.
  assert.equal(groupFindings(weakChainDiagnostics(2)).length, 3);
});

test("the finding drawn in a quick look stays visible inside its collapsed group", () => {
  const diagnostics = weakChainDiagnostics(5);
  const html = renderView({ file: "m.onnx", summary: null, diagnostics, trusted: false, graph: { index: 3, error: "x" } },
    { cspSource: "c", script: "s.js", style: "s.css" });
  assert.match(html, /<li class="error selected member" data-member="[^"]*"><span/);
  assert.equal((html.match(/ hidden><span class="severity"/g) ?? []).length, 4);
  // In an untrusted workspace a member's Fix is disabled like any other.
  assert.match(html, /data-action="fix" data-index="3" disabled/);
});

test("counts are said in the singular and the plural, and a capped search says how many it left out", () => {
  assert.equal(count(1, "node"), "1 node");
  assert.equal(count(100_000, "node"), "100,000 nodes");
  assert.equal(count(1, "match", "matches"), "1 match");
  assert.equal(searchSummary(1, 1), "1 match");
  assert.equal(searchSummary(12, 12), "12 matches");
  assert.equal(searchSummary(0, 0), "No node or tensor matches");
  assert.equal(searchSummary(SEARCH_SHOWN, 25_000), "50 of 25,000 matches shown");
});

test("whole numbers are written as toLocaleString(\"en\") writes them, without Intl", () => {
  const numbers = [0, -0, 1, -1, 999, 1000, -1000, 12_345, 100_000, 1_234_567, -9_876_543_210, Number.MAX_SAFE_INTEGER,
    -Number.MAX_SAFE_INTEGER, 1.5, 1e21, Number.NaN, Number.POSITIVE_INFINITY];
  for (let n = -20_000; n <= 2_000_000; n += 997) {
    numbers.push(n);
  }
  for (const n of numbers) {
    assert.equal(thousands(n), n.toLocaleString("en"), String(n));
  }
});

/** The residual MLP chain as the server sends it (benchmarks/models.py mlp_chain): MatMul, Add, Relu, Add per layer. */
function mlpChain(layers: number): ModelGraph {
  const ops = ["MatMul", "Add", "Relu"];
  const tensors = ["X", "W", "b"];
  const c = { path: "graph", name: "chain", ops, nodeOp: [] as number[], nodeName: [] as string[], tensors,
    inputs: [] as number[], inputEnd: [] as number[], outputs: [] as number[], outputEnd: [] as number[],
    graphInputs: [0], graphOutputs: [] as number[], initializers: [1, 2], subgraphs: [] as [number, string, string][],
    groupParent: [], groupKind: [], groupLabel: [], groupNote: [], groupTitle: [], groupSize: [], nodeGroup: [] as number[] };
  let previous = 0;
  const node = (op: number, name: string, inputs: number[]) => {
    c.nodeOp.push(op);
    c.nodeName.push(name);
    c.inputs.push(...inputs);
    c.inputEnd.push(c.inputs.length);
    tensors.push(name);
    c.outputs.push(tensors.length - 1);
    c.outputEnd.push(c.outputs.length);
    c.nodeGroup.push(-1);
    return tensors.length - 1;
  };
  for (let i = 0; i < layers; i++) {
    const mm = node(0, `mm${i}`, [previous, 1]);
    const ab = node(1, `ab${i}`, [mm, 2]);
    const r = node(2, `r${i}`, [ab]);
    previous = node(1, `res${i}`, [r, previous]);
  }
  c.graphOutputs.push(previous);
  return { graphs: [c], nodes: layers * 4 };
}

test("search on a long chain finds every Relu and the view says how many it does not list", () => {
  // The view lists the first SEARCH_SHOWN and counts the rest (src/webview/graphCanvas.ts).
  const all = new WholeGraph(mlpChain(1000), []).search("Relu", Number.POSITIVE_INFINITY);
  assert.equal(all.length, 1000);
  assert.equal(searchSummary(all.slice(0, SEARCH_SHOWN).length, all.length), "50 of 1,000 matches shown");
  const one = new WholeGraph(mlpChain(1000), []).search("mm999", Number.POSITIVE_INFINITY);
  assert.equal(searchSummary(one.length, one.length), "2 matches");  // the node mm999 and its tensor
});

test("the graph's frame: the minimap in its own strip beside the drawing, a split the keyboard can move", () => {
  const html = wholeGraphSection();
  // The minimap is not drawn over the drawing: its canvas is outside the viewport that holds the svg.
  const viewport = /<div id="graph-viewport"[\s\S]*?<\/svg>\s*<\/div>/.exec(html)![0];
  assert.doesNotMatch(viewport, /graph-minimap/);
  assert.match(html, /<\/div>\s*<div id="graph-minimap-strip" class="graph-minimap-strip">\s*<canvas id="graph-minimap"/);
  assert.match(html, /<button class="secondary" data-graph="minimap" aria-pressed="true" aria-controls="graph-minimap-strip"/);
  assert.match(html, new RegExp(`<div id="graph-split" class="graph-split" role="separator" tabindex="0" ` +
    `aria-orientation="vertical"\\s+aria-controls="graph-details"[^>]*aria-valuemin="${GRAPH_SHARE.min}"\\s+` +
    `aria-valuemax="${GRAPH_SHARE.max}" aria-valuenow="${GRAPH_SHARE.initial}"`));
  assert.match(html, /<span id="graph-search-count" class="search-count"><\/span>/);
  // Arrow keys step the split, Home and End go to its limits, and it never leaves them.
  assert.equal(shareAfterKey("ArrowLeft", 62), 57);
  assert.equal(shareAfterKey("ArrowDown", 62), 67);
  assert.equal(shareAfterKey("ArrowRight", 84), GRAPH_SHARE.max);
  assert.equal(shareAfterKey("Home", 50), GRAPH_SHARE.min);
  assert.equal(shareAfterKey("End", 50), GRAPH_SHARE.max);
  assert.equal(shareAfterKey("a", 50), undefined);
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
