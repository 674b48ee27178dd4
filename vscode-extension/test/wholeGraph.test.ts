// The whole-graph view's logic: grouping big graphs, placing findings, search, layout. `npm test`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { layoutVisible } from "../src/graphLayout";
import { drawable, renderView, ViewDiagnostic } from "../src/viewHtml";
import {
  describeItem, edgeShapeText, GraphColumns, graphDataMessage, graphFromMessage, groupKey, int8ErrorText, int8Level,
  ModelGraph, nodeId, shapeLabel, sharePercent, TensorValues, valuesPreview, valuesSummary, visibleGraph, WholeGraph,
} from "../src/wholeGraph";

const NO_GROUPS = { groupParent: [], groupKind: [], groupLabel: [], groupNote: [], groupTitle: [], groupSize: [] };

/** Groups as the server numbers them (parents first): each [parent, kind, label, note, nodes...]. */
function withGroups(columns: GraphColumns, groups: [number, string, string, string, number[]][]): GraphColumns {
  const nodeGroup = columns.nodeOp.map(() => -1);
  groups.forEach(([, , , , nodes], g) => nodes.forEach((n) => { nodeGroup[n] = g; }));
  const size = groups.map(() => 0);
  nodeGroup.forEach((g) => { for (let up = g; up >= 0; up = groups[up][0]) { size[up] += 1; } });
  const title = (g: number): string => (groups[g][0] >= 0 ? `${title(groups[g][0])}/` : "") + groups[g][2];
  return { ...columns, groupParent: groups.map((g) => g[0]), groupKind: groups.map((g) => g[1]),
    groupLabel: groups.map((g) => g[2]), groupNote: groups.map((g) => g[3]), groupTitle: groups.map((_g, i) => title(i)),
    groupSize: size, nodeGroup };
}

/** A long chain in nested ranges of at most 48 members, as the server groups a graph without scopes. */
function ranges(columns: GraphColumns): GraphColumns {
  const groups: [number, string, string, string, number[]][] = [];
  const split = (first: number, last: number, parent: number) => {
    const count = last - first;
    if (count <= 48) {
      if (parent >= 0) {
        groups[parent][4] = Array.from({ length: count }, (_x, k) => first + k);
      }
      return;
    }
    const pieces = Math.min(48, Math.ceil(count / 48));
    const step = Math.ceil(count / pieces);
    for (let start = first; start < last; start += step) {
      groups.push([parent, "range", `nodes ${start}–${Math.min(last, start + step) - 1}`, "", []]);
      split(start, Math.min(last, start + step), groups.length - 1);
    }
  };
  split(0, columns.nodeOp.length, -1);
  return withGroups(columns, groups);
}

/** A chain X -> n0 -> n1 -> ... -> Y as the server sends it (onnx-lint.modelGraph), each node with a weight. */
function chain(nodes: number, path = "graph", ops = ["MatMul", "Add", "Relu"]): GraphColumns {
  const tensors = ["X", "W"];
  const columns: GraphColumns = { path, name: "chain", ops, nodeOp: [], nodeName: [], tensors, inputs: [], inputEnd: [],
    outputs: [], outputEnd: [], graphInputs: [0, 1], graphOutputs: [], initializers: [1], subgraphs: [], ...NO_GROUPS,
    nodeGroup: [] };
  let previous = 0;
  for (let i = 0; i < nodes; i++) {
    columns.nodeOp.push(i % ops.length);
    columns.nodeName.push(`${ops[i % ops.length]}_${i}`);
    columns.inputs.push(previous, 1);
    columns.inputEnd.push(columns.inputs.length);
    tensors.push(i === nodes - 1 ? "Y" : `t${i}`);
    previous = tensors.length - 1;
    columns.outputs.push(previous);
    columns.outputEnd.push(columns.outputs.length);
    columns.nodeGroup.push(-1);
  }
  columns.graphOutputs.push(previous);
  return columns;
}

const small: ModelGraph = { graphs: [chain(4)], nodes: 4 };

