// The whole-graph view in the page: an SVG drawing with pan, zoom, fit and a minimap, search, a
// details pane, keyboard navigation, an ARIA live region and a table kept in sync with the drawing.
// Layout runs in a Web Worker; the page only draws what the worker placed (a few hundred boxes at most,
// since blocks collapse), and panning moves one transform.
import { Box, LaidOut } from "../graphLayout";
import {
  ChangeMark, describeItem, GraphFinding, int8ErrorText, int8Level, Item, ModelGraph, nodeId, SearchHit, sharePercent, Visible,
  visibleGraph, WholeGraph,
} from "../wholeGraph";
import { EDGE_LABEL_ZOOM, edgeShapeText, PREVIEW_VALUES, TensorValues, valuesPreview, valuesSummary } from "../wholeGraph";
import { count, SEARCH_SHOWN, searchSummary, thousands } from "../words";

const LINE_H = 16;
const PAD = 8;
// A press that moves less than this (in CSS pixels) before it is released is a click, not a pan.
const DRAG_PX = 4;

export interface NodeDetails {
  graph: string;
  index: number;
  path: string;
  name: string;
  op: string;
  domain: string;
  attributes: { name: string; value: string; values?: TensorValues }[];
  inputs: TensorDetails[];
  outputs: TensorDetails[];
  subgraphs: string[];
  int8Error?: { share: number; cosineAlone: number }; // a node of a model quantize wrote, in INT8
}

interface TensorDetails {
  tensor: string;
  declared: string | null;
  derived: string | null;
  engine: string | null;
  stale: boolean;
  initializer: boolean;
  values?: TensorValues; // an initializer's values
}

function esc(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function byId<T extends Element>(id: string): T {
  return document.getElementById(id) as unknown as T;
}

/** Makes a worker from the bundled script: a webview may not start one from its resource origin. */
async function startWorker(url: string): Promise<Worker> {
  const source = await (await fetch(url)).text();
  return new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })));
}

/** A task of its own for what follows, so that the page can paint and take input in between: a MessageChannel
 * message, which a hidden page does not hold back the way it holds back timers. */
function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(undefined);
  });
}

/** How "Show in graph" and the first selection on open bring a node into view: whether the drawing takes the
 * keyboard focus, and whether it centres the node always or only when the node is out of sight. */
interface RevealOptions {
  focus?: boolean;
  centre?: boolean | "ifHidden";
}

export class GraphCanvas {
  private whole: WholeGraph | undefined;
  private visible: Visible = { items: [], clusters: [], edges: [] };
  private laidOut: LaidOut | undefined;
  private expanded = new Set<string>();
  private selected: string | undefined;
  private mark: { tensor: string; why: string } | undefined; // the finding's tensor, named in the details
  private order: Item[] = [];
  private view = { x: 0, y: 0, k: 1 };
  private worker: Promise<Worker>;
  private request = 0;
  private pending = new Map<number, (result: { laidOut?: LaidOut; error?: string; ms?: number }) => void>();
  private afterLayout: (() => void) | undefined;
  readonly timings: { firstPaint?: number; layoutMs?: number; items?: number } = {};
  private started = performance.now();
  private minimapShown = true;
  private changes: ChangeMark[] = []; // the comparison's marks, kept across new data
  /** Told when the user shows or hides the minimap (the page keeps it in the webview's state). */
  onMinimapToggle: ((shown: boolean) => void) | undefined;

  constructor(workerUrl: string, private readonly post: (message: unknown) => void) {
    this.worker = startWorker(workerUrl);
    void this.worker.then((worker) => {
      worker.onmessage = (event) => {
        const resolve = this.pending.get(event.data.id);
        this.pending.delete(event.data.id);
        resolve?.(event.data);
      };
    });
    this.bind();
  }

  private get svg(): SVGSVGElement { return byId("graph-svg"); }
  private get layer(): SVGGElement { return byId("graph-layer"); }
  private get viewport(): HTMLElement { return byId("graph-viewport"); }

  /** New data from the server (a model opened, or changed on disk): keep what the user expanded. */
  async setData(model: ModelGraph, findings: GraphFinding[], started?: number): Promise<void> {
    if (started !== undefined) {
      this.started = started;
    }
    // Three long steps for a 100k-node graph, each a task of its own (not one frame for all): the message read
    // (its JSON parsed), the graph indexed, what to draw found.
    await nextTask();
    this.whole = new WholeGraph(model, findings);
    this.whole.placeChanges(this.changes);  // a comparison outlives a re-lint of the model
    byId<HTMLElement>("graph-int8-legend").hidden = !this.whole.hasInt8Error;  // a model quantize wrote
    byId<HTMLElement>("graph-compare-legend").hidden = !this.whole.hasChanges;
    const opening = this.laidOut === undefined;
    // On open the first finding's node is selected, its details shown: the groups that hold it are opened in
    // the first layout, so that the first paint already shows it.
    const first = opening ? this.firstFinding(findings) : undefined;
    if (opening) {
      this.expanded = this.whole.overview();  // a model in one scope, or one long series, opens inside it
      first?.open.forEach((key) => this.expanded.add(key));
    }
    byId<HTMLElement>("graph-status").textContent = `${count(model.nodes, "node")} in ${count(model.graphs.length, "graph")}`;
    await nextTask();
    await this.relayout(opening);  // fit the first time; later (a fix, a change) keep the place
    if (first) {
      // The keyboard stays where VS Code put it; the view moves only if the node is out of sight.
      await this.revealFinding(first.finding, { focus: false, centre: "ifHidden" });
    }
  }

