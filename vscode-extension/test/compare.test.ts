// A model compared with its twin in the model view (src/compareHtml.ts), on real answers of the server's
// onnx-lint.compareModels, committed under test/fixtures/ by test/fixtures/make_comparisons.py: `npm test`.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { compareMarks, compareRows, Comparison, MAX_ROWS, renderCompare } from "../src/compareHtml";

const FIXTURES = path.join(__dirname, "..", "..", "test", "fixtures");

function fixture(name: string): Comparison {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), "utf8")) as Comparison;
}

const text = (html: string) => html.replace(/<[^>]+>/g, " ").replace(/&#39;/g, "'").replace(/&amp;/g, "&")
  .replace(/\s+/g, " ").trim();

test("the quantized model's view says it is the twin, and lists what moved to INT8 and to FP16", () => {
  const result = fixture("compare-quantized");
  const html = renderCompare({ other: "weak.onnx", result }, "weak.int8.onnx");
  const shown = text(html);
  assert.match(shown, /Compared with weak\.onnx Stop comparing/);
  assert.match(shown, /This model is the twin of weak\.onnx \(weak\.int8\.onnx was quantized from weak\.onnx\)/);
  assert.match(shown, /precision FP32 4 → FP16 3, INT8 1/);
  assert.match(shown, /Precision changed \(4\) MatMul 'MatMul_1' FP32 → INT8 \(Q\/DQ\)/);
  assert.match(shown, /Declarations changed \(1\) output 'Y' : float → float\[batch, 8\]/);
  // Every node is in this model's graph: each row selects it, none sends the user to the other model.
  assert.equal((html.match(/data-action="revealChange"/g) ?? []).length, compareRows(result).length);
  assert.doesNotMatch(html, /revealInOther/);
});

test("marks: the twin's nodes carry their new precision; the original's say where they go", () => {
  const result = fixture("compare-quantized");
  const marks = compareMarks(result);
  const int8 = marks.find((m) => m.badge === "INT8")!;
  assert.equal(int8.kind, "quantized");
  assert.equal(int8.node, result.nodes.find((n) => n.name === "MatMul_1")!.index);
  assert.deepEqual(marks.filter((m) => m.kind === "half").map((m) => m.badge), ["FP16", "FP16", "FP16"]);
  const declared = marks.find((m) => m.kind === "declaration")!;
  assert.equal(declared.detail, "output 'Y': float → float[batch, 8]");
  const fromOriginal = compareMarks({ ...result, viewed: "before" });
  assert.equal(fromOriginal.find((m) => m.kind === "quantized")!.badge, "→ INT8");
  assert.equal(fromOriginal.find((m) => m.kind === "quantized")!.node, result.nodes[0].before);
});

test("a node only the other model has is a button that opens it there", () => {
  const result = fixture("compare-slim");  // the original's view: onnxslim removed two of its nodes
  assert.equal(result.viewed, "before");
  const html = renderCompare({ other: "plain.slim.onnx", result }, "plain.onnx");
  assert.match(text(html), /This model is the original of plain\.slim\.onnx/);
  assert.match(text(html), /Removed \(2\) Identity 'copy' Identity removed Reshape 'flatten' Reshape removed/);
  // On this graph: each removed node's row selects it.
  assert.equal((html.match(/<li class="change change-removed"><button [^>]*data-action="revealChange"/g) ?? []).length, 2);
  const seenFromTwin = { ...result, viewed: "after" as const };
  const twinHtml = renderCompare({ other: "plain.onnx", result: seenFromTwin }, "plain.slim.onnx");
  assert.equal((twinHtml.match(/<li class="change change-removed"><span [^>]*>[^<]*<\/span> <button [^>]*data-action="revealInOther"/g)
    ?? []).length, 2);
  assert.match(text(twinHtml), /Show in plain\.onnx/);
  assert.deepEqual(compareMarks(seenFromTwin).filter((m) => m.kind === "removed"), []);
});

test("long lists stop at MAX_ROWS and name the command that lists them all", () => {
  const result = fixture("compare-quantized");
  const many = Array.from({ length: MAX_ROWS + 5 }, (_, i) => ({ ...result.nodes[0], name: `n${i}`, index: i }));
  const big = { ...result, nodes: many, counts: { ...result.counts, precision: 9000 } };
  const html = renderCompare({ other: "weak.onnx", result: big }, "weak.int8.onnx");
  assert.match(text(html), /Precision changed \(9,000\)/);
  assert.match(text(html), /… and 8,800 more: onnx-lint compare weak\.onnx weak\.int8\.onnx --limit 0 lists them all/);
});

test("identical models, a comparison on its way and a failed one each say so", () => {
  const same = { ...fixture("compare-slim"), identical: true };
  assert.match(text(renderCompare({ other: "a.onnx", result: same }, "b.onnx")),
    /No node, declaration, operator count or weight type differs/);
  assert.match(renderCompare({ other: "a.onnx" }, "b.onnx"), /role="status">Comparing…/);
  assert.match(renderCompare({ other: "a.onnx", error: "onnx-lint: broken" }, "b.onnx"), /role="alert">onnx-lint: broken/);
});
