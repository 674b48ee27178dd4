// Pure logic (no `vscode`, no DOM): the whole model as a graph, reduced to what can be drawn.
//
// The server sends every graph as columns (`onnx-lint.modelGraph`). A 100k-node graph cannot be laid
// out or drawn node by node, so nodes are grouped into nested blocks of consecutive nodes (file order is
// topological order, so a block is a stretch of the computation: linear chains and repeated layers
// collapse into one box each, and blocks with the same operators say they are alike). Only what is
// expanded is laid out: the overview of a 100k-node model is a few dozen boxes.

export interface GraphColumns {
  path: string;
  name: string;
  ops: string[];
  nodeOp: number[];
  nodeName: string[];
  tensors: string[];
  inputs: number[];
  inputEnd: number[];
  outputs: number[];
  outputEnd: number[];
  graphInputs: number[];
  graphOutputs: number[];
  initializers: number[];
  subgraphs: [number, string, string][];
}

export interface ModelGraph {
  graphs: GraphColumns[];
  nodes: number;
}

export type Severity = "error" | "warning" | "info";

/** A finding as the view knows it: its index in the view's list, severity and location. */
export interface GraphFinding {
  index: number;
  code: string;
  severity: Severity;
  path: string;
  tensor?: string | null;
  node?: string | null;
}

/** Nodes a block shows directly; a bigger block holds sub-blocks. */
export const LEAF = 120;
/** Sub-blocks per block at most (the overview of any graph has about this many boxes). */
export const FANOUT = 48;

const RANK: Record<Severity, number> = { error: 3, warning: 2, info: 1 };

export function worse(a: Severity | undefined, b: Severity | undefined): Severity | undefined {
  if (!a) {
    return b;
  }
  return !b || RANK[a] >= RANK[b] ? a : b;
}

/** A range of consecutive nodes [first, last) of one graph. */
export interface Block {
  first: number;
  last: number;
}

export function blockKey(graph: number, block: Block): string {
  return `${graph}:b${block.first}-${block.last}`;
}

/** The sub-blocks of a block, or null when it shows its nodes directly. */
export function childBlocks(block: Block): Block[] | null {
  const size = block.last - block.first;
  if (size <= LEAF) {
    return null;
  }
  const pieces = Math.min(FANOUT, Math.ceil(size / LEAF));
  const step = Math.ceil(size / pieces);
  const blocks: Block[] = [];
  for (let first = block.first; first < block.last; first += step) {
    blocks.push({ first, last: Math.min(block.last, first + step) });
  }
  return blocks;
}

/** What one graph's columns say, indexed once: who produces each tensor, which are weights, its findings. */
export class GraphIndex {
  readonly producer: Int32Array;
  readonly weight: Uint8Array;
  readonly isInput: Uint8Array;
  readonly nodeSeverity = new Map<number, Severity>();
  readonly tensorSeverity = new Map<number, Severity>();
  readonly nodeFindings = new Map<number, number[]>();
  readonly bodies = new Map<number, number[]>(); // node -> graph indices of its bodies
  private tensorIds: Map<string, number> | undefined;

  constructor(readonly columns: GraphColumns, readonly graph: number) {
    const c = columns;
    this.producer = new Int32Array(c.tensors.length).fill(-1);
    let start = 0;
    for (let i = 0; i < c.outputEnd.length; i++) {
      for (let k = start; k < c.outputEnd[i]; k++) {
        if (c.outputs[k] >= 0) {
          this.producer[c.outputs[k]] = i;
        }
      }
      start = c.outputEnd[i];
    }
    this.weight = new Uint8Array(c.tensors.length);
    for (const t of c.initializers) {
      this.weight[t] = 1;
    }
    this.isInput = new Uint8Array(c.tensors.length);
    for (const t of c.graphInputs) {
      this.isInput[t] = 1;
    }
  }

  get size(): number {
    return this.columns.nodeOp.length;
  }

  tensorId(name: string): number | undefined {
    if (!this.tensorIds) {
      this.tensorIds = new Map(this.columns.tensors.map((t, i) => [t, i]));
    }
    return this.tensorIds.get(name);
  }

  inputsOf(node: number): number[] {
    return this.columns.inputs.slice(node ? this.columns.inputEnd[node - 1] : 0, this.columns.inputEnd[node]);
  }