  /** Mark the nodes that differ in the model compared with (an empty list: the comparison is over), and redraw. */
  async setChanges(marks: ChangeMark[]): Promise<void> {
    this.changes = marks;
    if (!this.whole) {
      return;  // placed when the graph arrives
    }
    this.whole.placeChanges(marks);
    byId<HTMLElement>("graph-compare-legend").hidden = !this.whole.hasChanges;
    await this.relayout(false);
  }

  /** The first finding placed on a node, and the groups to open to draw that node. */
  private firstFinding(findings: GraphFinding[]): { finding: GraphFinding; open: string[] } | undefined {
    for (const finding of findings) {
      const where = this.whole?.locate(finding);
      if (where?.node !== undefined) {
        return { finding, open: this.whole!.pathTo(where.graph, where.node) };
      }
    }
    return undefined;
  }

  private async layout(visible: Visible): Promise<LaidOut> {
    const worker = await this.worker;
    const id = ++this.request;
    const answer = await new Promise<{ laidOut?: LaidOut; error?: string; ms?: number }>((resolve) => {
      this.pending.set(id, resolve);
      worker.postMessage({ id, visible });
    });
    if (!answer.laidOut) {
      throw new Error(answer.error ?? "layout failed");
    }
    this.timings.layoutMs = answer.ms;
    return answer.laidOut;
  }

  private async relayout(fit: boolean): Promise<void> {
    if (!this.whole) {
      return;
    }
    const visible = visibleGraph(this.whole, this.expanded);
    const busy = byId<HTMLElement>("graph-busy");
    busy.hidden = false;
    try {
      const laidOut = await this.layout(visible);
      this.visible = visible;
      this.laidOut = laidOut;
      this.draw();
      if (fit) {
        this.overview();
      }
      if (this.timings.firstPaint === undefined) {
        requestAnimationFrame(() => {
          this.timings.firstPaint = performance.now() - this.started;
          this.timings.items = visible.items.length;
          this.viewport.dataset.firstPaintMs = this.timings.firstPaint.toFixed(0);
          this.viewport.dataset.layoutMs = (this.timings.layoutMs ?? 0).toFixed(0);
        });
      }
      this.afterLayout?.();
      this.afterLayout = undefined;
    } catch (error) {
      byId<HTMLElement>("graph-status").textContent = `Cannot lay the graph out: ${(error as Error).message}`;
    } finally {
      busy.hidden = true;
    }
  }

  // -- drawing ---------------------------------------------------------------------------------

  private draw(): void {
    const laid = this.laidOut!;
    const parts: string[] = [];
    for (const cluster of this.visible.clusters) {
      const b = laid.boxes[cluster.id];
      parts.push(`<g class="cluster" data-id="${esc(cluster.id)}"><rect x="${b.x - b.width / 2}" y="${b.y - b.height / 2}" ` +
        `width="${b.width}" height="${b.height}" rx="6"/><text class="cluster-label" x="${b.x - b.width / 2 + 4}" ` +
        `y="${b.y - b.height / 2 - 4}">${esc(cluster.label)}</text></g>`);  // above its frame: dagre leaves no room inside
    }
    this.visible.edges.forEach((edge, i) => {
      const points = laid.edges[i].points;
      if (points.length < 2) {
        return;
      }
      const d = "M" + points.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join("L");
      const classes = ["edge", edge.severity ?? "", edge.severity ? "stale" : "", edge.body ? "body" : ""].filter(Boolean).join(" ");
      const label = edge.count > 1 ? `${edge.tensor} +${edge.count - 1}` : edge.tensor;
      parts.push(`<g class="${classes}" data-tensor="${esc(edge.tensor)}"><title>${esc(label)}</title>` +
        `<path d="${d}" marker-end="url(#g-arrow${edge.severity ? "-" + edge.severity : ""})"/></g>`);
    });
    this.visible.items.forEach((item) => {
      const b = laid.boxes[item.id];
      const share = item.int8Share;
      const classes = ["item", item.kind, item.severity ?? "", item.expandable ? "expandable" : "",
        share === undefined ? "" : `int8 int8-l${int8Level(share)}`,
        item.change ? `changed change-${item.change.kind}` : item.changes ? "changed change-group" : ""]
        .filter(Boolean).join(" ");
      const top = b.y - b.height / 2 + PAD / 2 + LINE_H * 0.75;
      const text = item.lines.map((line, i) => `<text x="${b.x.toFixed(1)}" y="${(top + i * LINE_H).toFixed(1)}" ` +
        `class="${i === 0 ? "op" : "name"}">${esc(line)}</text>`).join("");
      parts.push(`<g class="${classes}" id="gi-${esc(item.id)}" data-id="${esc(item.id)}" role="img" ` +
        `${share === undefined ? "" : `data-int8-share="${share}" `}` +
        `aria-label="${esc(describeItem(item, this.whole!))}"><rect x="${(b.x - b.width / 2).toFixed(1)}" ` +
        `y="${(b.y - b.height / 2).toFixed(1)}" width="${b.width}" height="${b.height}" ` +
        `rx="${item.kind === "node" || item.kind === "block" ? 4 : b.height / 2}"/>${text}` +
        `${share === undefined ? "" : this.int8Bar(b, share)}${this.changeBadge(b, item)}</g>`);
    });
    parts.push(this.edgeShapes(laid));
    this.layer.innerHTML = parts.join("");
    this.showEdgeShapes();
    // Reading order for the keyboard and the table: top to bottom, left to right.
    this.order = [...this.visible.items].sort((a, b) => {
      const p = laid.boxes[a.id];
      const q = laid.boxes[b.id];
      return p.y - q.y || p.x - q.x;
    });
    this.fillTable();
    if (this.selected && !laid.boxes[this.selected]) {
      this.selected = undefined;
    }
    this.markSelection();
    this.drawMinimap();
  }