test("a small graph is drawn node by node, with its input and output, weights left out", () => {
  const whole = new WholeGraph(small, []);
  const visible = visibleGraph(whole, new Set());
  assert.deepEqual(visible.items.map((i) => i.id), ["0:n0", "0:n1", "0:n2", "0:n3", "0:in0", "0:out5"]);
  assert.deepEqual(visible.edges.map((e) => `${e.from}>${e.to}:${e.tensor}`),
    ["0:n3>0:out5:Y", "0:in0>0:n0:X", "0:n0>0:n1:t0", "0:n1>0:n2:t1", "0:n2>0:n3:t2"]);
  assert.deepEqual(visible.items[1].lines, ["Add", "Add_1"]);
});

test("a finding colours its node and its stale tensor's edge by severity, and its body's owner", () => {
  const whole = new WholeGraph(small, [
    { index: 0, code: "OL001", severity: "error", path: "graph/output[0]", tensor: "Y" },
    { index: 1, code: "OL101", severity: "warning", path: "graph/node[1]", node: "Add_1" },
    { index: 2, code: "OL000", severity: "error", path: "model" },
  ]);
  const visible = visibleGraph(whole, new Set());
  const item = (id: string) => visible.items.find((i) => i.id === id)!;
  assert.equal(item("0:n3").severity, "error");  // computes Y
  assert.equal(item("0:out5").severity, "error");
  assert.equal(item("0:n1").severity, "warning");
  assert.equal(item("0:n0").severity, undefined);
  assert.equal(visible.edges.find((e) => e.tensor === "Y")!.severity, "error");
  assert.deepEqual(item("0:n3").findings, [0]);
  assert.equal(whole.locate({ path: "model" }), undefined);  // not a graph element
  assert.match(describeItem(item("0:n3"), whole), /^MatMul node MatMul_3, 2 inputs, 1 outputs, error here$/);
});

test("a 100k-node graph opens as a few dozen groups; expanding the path to a node draws it", () => {
  const model: ModelGraph = { graphs: [ranges(chain(100_000))], nodes: 100_000 };
  const whole = new WholeGraph(model, [{ index: 0, code: "OL001", severity: "error", path: "graph/node[76543]" }]);
  const overview = visibleGraph(whole, whole.overview());
  const blocks = overview.items.filter((i) => i.kind === "block");
  assert.ok(blocks.length > 10 && blocks.length <= 48, String(blocks.length));
  assert.equal(overview.items.filter((i) => i.kind === "node").length, 0);
  assert.equal(blocks.filter((b) => b.severity === "error").length, 1);  // the group holding the finding
  assert.match(blocks[0].lines.join(" | "), /^nodes 0–\d+ \| 2,\d{3} nodes \| MatMul×\d+, Add×\d+, Relu×\d+$/);
  const path = new Set(whole.pathTo(0, 76543));
  assert.equal(path.size, 2);
  const opened = visibleGraph(whole, path);
  assert.ok(opened.items.some((i) => i.id === nodeId(0, 76543) && i.severity === "error"));
  assert.ok(opened.items.length < 48 * 3, String(opened.items.length));
  assert.deepEqual(opened.clusters.map((c) => c.parent), [undefined, opened.clusters[0].id]);
  const laid = layoutVisible(opened);  // what the worker does: a few hundred boxes, not 100k
  assert.ok(laid.boxes[nodeId(0, 76543)].width > 0);
  assert.equal(laid.edges.length, opened.edges.length);
});

test("the host sends the graph as its JSON text, which the view reads back as the same graph", () => {
  const model: ModelGraph = { graphs: [ranges(chain(1_000))], nodes: 1_000, int8Error: { mm0: [0.25, 0.99] } };
  const findings = [{ index: 0, code: "OL001", severity: "error" as const, path: "graph/node[7]" }];
  const message = graphDataMessage(model, findings);
  assert.equal(message.type, "graphData");
  assert.equal(typeof message.graph, "string");  // one string to copy, not a million values to clone
  assert.equal(message.findings, findings);
  assert.deepEqual(graphFromMessage(message.graph), model);
  assert.equal(graphFromMessage(model), model);  // an object, as an older host sent it
  const drawn = (m: ModelGraph) => {
    const whole = new WholeGraph(m, findings);
    return visibleGraph(whole, new Set(whole.pathTo(0, 7)));
  };
  assert.deepEqual(drawn(graphFromMessage(message.graph)), drawn(model));
});