  outputsOf(node: number): number[] {
    return this.columns.outputs.slice(node ? this.columns.outputEnd[node - 1] : 0, this.columns.outputEnd[node]);
  }

  op(node: number): string {
    return this.columns.ops[this.columns.nodeOp[node]];
  }

  /** The worst finding severity among a block's nodes. */
  blockSeverity(block: Block): Severity | undefined {
    let found: Severity | undefined;
    for (const [node, severity] of this.nodeSeverity) {
      if (node >= block.first && node < block.last) {
        found = worse(found, severity);
      }
    }
    return found;
  }

  /** "MatMul×50, Add×50, Relu×20": the operators of a block, most frequent first. */
  opSummary(block: Block, most = 3): string {
    const counts = new Map<number, number>();
    for (let i = block.first; i < block.last; i++) {
      const op = this.columns.nodeOp[i];
      counts.set(op, (counts.get(op) ?? 0) + 1);
    }
    const sorted = [...counts].sort((a, b) => b[1] - a[1]);
    const shown = sorted.slice(0, most).map(([op, n]) => `${this.columns.ops[op]}×${n}`);
    return shown.join(", ") + (sorted.length > most ? ", …" : "");
  }

  /** Blocks with the same operators in the same order are alike (a repeated layer): a signature of them. */
  signature(block: Block): string {
    let hash = 0;
    for (let i = block.first; i < block.last; i++) {
      hash = (Math.imul(hash, 31) + this.columns.nodeOp[i] + 1) | 0;
    }
    return `${block.last - block.first}:${hash}`;
  }
}

const ITEM = /^(?<graph>.+)\/(?<kind>output|input|value_info|node|initializer)\[(?<index>\d+)\]$/;

/** The graphs, indexed, with the findings placed on their nodes and tensors. */
export class WholeGraph {
  readonly indexes: GraphIndex[];
  readonly byPath = new Map<string, number>();
  readonly parent = new Map<number, { graph: number; node: number }>();

  constructor(readonly model: ModelGraph, findings: GraphFinding[]) {
    this.indexes = model.graphs.map((g, i) => new GraphIndex(g, i));
    model.graphs.forEach((g, i) => this.byPath.set(g.path, i));
    this.indexes.forEach((index, g) => {
      for (const [node, , path] of index.columns.subgraphs) {
        const body = this.byPath.get(path);
        if (body !== undefined) {
          index.bodies.set(node, [...(index.bodies.get(node) ?? []), body]);
          this.parent.set(body, { graph: g, node });
        }
      }
    });
    for (const finding of findings) {
      this.place(finding);
    }
  }

  /** Where a finding is: (graph, node) when it names a node or a tensor some node computes. */
  locate(finding: Pick<GraphFinding, "path" | "tensor">): { graph: number; node?: number; tensor?: number } | undefined {
    const match = ITEM.exec(finding.path);
    const graphPath = match?.groups?.graph ?? finding.path;
    const graph = this.byPath.get(graphPath);
    if (graph === undefined) {
      return undefined;
    }
    const index = this.indexes[graph];
    const tensor = finding.tensor ? index.tensorId(finding.tensor) : undefined;
    let node: number | undefined;
    if (match?.groups?.kind === "node" && Number(match.groups.index) < index.size) {
      node = Number(match.groups.index);
    } else if (tensor !== undefined && index.producer[tensor] >= 0) {
      node = index.producer[tensor];
    } else if (tensor !== undefined) {  // a graph input or a weight: its first reader
      const reader = index.columns.inputs.indexOf(tensor);
      if (reader >= 0) {
        node = index.columns.inputEnd.findIndex((end) => end > reader);
      }
    }
    return { graph, node, tensor };
  }

  private place(finding: GraphFinding): void {
    const where = this.locate(finding);
    if (!where) {
      return;
    }
    const index = this.indexes[where.graph];
    if (where.tensor !== undefined) {
      index.tensorSeverity.set(where.tensor, worse(index.tensorSeverity.get(where.tensor), finding.severity)!);
    }
    if (where.node !== undefined) {
      index.nodeSeverity.set(where.node, worse(index.nodeSeverity.get(where.node), finding.severity)!);
      index.nodeFindings.set(where.node, [...(index.nodeFindings.get(where.node) ?? []), finding.index]);
      // A finding inside a body marks the node that owns the body, up to the main graph.
      let up = this.parent.get(where.graph);
      while (up) {
        const owner = this.indexes[up.graph];
        owner.nodeSeverity.set(up.node, worse(owner.nodeSeverity.get(up.node), finding.severity)!);
        up = this.parent.get(up.graph);
      }
    }
  }