  /** Each edge's tensor shape, a small label at the middle of its path; where the file declares a type the graph
   * contradicts, that too, in the finding colour (a tspan coloured by the page's .stale class). Shown only from
   * EDGE_LABEL_ZOOM on (showEdgeShapes); the details and the table say the same at any zoom. */
  private edgeShapes(laid: LaidOut): string {
    const labels = this.visible.edges.map((edge, i) => {
      const text = edge.body ? undefined : edgeShapeText(edge);
      const points = laid.edges[i]?.points ?? [];
      if (!text || points.length < 2) {
        return "";
      }
      const a = points[Math.floor((points.length - 1) / 2)];
      const b = points[Math.ceil((points.length - 1) / 2)];
      const chars = text.shape.length + (text.declared ? text.declared.length + 1 : 0);
      const x = (a.x + b.x) / 2 + 6 + chars * 3.6;  // beside the line: the page's text is centred on x
      const y = (a.y + b.y) / 2 + 4;
      return `<text class="edge-shape${text.declared ? " contradicted" : ""}" x="${x.toFixed(1)}" y="${y.toFixed(1)}" ` +
        `data-tensor="${esc(edge.tensor)}">${esc(text.shape)}${text.declared
          ? ` <tspan class="stale" fill="currentColor">${esc(text.declared)}</tspan>` : ""}</text>`;
    });
    return `<g class="edge-shapes">${labels.join("")}</g>`;
  }

  /** Edge shape labels only where they can be read: from EDGE_LABEL_ZOOM on. */
  private showEdgeShapes(): void {
    const group = this.layer.querySelector("g.edge-shapes");
    if (this.view.k >= EDGE_LABEL_ZOOM) {
      group?.removeAttribute("display");
    } else {
      group?.setAttribute("display", "none");
    }
  }

  /** A constant's values as Netron shows them: the first PREVIEW_VALUES, "Show all" for the rest (a disclosure the
   * mouse or the keyboard opens), its type, size and range, and what FP16 cannot hold in the finding colour. */
  private valuesHtml(v: TensorValues, tensor: string): string {
    const preview = valuesPreview(v);
    const all = v.values && v.values.length > PREVIEW_VALUES ? `<details class="all-values"><summary>Show all ` +
      `${thousands(v.values.length)} values</summary><p><code>${esc(valuesPreview(v, true)!)}</code></p></details>` : "";
    return `<div class="tensor-values" data-tensor="${esc(tensor)}">` +
      (preview ? `<p class="values-preview"><code>${esc(preview)}</code></p>` : "") +
      `<p class="values-summary">${esc(valuesSummary(v))}</p>` +
      (v.fp16 ? `<p class="stale values-fp16">${esc(v.fp16)}</p>` : "") + all + `</div>`;
  }

  /** A compared node's badge on its box's top edge ("INT8", "FP16", "removed"; a group: "12 changed"), in the page's
   * text colour on the editor's background so it reads in every theme; its border has the kind's colour. */
  private changeBadge(b: Box, item: Item): string {
    const text = item.change?.badge ?? (item.changes ? `${thousands(item.changes)} changed` : "");
    if (!text) {
      return "";
    }
    const width = 8 + text.length * 6.2;
    const x = b.x + b.width / 2 - width - 2;
    const y = b.y - b.height / 2 - 7;
    return `<g class="change-badge"><rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${width.toFixed(1)}" ` +
      `height="13" rx="3"/><text x="${(x + width / 2).toFixed(1)}" y="${(y + 10).toFixed(1)}">${esc(text)}</text></g>`;
  }

  /** A quantized node's share of the INT8 error: a bar along the bottom of its box (a track, filled to the share)
   * and a tooltip; the box's tint (its int8-l* class) says the same at a glance (media/view.css). */
  private int8Bar(b: Box, share: number): string {
    const x = b.x - b.width / 2 + 3;
    const y = b.y + b.height / 2 - 4;
    const full = Math.max(0, b.width - 6);
    const width = share > 0 ? Math.max(2, full * Math.min(1, share)) : 0;
    return `<rect class="int8-track" x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${full.toFixed(1)}" height="2.5"/>` +
      `<rect class="int8-bar" x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${width.toFixed(1)}" height="2.5"/>` +
      `<title>${esc(`${sharePercent(share)} of the INT8 error`)}</title>`;
  }

