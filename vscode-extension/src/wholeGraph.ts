// Pure logic (no `vscode`, no DOM): the whole model as a graph, reduced to what can be drawn.
//
// The server sends every graph as columns (`onnx-lint.modelGraph`), with its nodes grouped the way the
// model is built (onnx_lint/server/graph_groups.py): name scopes, numbered repeats as one series, chains
// cut into their repeats, ranges last. A collapsed group is one box; only what is expanded is laid out,
// so the overview of a 100k-node model is a few dozen boxes.
import type { ChangeMark } from "./compareHtml";
import { count, thousands } from "./words";

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
  // The groups, numbered parents first (a group's descendants follow it); -1: the graph itself.
  groupParent: number[];
  groupKind: string[]; // scope | series | repeat | range
  groupLabel: string[];
  groupNote: string[]; // "32 × 27 nodes" for a series
  groupTitle: string[]; // the full name, unique in its graph
  groupSize: number[];
  nodeGroup: number[]; // each node's innermost group
  // What flows on each edge (from the lint's inference; absent from a server that does not say):
  shapes?: string[]; // each distinct type once, as ONNX's text syntax writes it: "float[1, 64, 40, 40]"
  tensorShape?: number[]; // each tensor's derived type in `shapes`, -1 unknown (weights: not drawn)
  declaredShape?: [number, number][]; // [tensor, type in `shapes`] where the file declares what it contradicts
}

export interface ModelGraph {
  graphs: GraphColumns[];
  nodes: number;
  /**
   * For a model `onnx-lint quantize` wrote: each INT8 node of the main graph (by name) with its share (0..1) of
   * the summed INT8 error at the outputs and the worst output's cosine with FP32 when it alone is INT8.
   */
  int8Error?: Record<string, [number, number]>;
}

/** The host's message with a model's graph for its view (graphDataMessage). */
export interface GraphDataMessage {
  type: "graphData";
  graph: string; // the ModelGraph as JSON text
  findings: GraphFinding[];
}

/**
 * The graph goes to the view as its JSON text, not as an object: VS Code passes a view's message through the
 * workbench (JSON) and the webview's host frame (a structured clone read and written again) before the view reads
 * it. A 100k-node graph is a million values; as one string each of those steps copies it in a few milliseconds,
 * where reading and writing the values took 80-190 ms on the view's thread alone. The view parses it once
 * (graphFromMessage).
 */
export function graphDataMessage(graph: ModelGraph, findings: GraphFinding[]): GraphDataMessage {
  return { type: "graphData", graph: JSON.stringify(graph), findings };
}

/** The graph of a graphData message: its JSON text parsed (an object, as an older host sent it, as it is). */
export function graphFromMessage(graph: string | ModelGraph): ModelGraph {
  return typeof graph === "string" ? JSON.parse(graph) as ModelGraph : graph;
}

/** Where the INT8 error share of a node changes its colour: below 1%, 1–5%, 5–15%, 15–35%, 35% and more. */
export const INT8_LEVELS = [0.01, 0.05, 0.15, 0.35];

/** The colour step (0 to 4) of a share of the INT8 error. */
export function int8Level(share: number): number {
  let level = 0;
  while (level < INT8_LEVELS.length && share >= INT8_LEVELS[level]) {
    level++;
  }
  return level;
}

/** "34.2%" (one decimal; "<0.1%" for a share that rounds to 0 but is not 0). */
export function sharePercent(share: number): string {
  return share > 0 && share < 0.0005 ? "<0.1%" : `${(share * 100).toFixed(1)}%`;
}

/** The line a quantized node's details say about the error it causes. */
export function int8ErrorText(share: number, cosineAlone: number): string {
  return `INT8 error: ${sharePercent(share)} of the total; worst-output cosine ${cosineAlone.toFixed(6)} ` +
    "with only this node in INT8";
}

export type Severity = "error" | "warning" | "info";
export type { ChangeMark } from "./compareHtml";

