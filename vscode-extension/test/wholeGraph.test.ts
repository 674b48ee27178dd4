// The whole-graph view's logic: grouping big graphs, placing findings, search, layout. `npm test`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { layoutVisible } from "../src/graphLayout";
import { renderView } from "../src/viewHtml";
import {
  describeItem, GraphColumns, LEAF, ModelGraph, nodeId, visibleGraph, WholeGraph,
} from "../src/wholeGraph";

/** A chain X -> n0 -> n1 -> ... -> Y as the server sends it (onnx-lint.modelGraph), each node with a weight. */
function chain(nodes: number, path = "graph", ops = ["MatMul", "Add", "Relu"]): GraphColumns {
  const tensors = ["X", "W"];
  const columns: GraphColumns = { path, name: "chain", ops, nodeOp: [], nodeName: [], tensors, inputs: [], inputEnd: [],
    outputs: [], outputEnd: [], graphInputs: [0, 1], graphOutputs: [], initializers: [1], subgraphs: [] };
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

test("a 100k-node graph opens as a few dozen blocks; expanding the path to a node draws it", () => {
  const model: ModelGraph = { graphs: [chain(100_000)], nodes: 100_000 };
  const whole = new WholeGraph(model, [{ index: 0, code: "OL001", severity: "error", path: "graph/node[76543]" }]);
  const overview = visibleGraph(whole, new Set());
  const blocks = overview.items.filter((i) => i.kind === "block");
  assert.ok(blocks.length > 10 && blocks.length <= 48, String(blocks.length));
  assert.equal(overview.items.filter((i) => i.kind === "node").length, 0);
  assert.equal(blocks.filter((b) => b.severity === "error").length, 1);  // the block holding the finding
  assert.ok(blocks.some((b) => b.lines.some((l) => /one of \d+ alike blocks/.test(l))));  // repeated layers say so
  const path = new Set(whole.pathTo(0, 76543));
  const opened = visibleGraph(whole, path);
  assert.ok(opened.items.some((i) => i.id === nodeId(0, 76543) && i.severity === "error"));
  assert.ok(opened.items.length < 48 * 3 + LEAF, String(opened.items.length));
  const laid = layoutVisible(opened);  // what the worker does: a few hundred boxes, not 100k
  assert.ok(laid.boxes[nodeId(0, 76543)].width > 0);
  assert.equal(laid.edges.length, opened.edges.length);
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
  assert.doesNotMatch(html, /No problems/);
  const failed = renderView({ file: "m.onnx", summary: null, diagnostics: [], trusted: true,
    error: "onnx-lint: the onnx-lint server is not running" }, resources);
  assert.doesNotMatch(failed, /No problems/);
  assert.match(renderView({ file: "m.onnx", summary: null, diagnostics: [], trusted: true, busy: "Quantizing…" }, resources),
    /<button id="quantize" class="secondary" data-action="quantize" disabled/);
});