  private fillTable(): void {
    const whole = this.whole!;
    const rows = this.order.map((item) => {
      let inputs = "";
      let outputs = "";
      if (item.kind === "node") {
        const index = whole.indexes[item.graph];
        const names = (ts: number[]) => ts.filter((t) => t >= 0).map((t) => index.tensorText(t)).join(", ");
        inputs = names(index.inputsOf(item.node!));
        outputs = names(index.outputsOf(item.node!));
      }
      return `<tr data-id="${esc(item.id)}" class="${item.severity ?? ""}" aria-selected="false">` +
        `<td>${esc(item.kind)}</td><td><code>${esc(item.lines.join(" "))}</code>${item.int8Share === undefined ? ""
          : ` <span class="int8-share">${esc(sharePercent(item.int8Share))} of the INT8 error</span>`}</td><td>${esc(inputs)}</td>` +
        `<td>${esc(outputs)}</td><td>${item.severity ? esc(item.severity) : ""}</td>` +
        `<td><button class="secondary" data-graph="select" data-id="${esc(item.id)}">Select</button></td></tr>`;
    });
    byId<HTMLElement>("graph-table-body").innerHTML = rows.join("");
  }

  private css(name: string, fallback: string): string {
    return getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
  }

  /** The minimap, in its own strip beside the drawing: the whole layout scaled into the strip, in the theme's
   * colours (a theme switch redraws it), with the part the drawing shows outlined in the focus colour. */
  private drawMinimap(): void {
    const canvas = byId<HTMLCanvasElement>("graph-minimap");
    const laid = this.laidOut;
    const context = canvas.getContext("2d");
    const box = canvas.getBoundingClientRect();
    if (!laid || !context || !laid.width || !laid.height || box.width < 2 || box.height < 2) {
      return;  // nothing laid out yet, or the strip is hidden
    }
    const ratio = window.devicePixelRatio || 1;
    const width = Math.round(box.width * ratio);
    const height = Math.round(box.height * ratio);
    if (canvas.width !== width || canvas.height !== height) {
      canvas.width = width;
      canvas.height = height;
    }
    const margin = 4 * ratio;
    const scale = Math.min((width - 2 * margin) / laid.width, (height - 2 * margin) / laid.height);
    const ox = (width - laid.width * scale) / 2;  // centred across, from the top down (as the graph flows)
    const oy = margin;
    context.clearRect(0, 0, width, height);
    context.fillStyle = this.css("--vscode-editor-background", "#fff");
    context.fillRect(0, 0, width, height);
    const colours: Record<string, string> = {
      error: this.css("--vscode-editorError-foreground", "red"),
      warning: this.css("--vscode-editorWarning-foreground", "orange"),
      info: this.css("--vscode-editorInfo-foreground", "blue"),
    };
    const plain = this.css("--vscode-descriptionForeground", "#888");
    const heat = this.css("--int8-heat", "#b180d7");
    for (const item of this.visible.items) {
      const b = laid.boxes[item.id];
      const int8 = !item.severity && item.int8Share !== undefined;
      context.fillStyle = item.severity ? colours[item.severity] : int8 ? heat : plain;
      context.globalAlpha = int8 ? 0.35 + 0.65 * int8Level(item.int8Share!) / 4 : item.severity ? 1 : 0.7;
      context.fillRect(ox + (b.x - b.width / 2) * scale, oy + (b.y - b.height / 2) * scale,
        Math.max(1, b.width * scale), Math.max(1, b.height * scale));
    }
    // The part of the drawing the viewport shows: a tint and an outline in the focus colour.
    const rect = this.svg.getBoundingClientRect();
    // Kept inside the strip, so that its outline shows even when the whole graph is in view.
    const inset = ratio;
    const left = Math.max(inset, ox - this.view.x / this.view.k * scale);
    const top = Math.max(inset, oy - this.view.y / this.view.k * scale);
    const right = Math.min(width - inset, ox + (rect.width - this.view.x) / this.view.k * scale);
    const bottom = Math.min(height - inset, oy + (rect.height - this.view.y) / this.view.k * scale);
    const view = [left, top, Math.max(0, right - left), Math.max(0, bottom - top)] as const;
    context.fillStyle = context.strokeStyle = this.css("--vscode-focusBorder", "#07f");
    context.globalAlpha = 0.12;
    context.fillRect(...view);
    context.globalAlpha = 1;
    context.lineWidth = 2 * ratio;
    context.strokeRect(...view);
    Object.assign(canvas.dataset, { scale: String(scale), ox: String(ox), oy: String(oy) });
  }

  /** Show or hide the minimap's strip (the drawing takes its room). */
  setMinimap(shown: boolean): void {
    this.minimapShown = shown;
    byId<HTMLElement>("graph-minimap-strip").hidden = !shown;
    document.querySelector("[data-graph='minimap']")?.setAttribute("aria-pressed", String(shown));
    this.drawMinimap();
  }

  // -- pan and zoom --------------------------------------------------------------------------------

  private apply(): void {
    this.layer.setAttribute("transform", `translate(${this.view.x.toFixed(1)},${this.view.y.toFixed(1)}) scale(${this.view.k.toFixed(4)})`);
    // Level of detail: far out, the labels go and boxes stay.
    this.svg.classList.toggle("far", this.view.k < 0.45);
    this.showEdgeShapes();
    this.drawMinimap();
  }