/** A finding as the view knows it: its index in the view's list, severity and location. */
export interface GraphFinding {
  index: number;
  code: string;
  severity: Severity;
  path: string;
  tensor?: string | null;
  node?: string | null;
}

const RANK: Record<Severity, number> = { error: 3, warning: 2, info: 1 };

export function worse(a: Severity | undefined, b: Severity | undefined): Severity | undefined {
  if (!a) {
    return b;
  }
  return !b || RANK[a] >= RANK[b] ? a : b;
}

export function groupKey(graph: number, columns: GraphColumns, group: number): string {
  return `${graph}:g:${columns.groupTitle[group]}`;
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
  readonly int8 = new Map<number, [number, number]>(); // INT8 node -> [share of the error, cosine alone]
  readonly change = new Map<number, ChangeMark>(); // a node that differs in the model compared with
  groupChanges: Int32Array | undefined; // changed nodes under each group
  groupInt8: { share: Float64Array; nodes: Int32Array } | undefined; // summed over each group's INT8 nodes
  readonly groups: number;
  readonly declared = new Map<number, string>(); // tensor -> the type the file declares, where it contradicts
  readonly subtreeEnd: Int32Array; // a group's descendants are the groups numbered up to this
  private readonly byGroup: Int32Array; // the nodes, group by group in number order (-1 first)
  private readonly groupStart: Int32Array; // where group g's own nodes start in byGroup: [g + 1]
  private tensorIds: Map<string, number> | undefined;
  private nodeIds: Map<string, number> | undefined;
  private groupKeys: string[] | undefined;
  private readonly opCounts = new Map<number, [number, number][]>(); // a group's [op, count], most first

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
    for (const [t, at] of c.declaredShape ?? []) {
      const declared = c.shapes?.[at];
      if (declared !== undefined) {
        this.declared.set(t, declared);
      }
    }
    // The groups: each one's subtree, and the nodes sorted by group (a counting sort, file order kept).
    this.groups = c.groupParent.length;
    this.subtreeEnd = new Int32Array(this.groups);
    for (let g = this.groups - 1; g >= 0; g--) {
      this.subtreeEnd[g] = Math.max(this.subtreeEnd[g], g + 1);
      const parent = c.groupParent[g];
      if (parent >= 0) {
        this.subtreeEnd[parent] = Math.max(this.subtreeEnd[parent], this.subtreeEnd[g]);
      }
    }
    this.groupStart = new Int32Array(this.groups + 2);
    for (const g of c.nodeGroup) {
      this.groupStart[g + 2] += 1;
    }
    for (let b = 1; b < this.groupStart.length; b++) {
      this.groupStart[b] += this.groupStart[b - 1];
    }
    this.byGroup = new Int32Array(c.nodeGroup.length);
    const next = this.groupStart.slice();
    c.nodeGroup.forEach((g, node) => { this.byGroup[next[g + 1]++] = node; });
  }

  get size(): number {
    return this.columns.nodeOp.length;
  }

  /** A group's key (groupKey), made once, when first asked for: drawing asks on every layout, for each group it
   * draws or looks up in what is expanded (most groups of a 100k-node model are inside a collapsed one: never). */
  key(group: number): string {
    this.groupKeys ??= new Array<string>(this.groups);
    return this.groupKeys[group] ??= groupKey(this.graph, this.columns, group);
  }

  tensorId(name: string): number | undefined {
    if (!this.tensorIds) {
      this.tensorIds = new Map(this.columns.tensors.map((t, i) => [t, i]));
    }
    return this.tensorIds.get(name);
  }

  nodeId(name: string): number | undefined {
    if (!this.nodeIds) {
      this.nodeIds = new Map();
      this.columns.nodeName.forEach((n, i) => { if (n && !this.nodeIds!.has(n)) { this.nodeIds!.set(n, i); } });
    }
    return this.nodeIds.get(name);
  }

  /** The nodes that read a tensor (an initializer's consumers), in file order. */
  readers(tensor: number): number[] {
    const found: number[] = [];
    const c = this.columns;
    let node = 0;
    for (let k = 0; k < c.inputs.length; k++) {
      while (k >= c.inputEnd[node]) {
        node++;
      }
      if (c.inputs[k] === tensor && found[found.length - 1] !== node) {
        found.push(node);
      }
    }
    return found;
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

  /** A tensor's derived type ("float[1, 64, 40, 40]"), when the server sent it. */
  shape(tensor: number): string | undefined {
    const at = this.columns.tensorShape?.[tensor];
    return at === undefined || at < 0 ? undefined : this.columns.shapes?.[at];
  }

  /** "X float[batch, 16]" (and what the file declares instead, where it contradicts): a tensor in the table. */
  tensorText(tensor: number): string {
    const name = this.columns.tensors[tensor];
    const shape = this.shape(tensor);
    const declared = this.declared.get(tensor);
    return shape === undefined ? name : `${name} ${shape}${declared === undefined ? "" : ` (declared ${declared})`}`;
  }

  /** Each INT8 node's share of the error, by node name (a model quantize wrote): looked up once per model, and
   * summed into every group that holds the node, so drawing never searches for it. */
  placeInt8(errors: Record<string, [number, number]>): void {
    const c = this.columns;
    const share = new Float64Array(this.groups);
    const nodes = new Int32Array(this.groups);
    for (const [name, value] of Object.entries(errors)) {
      const node = this.nodeId(name);
      if (node === undefined || !Array.isArray(value) || typeof value[0] !== "number" || typeof value[1] !== "number") {
        continue;
      }
      this.int8.set(node, [value[0], value[1]]);
      for (let g = c.nodeGroup[node]; g >= 0; g = c.groupParent[g]) {
        share[g] += value[0];
        nodes[g] += 1;
      }
    }
    this.groupInt8 = this.int8.size ? { share, nodes } : undefined;
  }

  /** Mark the nodes that differ from the model compared with (none: the comparison is over). */
  placeChanges(marks: ChangeMark[]): void {
    const c = this.columns;
    this.change.clear();
    const changed = new Int32Array(this.groups);
    for (const mark of marks) {
      if (mark.node < 0 || mark.node >= this.size) {
        continue;
      }
      this.change.set(mark.node, mark);
      for (let g = c.nodeGroup[mark.node]; g >= 0; g = c.groupParent[g]) {
        changed[g] += 1;
      }
    }
    this.groupChanges = this.change.size ? changed : undefined;
  }

  /** A group's INT8 nodes' summed share of the error; undefined when it holds none. */
  groupInt8Share(group: number): number | undefined {
    return this.groupInt8 && this.groupInt8.nodes[group] > 0 ? this.groupInt8.share[group] : undefined;
  }

  /** The worst finding severity among a group's nodes (a group's descendants are numbered after it). */
  groupSeverity(group: number): Severity | undefined {
    const [low, high] = [group, this.subtreeEnd[group]];
    let found: Severity | undefined;
    for (const [node, severity] of this.nodeSeverity) {
      const g = this.columns.nodeGroup[node];
      if (g >= low && g < high) {
        found = worse(found, severity);
      }
    }
    return found;
  }

  /** Every node of a group, its sub-groups' included, in file order within each group. */
  groupNodes(group: number): Int32Array {
    return this.byGroup.subarray(this.groupStart[group + 1], this.groupStart[this.subtreeEnd[group] + 1]);
  }

  /** The nodes drawn in a group itself (or, for -1, in the graph itself), not in a sub-group. */
  directNodes(group: number): Int32Array {
    return this.byGroup.subarray(this.groupStart[group + 1], this.groupStart[group + 2]);
  }

  childGroups(group: number): number[] {
    const children: number[] = [];
    for (let g = group + 1; g < (group < 0 ? this.groups : this.subtreeEnd[group]); g++) {
      if (this.columns.groupParent[g] === group) {
        children.push(g);
      }
    }
    return children;
  }

  /** "MatMul×50, Add×50, Relu×20": the operators of a group, most frequent first (ties in the order first met).
   * Counted once per group: a collapsed group of 100k nodes is drawn on every layout. */
  opSummary(group: number, most = 3): string {
    let sorted = this.opCounts.get(group);
    if (sorted === undefined) {
      const counts = new Int32Array(this.columns.ops.length);
      const met: number[] = [];
      const nodes = this.groupNodes(group);
      const nodeOp = this.columns.nodeOp;
      for (let k = 0; k < nodes.length; k++) {
        const op = nodeOp[nodes[k]];
        if (counts[op]++ === 0) {
          met.push(op);
        }
      }
      sorted = met.map((op): [number, number] => [op, counts[op]]).sort((a, b) => b[1] - a[1]);
      this.opCounts.set(group, sorted);
    }
    const shown = sorted.slice(0, most).map(([op, n]) => `${this.columns.ops[op]}×${n}`);
    return shown.join(", ") + (sorted.length > most ? ", …" : "");
  }

  /** "layers.0–31 (32 × 27 nodes)", "self_attn (42 nodes)": a group as its frame and its box say it. */
  groupSizeText(group: number): string {
    const c = this.columns;
    return c.groupNote[group] || `${thousands(c.groupSize[group])} node${c.groupSize[group] === 1 ? "" : "s"}`;
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
    if (model.int8Error && this.indexes[0]) {
      this.indexes[0].placeInt8(model.int8Error);  // keyed by node name in the main graph
    }
  }

  /** Mark the nodes that differ in a compared model, graph by graph (an empty list clears them). */
  placeChanges(marks: ChangeMark[]): void {
    const byGraph = new Map<number, ChangeMark[]>();
    for (const mark of marks) {
      const graph = this.byPath.get(mark.graph);
      if (graph !== undefined) {
        byGraph.set(graph, [...(byGraph.get(graph) ?? []), mark]);
      }
    }
    this.indexes.forEach((index, graph) => index.placeChanges(byGraph.get(graph) ?? []));
  }

  /** Whether a comparison marks any node. */
  get hasChanges(): boolean {
    return this.indexes.some((index) => index.change.size > 0);
  }

  /** Whether the model carries the INT8 error of its nodes (a model `onnx-lint quantize` wrote). */
  get hasInt8Error(): boolean {
    return (this.indexes[0]?.int8.size ?? 0) > 0;
  }

  /**
   * Where a finding is: the node it names (by position, or by name), the node that computes the tensor it
   * names, a graph input's first reader, or, for an initializer (a weight, which is not drawn), every
   * node that reads it. Undefined for what is not in a graph (the model, its opset imports).
   */
  locate(finding: Pick<GraphFinding, "path" | "tensor" | "node">): Place | undefined {
    const match = ITEM.exec(finding.path);
    const graphPath = match?.groups?.graph ?? finding.path;
    const graph = this.byPath.get(graphPath);
    if (graph === undefined) {
      return undefined;
    }
    const index = this.indexes[graph];
    const tensor = finding.tensor ? index.tensorId(finding.tensor) : undefined;
    const kind = match?.groups?.kind;
    if (kind === "node" && Number(match!.groups!.index) < index.size) {
      return { graph, node: Number(match!.groups!.index), nodes: [Number(match!.groups!.index)], tensor };
    }
    if (tensor !== undefined && (kind === "initializer" || index.weight[tensor])) {
      const nodes = index.readers(tensor);
      return { graph, node: nodes[0], nodes, tensor, initializer: true };
    }
    if (tensor !== undefined && index.producer[tensor] >= 0) {
      return { graph, node: index.producer[tensor], nodes: [index.producer[tensor]], tensor };
    }
    if (tensor !== undefined) {  // a graph input: its first reader
      const [reader] = index.readers(tensor);
      return { graph, node: reader, nodes: reader === undefined ? [] : [reader], tensor };
    }
    const named = !kind && finding.node ? index.nodeId(finding.node) : undefined;  // a node named, not placed
    return { graph, node: named, nodes: named === undefined ? [] : [named] };
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
    for (const node of where.nodes) {
      index.nodeSeverity.set(node, worse(index.nodeSeverity.get(node), finding.severity)!);
      index.nodeFindings.set(node, [...(index.nodeFindings.get(node) ?? []), finding.index]);
    }
    if (where.nodes.length) {
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

  /** The groups and bodies to expand so that a node is drawn (outermost first). */
  pathTo(graph: number, node: number): string[] {
    const index = this.indexes[graph];
    const keys: string[] = [];
    for (let g = index.columns.nodeGroup[node]; g >= 0; g = index.columns.groupParent[g]) {
      keys.unshift(groupKey(graph, index.columns, g));
    }
    const up = this.parent.get(graph);
    return up ? [...this.pathTo(up.graph, up.node), `${graph}:body`, ...keys] : keys;
  }

  /** What the view opens expanded: while a graph's top holds a single group (and a few nodes beside it),
   * that group, so that a model wrapped in one scope or one long series opens to what is inside. */
  overview(): Set<string> {
    const open = new Set<string>();
    const index = this.indexes[0];
    if (!index) {
      return open;
    }
    let level = -1;
    for (;;) {
      const children = index.childGroups(level);
      if (children.length !== 1 || index.directNodes(level).length > 8) {
        return open;
      }
      level = children[0];
      open.add(groupKey(0, index.columns, level));
    }
  }
}

/** A finding's place in the drawing (see WholeGraph.locate). */
export interface Place {
  graph: number;
  node?: number; // the node "Show in graph" selects
  nodes: number[]; // every node marked (an initializer's readers)
  tensor?: number;
  initializer?: boolean;
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
  parent?: string; // the expanded group or body (a cluster) it is drawn in
  node?: number;
  group?: number; // a collapsed group ("block")
  severity?: Severity;
  expandable?: boolean;
  findings?: number[];
  int8Share?: number; // a quantized model: the node's (a group's: its nodes') share of the INT8 error
  change?: ChangeMark; // compared with another model: how this node differs there
  changes?: number; // a collapsed group: how many of its nodes differ
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
  shape?: string; // the first tensor's derived type ("float[1, 64, 40, 40]")
  declared?: string; // what the file declares for it instead, where that contradicts the derived type
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
 * The items, clusters and edges drawn for a set of expanded groups and bodies: each node is drawn
 * as itself when every group around it is expanded, else as the outermost collapsed group holding it.
 */
export function visibleGraph(whole: WholeGraph, expanded: ReadonlySet<string>): Visible {
  const items: Item[] = [];
  const clusters: Cluster[] = [];
  const edges: Edge[] = [];
  const seen = new Map<string, Edge>();

  const addEdge = (from: string, to: string, tensor: string, severity: Severity | undefined, body = false,
    shape?: string, declared?: string) => {
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
    if (shape !== undefined) {
      created.shape = shape;
    }
    if (declared !== undefined) {
      created.declared = declared;
    }
    seen.set(key, created);
    edges.push(created);
  };

  const drawGraph = (graph: number, parent: string | undefined) => {
    const index = whole.indexes[graph];
    const c = index.columns;
    // What each node is drawn as: the collapsed group (its number) that holds it, or -1, itself. Numbers, not ids:
    // a 100k-node model draws a few hundred items, and its edges are looked at only where two of them differ.
    const rep = new Int32Array(index.size);
    // Each group: -1 when it and every group around it are expanded (drawn as a frame), else the
    // outermost collapsed group holding it (drawn as one box). Parents are numbered first.
    const shown = new Int32Array(index.groups);
    const key = (g: number) => index.key(g);
    const within = (g: number) => (g >= 0 ? key(g) : parent);
    const repId = (i: number) => (rep[i] >= 0 ? key(rep[i]) : nodeId(graph, i));
    // The loops below run over every group, node and input of the graph on each layout, once each, so mostly before
    // the engine has compiled them: what they read is taken into locals first.
    const { groupParent, nodeGroup, inputs, inputEnd } = c;
    const { weight, producer, isInput, size } = index;
    for (let g = 0; g < index.groups; g++) {
      const up = groupParent[g];
      shown[g] = up >= 0 && shown[up] !== -1 ? shown[up] : expanded.has(key(g)) ? -1 : g;
      if (shown[g] === -1) {
        clusters.push({ id: key(g), label: `${c.groupLabel[g]} (${index.groupSizeText(g)})`, parent: within(up) });
      } else if (shown[g] === g) {
        items.push({ id: key(g), kind: "block", graph, group: g, parent: within(up), severity: index.groupSeverity(g),
          expandable: true, lines: [cut(c.groupLabel[g], 40), index.groupSizeText(g), cut(index.opSummary(g), 40)],
          int8Share: index.groupInt8Share(g), changes: index.groupChanges?.[g] || undefined });
      }
    }
    for (let i = 0; i < size; i++) {
      const g = nodeGroup[i];
      if (g >= 0 && shown[g] !== -1) {
        rep[i] = shown[g];
        continue;
      }
      const id = nodeId(graph, i);
      rep[i] = -1;
      const bodies = index.bodies.get(i) ?? [];
      items.push({ id, kind: "node", graph, node: i, parent: within(g), severity: index.nodeSeverity.get(i),
        lines: c.nodeName[i] && c.nodeName[i] !== index.op(i) ? [index.op(i), cut(c.nodeName[i])] : [index.op(i)],
        expandable: bodies.length > 0, findings: index.nodeFindings.get(i), int8Share: index.int8.get(i)?.[0],
        change: index.change.get(i) });
      for (const body of bodies) {
        if (expanded.has(`${body}:body`)) {
          const cluster = `${body}:body`;
          clusters.push({ id: cluster, label: `${index.op(i)} body ${c.subgraphs.find((s) => s[2] === whole.model.graphs[body].path)?.[1] ?? ""}`, parent: within(g) });
          drawGraph(body, cluster);
        }
      }
    }
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
        addEdge(repId(from), `${graph}:out${t}`, c.tensors[t], index.tensorSeverity.get(t), false, index.shape(t),
          index.declared.get(t));
      }
    }
    let start = 0;
    for (let i = 0; i < size; i++) {
      const end = inputEnd[i];
      for (let k = start; k < end; k++) {
        const t = inputs[k];
        if (t < 0 || weight[t]) {
          continue;
        }
        const from = producer[t];
        if (from >= 0) {
          if (rep[from] >= 0 && rep[from] === rep[i]) {
            continue;  // inside one collapsed group: no edge
          }
          addEdge(repId(from), repId(i), c.tensors[t], index.tensorSeverity.get(t), false, index.shape(t),
            index.declared.get(t));
        } else if (isInput[t]) {
          addEdge(`${graph}:in${t}`, repId(i), c.tensors[t], index.tensorSeverity.get(t), false, index.shape(t),
            index.declared.get(t));
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
  const notes = (item.severity ? `, ${item.severity === "info" ? "note" : item.severity} here` : "") +
    (item.int8Share === undefined ? "" : `, ${sharePercent(item.int8Share)} of the INT8 error`) +
    (item.change ? `, compared: ${item.change.detail}` : "") +
    (item.changes ? `, ${thousands(item.changes)} changed` : "");
  if (item.kind === "block") {
    return `group ${item.lines[0]}, ${item.lines[1]}: ${item.lines[2]}${notes}, collapsed`;
  }
  if (item.kind === "input" || item.kind === "output") {
    return `graph ${item.kind} ${item.lines[1]}${notes}`;
  }
  const index = whole.indexes[item.graph];
  const name = index.columns.nodeName[item.node!];
  const inputs = index.inputsOf(item.node!).filter((t) => t >= 0).length;
  const outputs = index.outputsOf(item.node!).filter((t) => t >= 0).length;
  return `${index.op(item.node!)} node${name ? ` ${name}` : ""}, ${inputs} inputs, ${outputs} outputs${notes}` +
    (item.expandable ? ", has a body" : "");
}

// -- what flows on an edge, and a constant's values ------------------------------------------------------

/** A dim as an edge label shows it: inference's own placeholder names ("unk__3") as "?", long names cut. */
function dimText(dim: string): string {
  const trimmed = dim.trim();
  return /^unk__\d+$/.test(trimmed) || trimmed === "" ? "?" : cut(trimmed, 12);
}

/**
 * A type as a short edge label: "float[1, 64, 40, 40]" -> "1×64×40×40", "int64[2]" -> "int64 2", a scalar
 * "float" -> "scalar", no shape ("float[]", "<no type>") -> "?". Float tensors go without their type, the usual case.
 */
export function shapeLabel(type: string): string {
  const match = /^([A-Za-z0-9_#]+)(?:\[(.*)\])?$/.exec(type.trim());
  if (!match) {
    return "?";
  }
  const [, elem, dims] = match;
  if (dims === undefined) {
    return elem === "float" ? "scalar" : `${elem} scalar`;
  }
  const shape = dims.trim() === "" ? "?" : dims.split(",").map(dimText).join("×");
  return elem === "float" ? shape : `${elem} ${shape}`;
}

/** An edge's shape label: the derived shape, and what the file declares instead where it contradicts it. */
export function edgeShapeText(edge: Pick<Edge, "shape" | "declared" | "count">): { shape: string; declared?: string } | undefined {
  if (edge.shape === undefined) {
    return undefined;
  }
  const shape = shapeLabel(edge.shape) + (edge.count > 1 ? ` +${edge.count - 1}` : "");
  return edge.declared === undefined ? { shape } : { shape, declared: `declared ${shapeLabel(edge.declared)}` };
}

/** Where edge labels are drawn: from this zoom on, a label is big enough to read. */
export const EDGE_LABEL_ZOOM = 0.8;

/** A constant's values as the server sends them (onnx-lint.graphNode): a small tensor's every value, a bigger
 * one's size and range. */
export interface TensorValues {
  dtype: string;
  dims: number[];
  count: number;
  values?: string[]; // all of them (at most 4096)
  min?: string;
  max?: string;
  nonFinite?: number; // NaN and infinities
  fp16?: string; // what FP16 cannot hold (OL201's words)
  note?: string; // why the values are not shown (external data, too big to read)
}

/** How many values the details show before "show all". */
export const PREVIEW_VALUES = 16;

/** "[0.5, 1, 2, …]": the first values of a constant (all of them when `all`). */
export function valuesPreview(v: TensorValues, all = false): string | undefined {
  if (!v.values) {
    return undefined;
  }
  const shown = all ? v.values : v.values.slice(0, PREVIEW_VALUES);
  return `[${shown.join(", ")}${shown.length < v.values.length ? ", …" : ""}]`;
}

/** "float32 24 · 24 values · range -2 … 1.2e+05": a constant's type, size and range, in one line. */
export function valuesSummary(v: TensorValues): string {
  const dims = v.dims.length ? v.dims.join("×") : "scalar";
  const parts = [`${v.dtype} ${dims}`, count(v.count, "value")];
  if (v.min !== undefined && v.max !== undefined) {
    parts.push(v.min === v.max ? `all ${v.min}` : `range ${v.min} … ${v.max}`);
  }
  if (v.nonFinite) {
    parts.push(`${thousands(v.nonFinite)} not finite`);
  }
  if (v.note) {
    parts.push(v.note);
  }
  return parts.join(" · ");
}
