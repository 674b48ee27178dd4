// Pure logic (no `vscode` import): a finding's neighbourhood, laid out by dagre and drawn as SVG.
// The server sends the neighbourhood (`onnx-lint.findingGraph`); layout runs here in the extension
// host so the webview needs no script of its own to draw it, and the drawing is unit-testable.
import dagre, { EdgeLabel, GraphLabel, NodeLabel } from "@dagrejs/dagre";
import { escapeHtml } from "./html";

export interface GraphNode {
  id: string;
  kind: "node" | "input" | "output" | "initializer";
  label: string;
  op: string;
  domain?: string;
  path?: string;
  focus: boolean;
  hidden: number;
}

export interface GraphEdge {
  from: string;
  to: string;
  tensor: string;
  declared: string | null;
  derived: string | null;
  engine: string | null;
  stale: boolean;
  focus: boolean;
}

/** The server's answer to `onnx-lint.findingGraph` (fields it may add later are ignored). */
export interface FindingGraph {
  graph: string;
  location: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  truncated: boolean;
}

// Label text is laid out before any browser measures it: a monospace font makes its width predictable.
const CHAR_W = 7.3;
const LINE_H = 16;
const PAD = 8;

interface Box { width: number; height: number; x: number; y: number }

function textBox(lines: string[]): { width: number; height: number } {
  const longest = Math.max(...lines.map((l) => l.length));
  return { width: Math.ceil(longest * CHAR_W) + 2 * PAD, height: lines.length * LINE_H + PAD };
}

const TERMINAL_TITLES = { input: "graph input", output: "graph output", initializer: "initializer" };

function nodeLines(node: GraphNode): string[] {
  if (node.kind !== "node") {
    return [TERMINAL_TITLES[node.kind], node.label];
  }
  const op = node.domain ? `${node.domain}.${node.op}` : node.op;
  const lines = node.label && node.label !== node.op ? [op, node.label] : [op];
  if (node.hidden > 0) {
    lines.push(`+${node.hidden} not drawn`);
  }
  return lines;
}

/** Drawn label lines stay short (exporters write dims like `floor(floor((h - 1)/2 + 1)...)`); the
 * aria-label and the table under the drawing keep the whole text. */
export const MAX_LABEL = 40;

function cut(text: string): string {
  return text.length > MAX_LABEL ? `${text.slice(0, MAX_LABEL - 1)}…` : text;
}

function edgeLines(edge: GraphEdge): string[] {
  const lines = [cut(edge.tensor)];
  if (edge.declared !== null) {
    lines.push(cut(`declared ${edge.declared}`));
  }
  lines.push(cut(`derived ${edge.derived ?? "unknown"}`));
  return lines;
}

function nodeDescription(node: GraphNode): string {
  return nodeLines(node).join(", ") + (node.focus ? " (the finding)" : "");
}

function edgeDescription(edge: GraphEdge): string {
  const parts = [`tensor ${edge.tensor}`];
  if (edge.declared !== null) {
    parts.push(`declared ${edge.declared}`);
  }
  parts.push(`derived ${edge.derived ?? "unknown"}${edge.engine ? ` by ${edge.engine}` : ""}`);
  return parts.join(", ") + (edge.stale ? " (stale)" : "");
}

export interface Layout {
  width: number;
  height: number;
  nodes: Map<string, Box>;
  edges: { edge: GraphEdge; points: { x: number; y: number }[]; label: Box }[];
}