  fit(): void {
    const laid = this.laidOut;
    if (!laid) {
      return;
    }
    const rect = this.svg.getBoundingClientRect();
    const k = Math.min(2, Math.max(0.02, Math.min(rect.width / (laid.width || 1), rect.height / (laid.height || 1))));
    this.view = { k, x: (rect.width - laid.width * k) / 2, y: (rect.height - laid.height * k) / 2 };
    this.apply();
  }

  /** The first view: all of it when its labels can be read so, else its top at a readable size. */
  private overview(): void {
    this.fit();
    const laid = this.laidOut!;
    if (this.view.k < 0.45) {
      const rect = this.svg.getBoundingClientRect();
      const k = Math.max(0.45, Math.min(1, rect.width / (laid.width || 1)));
      this.view = { k, x: (rect.width - laid.width * k) / 2, y: 8 };
      this.apply();
    }
  }

  zoom(factor: number, at?: { x: number; y: number }): void {
    const rect = this.svg.getBoundingClientRect();
    const point = at ?? { x: rect.width / 2, y: rect.height / 2 };
    const k = Math.min(4, Math.max(0.02, this.view.k * factor));
    this.view.x = point.x - (point.x - this.view.x) * (k / this.view.k);
    this.view.y = point.y - (point.y - this.view.y) * (k / this.view.k);
    this.view.k = k;
    this.apply();
  }

  panBy(dx: number, dy: number): void {
    this.view.x += dx;
    this.view.y += dy;
    this.apply();
  }

  private centre(box: Box): void {
    const rect = this.svg.getBoundingClientRect();
    if (this.view.k < 0.6) {
      this.view.k = 1;
    }
    this.view.x = rect.width / 2 - box.x * this.view.k;
    this.view.y = rect.height / 2 - box.y * this.view.k;
    this.apply();
  }

  // -- selection ------------------------------------------------------------------------------------

  private markSelection(): void {
    for (const element of this.layer.querySelectorAll(".item.selected")) {
      element.classList.remove("selected");
    }
    for (const row of document.querySelectorAll("#graph-table-body tr[aria-selected='true']")) {
      row.setAttribute("aria-selected", "false");
    }
    if (!this.selected) {
      this.viewport.removeAttribute("aria-activedescendant");
      return;
    }
    document.getElementById(`gi-${this.selected}`)?.classList.add("selected");
    this.viewport.setAttribute("aria-activedescendant", `gi-${this.selected}`);
    const row = document.querySelector(`#graph-table-body tr[data-id="${CSS.escape(this.selected)}"]`);
    row?.setAttribute("aria-selected", "true");
  }

  /** Whether a laid-out box lies wholly inside the visible drawing. */
  private inView(box: Box): boolean {
    const rect = this.svg.getBoundingClientRect();
    const { x, y, k } = this.view;
    return x + (box.x - box.width / 2) * k >= 0 && y + (box.y - box.height / 2) * k >= 0 &&
      x + (box.x + box.width / 2) * k <= rect.width && y + (box.y + box.height / 2) * k <= rect.height;
  }

  /** Nothing selected: a click on empty space of the drawing. */
  clearSelection(): void {
    if (!this.selected) {
      return;
    }
    this.selected = undefined;
    this.mark = undefined;
    this.markSelection();
    byId<HTMLElement>("graph-announce").textContent = "Selection cleared";
    byId<HTMLElement>("graph-details").innerHTML =
      '<p class="hint">Select a node for its attributes, inputs and outputs.</p>';
  }

  select(id: string, options: { centre?: boolean | "ifHidden"; announce?: boolean } = {}): void {
    const item = this.visible.items.find((i) => i.id === id);
    if (!item || !this.laidOut) {
      return;
    }
    this.selected = id;
    this.markSelection();
    if (options.centre === true || (options.centre === "ifHidden" && !this.inView(this.laidOut.boxes[id]))) {
      this.centre(this.laidOut.boxes[id]);
    }
    const words = describeItem(item, this.whole!);
    byId<HTMLElement>("graph-announce").textContent = `Selected ${words}`;
    const details = byId<HTMLElement>("graph-details");
    if (item.kind === "node") {
      details.innerHTML = `<p class="busy">Loading ${esc(item.lines.join(" "))}…</p>`;
      this.post({ type: "nodeDetails", graph: this.whole!.model.graphs[item.graph].path, index: item.node });
    } else if (item.kind === "block") {
      const index = this.whole!.indexes[item.graph];
      const c = index.columns;
      const int8 = item.int8Share === undefined ? "" : `<p class="int8-error">INT8 error: ` +
        `${esc(sharePercent(item.int8Share))} of the total, from its ${index.groupInt8!.nodes[item.group!]} INT8 ` +
        `node${index.groupInt8!.nodes[item.group!] === 1 ? "" : "s"}</p>`;
      details.innerHTML = `<h3>${esc(c.groupLabel[item.group!])}</h3><p class="where"><code>${esc(c.groupTitle[item.group!])}</code></p>` +
        `<p>${esc(item.lines.slice(1).join("; "))}</p>${int8}` +
        `<button data-graph="expand" data-id="${esc(item.id)}">Expand this group</button>`;
    } else {
      details.innerHTML = `<h3>graph ${esc(item.kind)} <code>${esc(item.lines[1])}</code></h3>`;
    }
  }