test("scopes and a series of layers: one box each, a frame when expanded, and a wrapping scope opens by itself", () => {
  // model/{embed, layers.0–2 (3 × 2 nodes), head}: the server's groups for /model/layers.k/... names.
  const model = withGroups(chain(8), [
    [-1, "scope", "model", "", [0, 7]],
    [0, "series", "layers.0–2", "3 × 2 nodes", []],
    [1, "scope", "layers.0", "", [1, 2]],
    [1, "scope", "layers.1", "", [3, 4]],
    [1, "scope", "layers.2", "", [5, 6]],
  ]);
  const whole = new WholeGraph({ graphs: [model], nodes: 8 }, [
    { index: 0, code: "OL101", severity: "warning", path: "graph/node[4]" }]);
  // The overview opens what wraps everything: the one scope, then the series alone in it, in frames.
  const opened = whole.overview();
  assert.deepEqual([...opened], ["0:g:model", "0:g:model/layers.0–2"]);
  const first = visibleGraph(whole, opened);
  assert.deepEqual(first.clusters.map((c) => c.label), ["model (8 nodes)", "layers.0–2 (3 × 2 nodes)"]);
  assert.deepEqual(first.items.filter((i) => i.kind === "block").map((i) => i.lines[0]), ["layers.0", "layers.1", "layers.2"]);
  // Collapsed, the series is one box that stands for its layers.
  const top = visibleGraph(whole, new Set(["0:g:model"]));
  const series = top.items.find((i) => i.kind === "block")!;
  assert.deepEqual(series.lines.slice(0, 2), ["layers.0–2", "3 × 2 nodes"]);
  assert.equal(series.id, groupKey(0, model, 1));
  assert.equal(series.severity, "warning");  // its layer 1 holds the finding
  assert.equal(series.parent, "0:g:model");
  assert.match(describeItem(series, whole), /^group layers\.0–2, 3 × 2 nodes: .*warning here, collapsed$/);
  assert.deepEqual(top.items.filter((i) => i.kind === "node").map((i) => i.node), [0, 7]);
  assert.deepEqual(top.edges.filter((e) => !e.from.includes(":in") && !e.to.includes(":out")).map((e) => `${e.from}>${e.to}`),
    ["0:n0>0:g:model/layers.0–2", "0:g:model/layers.0–2>0:n7"]);
  assert.deepEqual(whole.pathTo(0, 4), ["0:g:model", "0:g:model/layers.0–2", "0:g:model/layers.0–2/layers.1"]);
});

test("an initializer's finding marks every node that reads it; a named node and a graph input land too", () => {
  const whole = new WholeGraph(small, [
    { index: 0, code: "OL201", severity: "warning", path: "graph/initializer[0]", tensor: "W" },
    { index: 1, code: "OL105", severity: "error", path: "graph", node: "Relu_2" },
  ]);
  const w = whole.locate({ path: "graph/initializer[0]", tensor: "W" })!;
  assert.deepEqual([w.node, w.nodes, w.initializer], [0, [0, 1, 2, 3], true]);
  const visible = visibleGraph(whole, new Set());
  assert.deepEqual(visible.items.filter((i) => i.kind === "node").map((i) => i.severity),
    ["warning", "warning", "error", "warning"]);
  assert.deepEqual(whole.locate({ path: "graph", node: "Relu_2" })!.nodes, [2]);
  assert.deepEqual(whole.locate({ path: "graph/input[0]", tensor: "X" })!.nodes, [0]);  // its first reader
  assert.equal(whole.locate({ path: "model/opset_import[0]" }), undefined);
  assert.equal(whole.locate({ path: "model" }), undefined);
});

test("every location kind a rule emits: shown in the graph, or 'not a graph element'", () => {
  const at = (path: string, tensor: string | null = null, node: string | null = null): ViewDiagnostic =>
    ({ code: "OL000", message: "", severity: "error", fixable: false, key: [], location: { path, tensor, node }, engine: null });
  const shown = [at("graph/node[3]"), at("graph/output[0]", "Y"), at("graph/input[0]", "X"),
    at("graph/value_info[2]", "t"), at("graph/initializer[1]", "W"), at("graph", "t"), at("graph", null, "Relu_2"),
    at("graph/node[1]/then_branch/output[0]", "Y")];
  assert.deepEqual(shown.map(drawable), shown.map(() => true));
  const not = [at("model"), at("model/ir_version"), at("model/opset_import[0]"), at("graph")];  // the graph as a whole
  assert.deepEqual(not.map(drawable), not.map(() => false));
});