  /** Search node names, op types and tensor names of every graph; the first `limit` matches. */
  search(query: string, limit = 50): SearchHit[] {
    const needle = query.trim().toLowerCase();
    const hits: SearchHit[] = [];
    if (!needle) {
      return hits;
    }
    for (const index of this.indexes) {
      const c = index.columns;
      const ops = c.ops.map((op) => op.toLowerCase() === needle || op.toLowerCase().endsWith(`.${needle}`));
      for (let i = 0; i < c.nodeOp.length && hits.length < limit; i++) {
        if (ops[c.nodeOp[i]] || c.nodeName[i].toLowerCase().includes(needle)) {
          hits.push({ graph: index.graph, node: i, text: `${index.op(i)} ${c.nodeName[i]}`.trim(), why: "node" });
        }
      }
      for (let t = 0; t < c.tensors.length && hits.length < limit; t++) {
        if (c.tensors[t].toLowerCase().includes(needle) && index.producer[t] >= 0) {
          hits.push({ graph: index.graph, node: index.producer[t], text: `tensor ${c.tensors[t]}`, why: "tensor" });
        }
      }
    }
    return hits;
  }

  /** The blocks and bodies to expand so that a node is drawn (outermost first). */
  pathTo(graph: number, node: number): string[] {
    const keys: string[] = [];
    let block: Block = { first: 0, last: this.indexes[graph].size };
    let children = childBlocks(block);
    while (children) {
      block = children.find((b) => node >= b.first && node < b.last)!;
      keys.push(blockKey(graph, block));
      children = childBlocks(block);
    }
    const up = this.parent.get(graph);
    return up ? [...this.pathTo(up.graph, up.node), `${graph}:body`, ...keys] : keys;
  }
}

export interface SearchHit {
  graph: number;
  node: number;
  text: string;
  why: "node" | "tensor";
}

// -- what is drawn --------------------------------------------------------------------------

export type ItemKind = "node" | "block" | "input" | "output";

export interface Item {
  id: string;
  kind: ItemKind;
  graph: number;
  lines: string[];
  parent?: string; // the expanded block or body (a cluster) it is drawn in
  node?: number;
  block?: Block;
  severity?: Severity;
  expandable?: boolean;
  findings?: number[];
}

export interface Cluster {
  id: string;
  label: string;
  parent?: string;
}

export interface Edge {
  from: string;
  to: string;
  tensor: string;
  count: number;
  severity?: Severity;
  body?: boolean; // from a node to the body drawn beside it
}

export interface Visible {
  items: Item[];
  clusters: Cluster[];
  edges: Edge[];
}

const MAX_NAME = 28;

function cut(text: string, max = MAX_NAME): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function nodeId(graph: number, node: number): string {
  return `${graph}:n${node}`;
}

/**
 * The items, clusters and edges drawn for a set of expanded blocks and bodies: each node is drawn
 * as itself when every block around it is expanded, else as the outermost collapsed block holding it.
 */