  showDetails(details: NodeDetails | { error: string }): void {
    const pane = byId<HTMLElement>("graph-details");
    const item = this.visible.items.find((i) => i.id === this.selected);
    if (!("error" in details) && (item?.kind !== "node" || this.whole?.model.graphs[item.graph].path !== details.graph ||
        item.node !== details.index)) {
      return;  // the answer for a node the user has since moved away from
    }
    if ("error" in details) {
      pane.innerHTML = `<p class="failure">${esc(details.error)}</p>`;
      return;
    }
    const op = details.domain ? `${details.domain}.${details.op}` : details.op;
    const tensors = (title: string, rows: TensorDetails[]) => rows.length === 0 ? "" :
      `<h4>${title}</h4><table class="node-tensors"><thead><tr><th>tensor</th><th>declared</th><th>derived</th></tr></thead><tbody>` +
      rows.map((t) => `<tr class="${[t.stale ? "stale" : "", this.mark?.tensor === t.tensor ? "marked" : ""].join(" ").trim()}">` +
        `<td><code>${esc(t.tensor)}</code>${t.initializer ? " <span class=\"engine\">(initializer)</span>" : ""}` +
        `${this.mark?.tensor === t.tensor ? ` <strong class="finding-mark">${esc(this.mark.why)}</strong>` : ""}</td>` +
        `<td class="declared">${esc(t.declared ?? "—")}</td><td>${esc(t.derived ?? "unknown")}` +
        `${t.engine ? ` <span class="engine">(${esc(t.engine)})</span>` : ""}</td></tr>` +
        (t.values ? `<tr class="values"><td colspan="3">${this.valuesHtml(t.values, t.tensor)}</td></tr>` : "")).join("") +
      `</tbody></table>`;
    const attributes = details.attributes.length === 0 ? "" : `<h4>Attributes</h4><dl class="facts">` +
      details.attributes.map((a) => `<dt>${esc(a.name)}</dt><dd><code>${esc(a.value)}</code>` +
        `${a.values ? this.valuesHtml(a.values, details.outputs[0]?.tensor ?? a.name) : ""}</dd>`).join("") + `</dl>`;
    const bodies = details.subgraphs.map((path) => {
      const graph = this.whole?.byPath.get(path);
      const open = graph !== undefined && this.expanded.has(`${graph}:body`);
      return graph === undefined ? "" : `<button class="secondary" data-graph="${open ? "collapseBody" : "expandBody"}" ` +
        `data-body="${graph}">${open ? "Collapse" : "Expand"} ${esc(path.split("/").pop() ?? "body")} in place</button>`;
    }).join(" ");
    // A node of a model quantize wrote: the error it causes (the server's answer, else the graph's own map).
    const known = item?.node === undefined ? undefined : this.whole?.indexes[item.graph].int8.get(item.node);
    const error = details.int8Error ?? (known ? { share: known[0], cosineAlone: known[1] } : undefined);
    const int8 = error ? `<p class="int8-error">${esc(int8ErrorText(error.share, error.cosineAlone))}</p>` : "";
    const mark = item?.change ? `<p class="change-detail">Compared: ${esc(item.change.detail)}</p>` : "";
    pane.innerHTML = `<h3><code>${esc(op)}</code> ${esc(details.name)}</h3><p class="where"><code>${esc(details.path)}</code></p>` +
      `${int8}${mark}${bodies ? `<p class="actions">${bodies}</p>` : ""}${attributes}${tensors("Inputs", details.inputs)}${tensors("Outputs", details.outputs)}`;
  }

  /** ``revealNode`` by the graph's path; says so in the announcement when the graph has no such node. */
  async revealNodeAt(path: string, node: number): Promise<void> {
    const graph = this.whole?.byPath.get(path);
    if (graph === undefined || node < 0 || node >= (this.whole?.indexes[graph].size ?? 0)) {
      byId<HTMLElement>("graph-announce").textContent = "That node is not in this graph";
      return;
    }
    await this.revealNode(graph, node);
  }

  /** Draw a node (expanding what holds it), select it and bring it into view. */
  async revealNode(graph: number, node: number, options: RevealOptions = {}): Promise<void> {
    if (!this.whole) {
      return;
    }
    const keys = this.whole.pathTo(graph, node);
    const missing = keys.filter((k) => !this.expanded.has(k));
    const id = nodeId(graph, node);
    if (missing.length) {
      missing.forEach((k) => this.expanded.add(k));
      await this.relayout(false);
    }
    this.select(id, { centre: options.centre ?? true });
    if (options.focus ?? true) {
      this.viewport.focus();
    }
  }

  /** "Show in graph" for a finding: its node (for an initializer, the first node that reads it, with the
   * initializer named in its details), or its graph input or output. */
  async revealFinding(finding: GraphFinding, options: RevealOptions = {}): Promise<boolean> {
    const where = this.whole?.locate(finding);
    if (!where) {
      return false;
    }
    this.mark = finding.tensor ? { tensor: finding.tensor,
      why: where.initializer ? `← ${finding.code}: this initializer` : `← ${finding.code}` } : undefined;
    if (where.node !== undefined) {
      await this.revealNode(where.graph, where.node, options);
      if (where.initializer) {
        const readers = where.nodes.length;
        byId<HTMLElement>("graph-announce").textContent += `; initializer ${finding.tensor}, ` +
          `read by ${readers} node${readers === 1 ? "" : "s"}`;
      }
      return true;
    }
    const terminal = this.visible.items.find((i) => i.graph === where.graph &&
      (i.id === `${where.graph}:out${where.tensor}` || i.id === `${where.graph}:in${where.tensor}`));
    if (terminal) {
      this.select(terminal.id, { centre: options.centre ?? true });
      if (options.focus ?? true) {
        this.viewport.focus();
      }
      return true;
    }
    return false;
  }