test("search finds nodes by name and op type and tensors by name, across bodies", () => {
  const body = chain(3, "graph/node[1]/then_branch", ["Identity"]);
  const main = chain(4);
  main.subgraphs = [[1, "then_branch", "graph/node[1]/then_branch"]];
  const whole = new WholeGraph({ graphs: [main, body], nodes: 7 }, [
    { index: 0, code: "OL001", severity: "warning", path: "graph/node[1]/then_branch/output[0]", tensor: "Y" }]);
  assert.deepEqual(whole.search("add_1").map((h) => [h.graph, h.node]), [[0, 1]]);
  assert.deepEqual(whole.search("relu").map((h) => h.node), [2]);
  assert.deepEqual(whole.search("identity").map((h) => [h.graph, h.node]), [[1, 0], [1, 1], [1, 2]]);
  assert.ok(whole.search("t1").some((h) => h.why === "tensor" && h.node === 1));
  // The finding inside the body marks the node that owns it; expanding the body draws it in place.
  const collapsed = visibleGraph(whole, new Set());
  assert.equal(collapsed.items.find((i) => i.id === "0:n1")!.severity, "warning");
  assert.ok(collapsed.items.find((i) => i.id === "0:n1")!.expandable);
  const expanded = visibleGraph(whole, new Set(whole.pathTo(1, 2)));
  assert.deepEqual(expanded.clusters.map((c) => c.id), ["1:body"]);
  assert.equal(expanded.items.find((i) => i.id === "1:n2")!.parent, "1:body");
  assert.ok(expanded.edges.some((e) => e.body && e.from === "0:n1"));
  assert.ok(layoutVisible(expanded).boxes["1:body"].width > 0);
});

test("the view has the whole-graph frame, its worker allowed by the CSP, and no 'No problems' before a lint", () => {
  const resources = { cspSource: "c", script: "s.js", style: "s.css", worker: "w.js" };
  const html = renderView({ file: "m.onnx", summary: null, diagnostics: [], trusted: true, busy: "Linting…" }, resources);
  assert.match(html, /<section id="whole-graph"/);
  assert.match(html, /data-worker="w.js"/);
  assert.match(html, /worker-src blob:; connect-src c;/);
  assert.match(html, /id="graph-announce" class="sr-only" aria-live="polite"/);
  assert.match(html, /role="application" aria-roledescription="graph"/);
  // The legend of a quantized model's colouring, hidden until a graph with INT8 error shares arrives.
  assert.match(html, /<p id="graph-int8-legend" class="legend int8-legend" hidden><strong>INT8 error share<\/strong>/);
  const steps = [...html.matchAll(/<span class="step"><span class="swatch int8-l(\d)" aria-hidden="true"><\/span>([^<]*)<\/span>/g)].map((m) => [m[1], m[2].trim()]);
  assert.deepEqual(steps, [["0", "&lt;1%"], ["1", "1%–5%"], ["2", "5%–15%"], ["3", "15%–35%"], ["4", "≥35%"]]);
  assert.doesNotMatch(html, /No problems/);
  const failed = renderView({ file: "m.onnx", summary: null, diagnostics: [], trusted: true,
    error: "onnx-lint: the onnx-lint server is not running" }, resources);
  assert.doesNotMatch(failed, /No problems/);
  assert.match(renderView({ file: "m.onnx", summary: null, diagnostics: [], trusted: true, busy: "Quantizing…" }, resources),
    /<button id="quantize" class="secondary" data-action="quantize" disabled/);
});

