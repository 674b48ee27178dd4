// Pure logic (no `vscode`, no DOM): the layered layout of what the whole-graph view draws, by dagre.
// It runs in a Web Worker of the view (src/webview/layoutWorker.ts), so the page never blocks on it,
// and under the unit tests.
import dagre, { EdgeLabel, GraphLabel, NodeLabel } from "@dagrejs/dagre";
import { Visible } from "./wholeGraph";

export const CHAR_W = 7.2;
export const LINE_H = 16;
export const PAD = 8;

export interface Box { x: number; y: number; width: number; height: number }

export interface LaidOut {
  width: number;
  height: number;
  boxes: Record<string, Box>; // items and clusters
  edges: { points: { x: number; y: number }[] }[]; // in the order of Visible.edges
}

export function itemSize(lines: string[]): { width: number; height: number } {
  const longest = Math.max(...lines.map((l) => l.length));
  return { width: Math.ceil(longest * CHAR_W) + 2 * PAD, height: lines.length * LINE_H + PAD };
}

/** Top to bottom, as data flows; expanded blocks and bodies are clusters around their nodes. */
export function layoutVisible(visible: Visible): LaidOut {
  const g = new dagre.graphlib.Graph<GraphLabel, NodeLabel, EdgeLabel>({ compound: true, multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 24, ranksep: 32, edgesep: 10, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const cluster of visible.clusters) {
    g.setNode(cluster.id, { width: 0, height: 0, paddingTop: LINE_H + 8 } as NodeLabel);
  }
  for (const cluster of visible.clusters) {
    if (cluster.parent) {
      g.setParent(cluster.id, cluster.parent);
    }
  }
  for (const item of visible.items) {
    g.setNode(item.id, itemSize(item.lines));
    if (item.parent) {
      g.setParent(item.id, item.parent);
    }
  }
  visible.edges.forEach((edge, i) => g.setEdge(edge.from, edge.to, {}, `e${i}`));
  dagre.layout(g);
  const boxes: Record<string, Box> = {};
  for (const id of g.nodes()) {
    const n = g.node(id);
    boxes[id] = { x: n.x ?? 0, y: n.y ?? 0, width: n.width ?? 0, height: n.height ?? 0 };
  }
  const edges = visible.edges.map((edge, i) => ({
    points: (g.edge(edge.from, edge.to, `e${i}`)?.points ?? []).map((p) => ({ x: p.x, y: p.y })),
  }));
  const graph = g.graph();
  return { width: Math.ceil(graph.width ?? 0), height: Math.ceil(graph.height ?? 0), boxes, edges };
}