  private async toggle(key: string, open: boolean): Promise<void> {
    if (open) {
      this.expanded.add(key);
    } else {
      const graph = key.split(":")[0];  // a body, and everything expanded inside it
      for (const k of [...this.expanded]) {
        if (k === key || k.startsWith(`${graph}:`)) {
          this.expanded.delete(k);
        }
      }
    }
    await this.relayout(false);
  }

  // -- events -------------------------------------------------------------------------------------

  /** The first SEARCH_SHOWN matches, and how many there are in all: a capped list says so ("50 of 25,000
   * matches shown") instead of looking complete. */
  private search(query: string): void {
    const list = byId<HTMLElement>("graph-hits");
    const all: SearchHit[] = this.whole?.search(query, Number.POSITIVE_INFINITY) ?? [];
    const hits = all.slice(0, SEARCH_SHOWN);
    const empty = query.trim() === "";
    const summary = empty ? "" : searchSummary(hits.length, all.length);
    list.hidden = empty;
    list.innerHTML = hits.length === 0 ? `<li role="option" aria-disabled="true">${esc(summary)}</li>` :
      hits.map((hit, i) => `<li role="option" id="graph-hit-${i}" tabindex="-1" data-graph="hit" data-g="${hit.graph}" ` +
        `data-node="${hit.node}">${esc(hit.text)}</li>`).join("") + (hits.length < all.length
        ? `<li role="option" aria-disabled="true" class="more">${esc(summary)}: type more to narrow the search</li>` : "");
    byId<HTMLElement>("graph-search-count").textContent = summary;
    byId<HTMLElement>("graph-announce").textContent = summary;
  }