test("a quantized model's INT8 error colours its nodes by share, sums into its groups, and is said in words", () => {
  // onnx-lint.modelGraph of a model quantize wrote: int8Error by node name in the main graph (graphs[0]).
  const model = withGroups(chain(8), [
    [-1, "scope", "model", "", [0, 7]],
    [0, "scope", "block", "", [1, 2, 3]],
  ]);
  const whole = new WholeGraph({ graphs: [model], nodes: 8, int8Error: {
    MatMul_0: [0.6, 0.991234], MatMul_3: [0.3, 0.998123], Add_1: [0.1, 0.9999], "no such node": [0.5, 0.5] } }, []);
  assert.ok(whole.hasInt8Error);
  const index = whole.indexes[0];
  assert.deepEqual([...index.int8.keys()].sort(), [0, 1, 3]);  // names looked up once; unknown names dropped
  const all = visibleGraph(whole, new Set(["0:g:model", "0:g:model/block"]));
  const shares = Object.fromEntries(all.items.filter((i) => i.kind === "node").map((i) => [i.node, i.int8Share]));
  assert.deepEqual(shares, { 0: 0.6, 1: 0.1, 2: undefined, 3: 0.3, 4: undefined, 5: undefined, 6: undefined, 7: undefined });
  assert.ok(all.items.filter((i) => i.kind !== "node").every((i) => i.int8Share === undefined));  // inputs, outputs
  // Collapsed, a group shows its INT8 nodes' sum (and a group without INT8 nodes shows none).
  const top = visibleGraph(whole, new Set(["0:g:model"]));
  const block = top.items.find((i) => i.kind === "block")!;
  assert.ok(Math.abs(block.int8Share! - 0.4) < 1e-9);
  assert.equal(index.groupInt8!.nodes[1], 2);
  assert.ok(Math.abs(visibleGraph(whole, new Set()).items.find((i) => i.kind === "block")!.int8Share! - 1.0) < 1e-9);
  const matmul = all.items.find((i) => i.node === 0)!;
  assert.match(describeItem(matmul, whole), /^MatMul node MatMul_0, 2 inputs, 1 outputs, 60\.0% of the INT8 error$/);
  assert.match(describeItem(block, whole), /, 40\.0% of the INT8 error, collapsed$/);
  // Five colour steps; the details line.
  assert.deepEqual([0, 0.009, 0.01, 0.049, 0.05, 0.149, 0.15, 0.349, 0.35, 1].map(int8Level), [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]);
  assert.equal(int8ErrorText(0.342, 0.99812345),
    "INT8 error: 34.2% of the total; worst-output cosine 0.998123 with only this node in INT8");
  assert.equal(sharePercent(0.0001), "<0.1%");
  assert.equal(sharePercent(0), "0.0%");
  // Any other model: no INT8 colouring at all.
  const plain = new WholeGraph(small, []);
  assert.ok(!plain.hasInt8Error);
  assert.ok(visibleGraph(plain, new Set()).items.every((i) => i.int8Share === undefined));
  assert.doesNotMatch(describeItem(visibleGraph(plain, new Set()).items[0], plain), /INT8/);
});

test("the INT8 error share on a 100k-node model is placed once, in linear time, and drawn only where visible", () => {
  const big = ranges(chain(100_000));
  const errors: Record<string, [number, number]> = {};
  for (let i = 0; i < 100_000; i += 3) {  // every MatMul in INT8
    errors[`MatMul_${i}`] = [1 / 33_334, 0.9999];
  }
  const started = performance.now();
  const whole = new WholeGraph({ graphs: [big], nodes: 100_000, int8Error: errors }, []);
  const overview = visibleGraph(whole, whole.overview());
  const elapsed = performance.now() - started;
  assert.ok(elapsed < 2000, `${elapsed} ms`);
  const blocks = overview.items.filter((i) => i.kind === "block");
  assert.ok(blocks.every((b) => b.int8Share !== undefined && b.int8Share > 0));
  const total = blocks.reduce((sum, b) => sum + b.int8Share!, 0);
  assert.ok(Math.abs(total - 1) < 1e-6, String(total));
});