export function visibleGraph(whole: WholeGraph, expanded: ReadonlySet<string>): Visible {
  const items: Item[] = [];
  const clusters: Cluster[] = [];
  const edges: Edge[] = [];
  const seen = new Map<string, Edge>();
  const alike = new Map<string, number>();

  const addEdge = (from: string, to: string, tensor: string, severity: Severity | undefined, body = false) => {
    if (from === to) {
      return;
    }
    const key = `${from}>${to}`;
    const edge = seen.get(key);
    if (edge) {
      edge.count += 1;
      edge.severity = worse(edge.severity, severity);
      return;
    }
    const created: Edge = { from, to, tensor, count: 1, severity, body };
    seen.set(key, created);
    edges.push(created);
  };

  const drawGraph = (graph: number, parent: string | undefined) => {
    const index = whole.indexes[graph];
    const c = index.columns;
    const rep = new Array<string>(index.size);
    const blocks = (block: Block, within: string | undefined) => {
      const children = childBlocks(block);
      if (!children) {
        for (let i = block.first; i < block.last; i++) {
          const id = nodeId(graph, i);
          rep[i] = id;
          const bodies = index.bodies.get(i) ?? [];
          items.push({ id, kind: "node", graph, node: i, parent: within, severity: index.nodeSeverity.get(i),
            lines: c.nodeName[i] && c.nodeName[i] !== index.op(i) ? [index.op(i), cut(c.nodeName[i])] : [index.op(i)],
            expandable: bodies.length > 0, findings: index.nodeFindings.get(i) });
          for (const body of bodies) {
            if (expanded.has(`${body}:body`)) {
              const cluster = `${body}:body`;
              clusters.push({ id: cluster, label: `${index.op(i)} body ${c.subgraphs.find((s) => s[2] === whole.model.graphs[body].path)?.[1] ?? ""}`, parent: within });
              drawGraph(body, cluster);
            }
          }
        }
        return;
      }
      const signatures = children.map((b) => index.signature(b));
      for (const s of signatures) {
        alike.set(s, (alike.get(s) ?? 0) + 1);
      }
      children.forEach((child, k) => {
        const key = blockKey(graph, child);
        if (expanded.has(key)) {
          clusters.push({ id: key, label: `nodes ${child.first}–${child.last - 1}`, parent: within });
          blocks(child, key);
          return;
        }
        for (let i = child.first; i < child.last; i++) {
          rep[i] = key;
        }
        const same = alike.get(signatures[k]) ?? 1;
        items.push({ id: key, kind: "block", graph, block: child, parent: within, severity: index.blockSeverity(child),
          expandable: true,
          lines: [`${child.last - child.first} nodes (${child.first}–${child.last - 1})`, cut(index.opSummary(child), 40),
            ...(same > 1 ? [`one of ${same} alike blocks`] : [])] });
      });
    };
    blocks({ first: 0, last: index.size }, parent);
    for (const t of c.graphInputs) {
      if (!index.weight[t]) {
        items.push({ id: `${graph}:in${t}`, kind: "input", graph, parent, lines: ["input", cut(c.tensors[t])],
          severity: index.tensorSeverity.get(t) });
      }
    }
    for (const t of c.graphOutputs) {
      items.push({ id: `${graph}:out${t}`, kind: "output", graph, parent, lines: ["output", cut(c.tensors[t])],
        severity: index.tensorSeverity.get(t) });
      const from = index.producer[t];
      if (from >= 0) {
        addEdge(rep[from], `${graph}:out${t}`, c.tensors[t], index.tensorSeverity.get(t));
      }
    }
    let start = 0;
    for (let i = 0; i < index.size; i++) {
      const end = c.inputEnd[i];
      for (let k = start; k < end; k++) {
        const t = c.inputs[k];
        if (t < 0 || index.weight[t]) {
          continue;
        }
        const from = index.producer[t];
        if (from >= 0) {
          addEdge(rep[from], rep[i], c.tensors[t], index.tensorSeverity.get(t));
        } else if (index.isInput[t]) {
          addEdge(`${graph}:in${t}`, rep[i], c.tensors[t], index.tensorSeverity.get(t));
        }
      }
      start = end;
    }
    const up = whole.parent.get(graph);
    if (up !== undefined) {  // the owner node, drawn, points at its body
      const owner = nodeId(up.graph, up.node);
      const roots = items.filter((item) => item.graph === graph && item.parent === parent &&
        (item.kind === "input" || !edges.some((e) => e.to === item.id)));
      for (const root of roots.slice(0, 4)) {
        addEdge(owner, root.id, "body", undefined, true);
      }
    }
  };
  drawGraph(0, undefined);
  return { items, clusters, edges };
}

/** The words a screen reader says for a drawn item (and the table row says the same). */
export function describeItem(item: Item, whole: WholeGraph): string {
  const severity = item.severity ? `, ${item.severity === "info" ? "note" : item.severity} here` : "";
  if (item.kind === "block") {
    return `block of ${item.lines[0]}: ${item.lines[1]}${severity}, collapsed`;
  }
  if (item.kind === "input" || item.kind === "output") {
    return `graph ${item.kind} ${item.lines[1]}${severity}`;
  }
  const index = whole.indexes[item.graph];
  const name = index.columns.nodeName[item.node!];
  const inputs = index.inputsOf(item.node!).filter((t) => t >= 0).length;
  const outputs = index.outputsOf(item.node!).filter((t) => t >= 0).length;
  return `${index.op(item.node!)} node${name ? ` ${name}` : ""}, ${inputs} inputs, ${outputs} outputs${severity}` +
    (item.expandable ? ", has a body" : "");
}