  private bind(): void {
    // A press that moves less than DRAG_PX is a click, left to the browser: it lands on the node or group under
    // the pointer (the drawing captures the pointer only once a drag has begun, so a capture never steals it).
    let afterDrag = false;
    document.addEventListener("click", (event) => {
      const target = (event.target as Element | null)?.closest<HTMLElement>("[data-graph]");
      if (!target) {
        if (afterDrag) {
          afterDrag = false;  // the end of a pan, not a click
          return;
        }
        const item = (event.target as Element | null)?.closest<SVGGElement>("#graph-layer .item");
        if (item?.dataset.id) {
          this.mark = undefined;
          this.select(item.dataset.id);
          if (event.detail === 2) {
            void this.activate(item.dataset.id);
          }
        } else if ((event.target as Element | null)?.closest("#graph-svg")) {
          this.clearSelection();
        }
        return;
      }
      void this.command(target);
    });
    const input = byId<HTMLInputElement>("graph-search");
    let typing: number | undefined;
    input.addEventListener("input", () => {
      clearTimeout(typing);
      typing = window.setTimeout(() => this.search(input.value), 120);
    });
    input.addEventListener("keydown", (event) => {
      const first = document.querySelector<HTMLElement>("#graph-hits [data-graph='hit']");
      if (event.key === "ArrowDown" && first) {
        first.focus();
        event.preventDefault();
      } else if (event.key === "Enter" && first) {
        void this.command(first);
        event.preventDefault();
      }
    });
    byId<HTMLElement>("graph-hits").addEventListener("keydown", (event) => {
      const current = document.activeElement as HTMLElement | null;
      if (event.key === "Enter" && current?.dataset.graph === "hit") {
        void this.command(current);
      } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        const next = (event.key === "ArrowDown" ? current?.nextElementSibling : current?.previousElementSibling) as HTMLElement | null;
        (next?.dataset.graph === "hit" ? next : input).focus();  // past the last match (or "50 of …"): back to the box
      } else if (event.key === "Escape") {
        input.focus();
      } else {
        return;
      }
      event.preventDefault();
    });
    const viewport = this.viewport;
    viewport.addEventListener("wheel", (event) => {
      event.preventDefault();
      const rect = this.svg.getBoundingClientRect();
      this.zoom(event.deltaY < 0 ? 1.15 : 1 / 1.15, { x: event.clientX - rect.left, y: event.clientY - rect.top });
    }, { passive: false });
    let press: { x: number; y: number; panning: boolean } | undefined;
    this.svg.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) {
        return;
      }
      press = { x: event.clientX, y: event.clientY, panning: false };
      afterDrag = false;
    });
    this.svg.addEventListener("pointermove", (event) => {
      if (!press || (event.buttons & 1) === 0) {
        press = undefined;
        return;
      }
      if (!press.panning) {
        if (Math.hypot(event.clientX - press.x, event.clientY - press.y) < DRAG_PX) {
          return;
        }
        press.panning = true;
        try {
          this.svg.setPointerCapture(event.pointerId);  // from here on the drag owns the pointer
        } catch {
          // a pointer the browser does not track (a synthetic one): panning works without capture
        }
      }
      this.panBy(event.clientX - press.x, event.clientY - press.y);
      press.x = event.clientX;
      press.y = event.clientY;
    });
    const release = (): void => {
      afterDrag = press?.panning ?? false;
      press = undefined;
    };
    this.svg.addEventListener("pointerup", release);
    this.svg.addEventListener("pointercancel", release);
    const minimap = byId<HTMLCanvasElement>("graph-minimap");
    const moveTo = (event: PointerEvent) => {
      const { scale, ox, oy } = minimap.dataset;
      const rect = minimap.getBoundingClientRect();
      const x = ((event.clientX - rect.left) * (minimap.width / rect.width) - Number(ox || 0)) / Number(scale || 1);
      const y = ((event.clientY - rect.top) * (minimap.height / rect.height) - Number(oy || 0)) / Number(scale || 1);
      this.centre({ x, y, width: 0, height: 0 });
    };
    minimap.addEventListener("pointerdown", (event) => {  // a click centres the view there, a drag moves it along
      if (event.button !== 0) {
        return;
      }
      moveTo(event);
      try {
        minimap.setPointerCapture(event.pointerId);
      } catch {
        // a pointer the browser does not track: clicks still centre
      }
      event.stopPropagation();
    });
    minimap.addEventListener("pointermove", (event) => {
      if ((event.buttons & 1) !== 0 && minimap.hasPointerCapture(event.pointerId)) {
        moveTo(event);
      }
    });
    viewport.addEventListener("keydown", (event) => this.key(event));
    // When the drawing changes size (the split dragged, the minimap hidden, the editor resized), what was in its
    // middle stays in its middle.
    let size = { width: 0, height: 0 };
    const resized = new ResizeObserver(() => {
      const rect = this.svg.getBoundingClientRect();
      if (this.laidOut && size.width > 0 && size.height > 0 && rect.width > 0 && rect.height > 0) {
        this.view.x += (rect.width - size.width) / 2;
        this.view.y += (rect.height - size.height) / 2;
        this.apply();
      } else {
        this.drawMinimap();
      }
      size = { width: rect.width, height: rect.height };
    });
    resized.observe(viewport);
    resized.observe(byId("graph-minimap-strip"));
    // A theme switch changes the --vscode-* variables (on <html>) and the body's class: the canvas redraws.
    const themed = new MutationObserver(() => this.drawMinimap());
    themed.observe(document.documentElement, { attributes: true, attributeFilter: ["style", "class"] });
    themed.observe(document.body, { attributes: true, attributeFilter: ["class"] });
  }

  private async activate(id: string): Promise<void> {
    const item = this.visible.items.find((i) => i.id === id);
    if (item?.kind === "node" && item.expandable) {  // If/Loop/Scan: its bodies open (or close) in place
      const bodies = this.whole!.indexes[item.graph].bodies.get(item.node!) ?? [];
      const open = bodies.some((b) => this.expanded.has(`${b}:body`));
      for (const body of bodies) {
        await this.toggle(`${body}:body`, !open);
      }
      this.select(id, { centre: true });
      return;
    }
    if (item?.kind === "block") {
      await this.toggle(id, true);
      const first = this.order.find((i) => i.parent === id);  // the group's first member, now drawn
      this.select(first?.id ?? id, { centre: true });
    }
  }

  private key(event: KeyboardEvent): void {
    const at = this.order.findIndex((i) => i.id === this.selected);
    const move = (to: number) => {
      const item = this.order[Math.max(0, Math.min(this.order.length - 1, to))];
      if (item) {
        this.select(item.id, { centre: true });
      }
    };
    switch (event.key) {
      case "ArrowDown": case "ArrowRight": move(at + 1); break;
      case "ArrowUp": case "ArrowLeft": move(at < 0 ? 0 : at - 1); break;
      case "Home": move(0); break;
      case "End": move(this.order.length - 1); break;
      case "Enter": case " ": if (this.selected) { void this.activate(this.selected); } break;
      case "+": case "=": this.zoom(1.25); break;
      case "-": case "_": this.zoom(0.8); break;
      case "0": this.fit(); break;
      default: return;
    }
    event.preventDefault();
  }

  private async command(target: HTMLElement): Promise<void> {
    switch (target.dataset.graph) {
      case "zoomIn": this.zoom(1.25); break;
      case "zoomOut": this.zoom(0.8); break;
      case "fit": this.fit(); break;
      case "collapse": this.expanded = this.whole?.overview() ?? new Set(); await this.relayout(true); break;
      case "minimap": this.setMinimap(!this.minimapShown); this.onMinimapToggle?.(this.minimapShown); break;
      case "select": this.select(target.dataset.id!, { centre: true }); this.viewport.focus(); break;
      case "expand": await this.activate(target.dataset.id!); break;
      case "hit":
        byId<HTMLElement>("graph-hits").hidden = true;
        this.mark = undefined;
        await this.revealNode(Number(target.dataset.g), Number(target.dataset.node));
        break;
      case "expandBody": case "collapseBody": {
        const selected = this.selected;
        await this.toggle(`${target.dataset.body}:body`, target.dataset.graph === "expandBody");
        if (selected) {
          this.select(selected);
        }
        break;
      }
    }
  }
}