test("edges carry their tensor's shape, and the declared one in the finding's place where the file contradicts it", () => {
  // A chain X -> n0 -> ... -> Y, as the server sends it with the lint's inference: shapes once each, by index.
  const columns = chain(4);
  columns.shapes = ["float[batch, 16]", "float[batch, 8]", "float", "int64[2]"];
  columns.tensorShape = columns.tensors.map((name) => (name === "W" ? -1 : name === "X" ? 0 : name === "t1" ? 3 : 1));
  columns.declaredShape = [[columns.tensors.indexOf("Y"), 2]];  // Y declared a scalar; the graph computes [batch, 8]
  const whole = new WholeGraph({ graphs: [columns], nodes: 4 }, [
    { index: 0, code: "OL001", severity: "error", path: "graph/output[0]", tensor: "Y" }]);
  const visible = visibleGraph(whole, new Set());
  const edge = (tensor: string) => visible.edges.find((e) => e.tensor === tensor && !e.to.includes(":out"))
    ?? visible.edges.find((e) => e.tensor === tensor)!;
  assert.deepEqual(edgeShapeText(edge("X")), { shape: "batch×16" });
  assert.deepEqual(edgeShapeText(edge("t1")), { shape: "int64 2" });
  const y = edge("Y");
  assert.equal(y.severity, "error");
  assert.deepEqual(edgeShapeText(y), { shape: "batch×8", declared: "declared scalar" });
  // The table says the same at any zoom: each tensor with its type, the contradicted declaration beside it.
  const index = whole.indexes[0];
  assert.equal(index.tensorText(columns.tensors.indexOf("X")), "X float[batch, 16]");
  assert.equal(index.tensorText(columns.tensors.indexOf("Y")), "Y float[batch, 8] (declared float)");
  assert.equal(index.tensorText(columns.tensors.indexOf("W")), "W");  // a weight: not drawn, no shape sent
  // A server that sends no shapes: edges as before, no label.
  assert.equal(edgeShapeText(visibleGraph(new WholeGraph(small, []), new Set()).edges[0]), undefined);
});

test("shape labels are short: float implied, inference's placeholders as ?, several tensors counted", () => {
  assert.equal(shapeLabel("float[1, 64, 40, 40]"), "1×64×40×40");
  assert.equal(shapeLabel("float16[p2o.DynamicDimension.0, 16, unk__0, unk__1]"), "float16 p2o.Dynamic…×16×?×?");
  assert.equal(shapeLabel("float"), "scalar");
  assert.equal(shapeLabel("int64"), "int64 scalar");
  assert.equal(shapeLabel("float[]"), "?");
  assert.equal(shapeLabel("<no type>"), "?");
  // An edge between two collapsed groups stands for several tensors: the first one's shape, and how many more.
  assert.deepEqual(edgeShapeText({ shape: "float[8, 8]", count: 3 }), { shape: "8×8 +2" });
});

test("a constant's values: the first 16, all of them on request, its size and range, and what FP16 cannot hold", () => {
  const values: TensorValues = { dtype: "float32", dims: [24], count: 24,
    values: Array.from({ length: 24 }, (_x, i) => String(i === 23 ? 120000 : i / 2)), min: "0", max: "120000",
    fp16: "1 of 24 value(s) exceed FP16's range ±65504 (largest magnitude 1.2e+05)" };
  assert.equal(valuesPreview(values), "[0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7, 7.5, …]");
  assert.ok(valuesPreview(values, true)!.endsWith("11, 120000]"));
  assert.equal(valuesSummary(values), "float32 24 · 24 values · range 0 … 120000");
  // A big weight: no values, its size and range; one stored outside the file: its size and why.
  assert.equal(valuesPreview({ dtype: "float32", dims: [64, 3, 3, 3], count: 1728 }), undefined);
  assert.equal(valuesSummary({ dtype: "float32", dims: [512, 4096], count: 2_097_152, min: "-0.5", max: "0.5" }),
    "float32 512×4096 · 2,097,152 values · range -0.5 … 0.5");
  assert.equal(valuesSummary({ dtype: "float32", dims: [], count: 1, values: ["2"], min: "2", max: "2" }),
    "float32 scalar · 1 value · all 2");
  assert.equal(valuesSummary({ dtype: "float32", dims: [3], count: 3, note: "stored in external data: values not read" }),
    "float32 3 · 3 values · stored in external data: values not read");
  assert.equal(valuesSummary({ dtype: "float32", dims: [2], count: 2, values: ["nan", "1"], min: "1", max: "1", nonFinite: 1 }),
    "float32 2 · 2 values · all 1 · 1 not finite");
});