/** Top-to-bottom layered layout, as data flows; each edge gets a label box with its shapes. */
export function layoutFinding(drawing: FindingGraph): Layout {
  const g = new dagre.graphlib.Graph<GraphLabel, NodeLabel, EdgeLabel>({ multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 36, edgesep: 16, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const node of drawing.nodes) {
    g.setNode(node.id, textBox(nodeLines(node)));
  }
  drawing.edges.forEach((edge, i) => {
    const label = textBox(edgeLines(edge));
    g.setEdge(edge.from, edge.to, { width: label.width, height: label.height, labelpos: "c" }, `e${i}`);
  });
  dagre.layout(g);
  const nodes = new Map<string, Box>();
  for (const id of g.nodes()) {
    const n = g.node(id);
    nodes.set(id, { width: n.width, height: n.height, x: n.x ?? 0, y: n.y ?? 0 });
  }
  const edges = drawing.edges.map((edge, i) => {
    const e = g.edge(edge.from, edge.to, `e${i}`);
    return {
      edge,
      points: (e.points ?? []).map((p) => ({ x: p.x, y: p.y })),
      label: { width: e.width ?? 0, height: e.height ?? 0, x: e.x ?? 0, y: e.y ?? 0 },
    };
  });
  const graph = g.graph();
  return { width: Math.ceil(graph.width ?? 0), height: Math.ceil(graph.height ?? 0), nodes, edges };
}

function textLines(lines: string[], box: Box, classes: (i: number) => string): string {
  const top = box.y - box.height / 2 + PAD / 2 + LINE_H * 0.75;
  return lines.map((line, i) =>
    `<text x="${box.x.toFixed(1)}" y="${(top + i * LINE_H).toFixed(1)}" class="${classes(i)}">${escapeHtml(line)}</text>`,
  ).join("");
}

const f = (n: number) => n.toFixed(1);

/** The SVG markup: nodes are focusable (keyboard) and say what they are to screen readers. */
export function findingSvg(drawing: FindingGraph, layout: Layout = layoutFinding(drawing)): string {
  const parts: string[] = [];
  for (const { edge, points, label } of layout.edges) {
    const classes = ["edge", edge.stale ? "stale" : "", edge.focus ? "focus" : ""].filter(Boolean).join(" ");
    const d = points.map((p, i) => `${i === 0 ? "M" : "L"}${f(p.x)},${f(p.y)}`).join(" ");
    parts.push(`<g class="${classes}" data-tensor="${escapeHtml(edge.tensor)}">` +
      `<path d="${d}" marker-end="url(#arrow${edge.stale ? "-stale" : ""})"/>` +
      `<g class="edge-label" tabindex="0" role="img" aria-label="${escapeHtml(edgeDescription(edge))}">` +
      `<rect x="${f(label.x - label.width / 2)}" y="${f(label.y - label.height / 2)}" width="${f(label.width)}" height="${f(label.height)}" rx="3"/>` +
      textLines(edgeLines(edge), label, (i) => (i === 0 ? "tensor" : edgeLines(edge)[i].startsWith("declared") ? "declared" : "derived")) +
      `</g></g>`);
  }
  for (const node of drawing.nodes) {
    const box = layout.nodes.get(node.id);
    if (!box) {
      continue;
    }
    const classes = ["node", node.kind, node.focus ? "focus" : ""].filter(Boolean).join(" ");
    const shape = node.kind === "node"
      ? `<rect x="${f(box.x - box.width / 2)}" y="${f(box.y - box.height / 2)}" width="${f(box.width)}" height="${f(box.height)}" rx="4"/>`
      : `<rect x="${f(box.x - box.width / 2)}" y="${f(box.y - box.height / 2)}" width="${f(box.width)}" height="${f(box.height)}" rx="${f(box.height / 2)}"/>`;
    parts.push(`<g class="${classes}" data-id="${escapeHtml(node.id)}" data-op="${escapeHtml(node.op)}" tabindex="0" role="img" ` +
      `aria-label="${escapeHtml(nodeDescription(node))}">${shape}` +
      textLines(nodeLines(node), box, (i) => (i === 0 ? "op" : "name")) + `</g>`);
  }
  const marker = (id: string) =>
    `<marker id="${id}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">` +
    `<path d="M0,0 L10,5 L0,10 z"/></marker>`;
  return `<svg class="finding-graph" xmlns="http://www.w3.org/2000/svg" width="${layout.width}" height="${layout.height}" ` +
    `viewBox="0 0 ${layout.width} ${layout.height}" role="group" aria-label="Neighbourhood of ${escapeHtml(drawing.location)}">` +
    `<defs>${marker("arrow")}${marker("arrow-stale")}</defs>${parts.join("")}</svg>`;
}

/** The same facts as a table: readable by screen readers, selectable, and sortable by eye. */
export function edgeTable(drawing: FindingGraph): string {
  const names = new Map(drawing.nodes.map((n) => [n.id, n.kind === "node" ? (n.label || n.op) : `${n.kind} ${n.label}`]));
  const rows = drawing.edges.map((e) =>
    `<tr class="${e.stale ? "stale" : ""}"><td><code>${escapeHtml(e.tensor)}</code></td>` +
    `<td>${escapeHtml(names.get(e.from) ?? e.from)} → ${escapeHtml(names.get(e.to) ?? e.to)}</td>` +
    `<td class="declared">${escapeHtml(e.declared ?? "—")}</td><td class="derived">${escapeHtml(e.derived ?? "unknown")}</td>` +
    `<td>${escapeHtml(e.engine ?? "")}</td></tr>`);
  return `<table class="edges"><thead><tr><th>tensor</th><th>from → to</th><th>declared</th><th>derived</th><th>engine</th></tr></thead>` +
    `<tbody>${rows.join("")}</tbody></table>`;
}
