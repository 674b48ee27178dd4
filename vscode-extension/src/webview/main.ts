// The model view's script (loaded from the extension, as the CSP demands). The extension host renders
// the page's text parts and sends them as HTML; this script swaps them in, turns clicks and keys into
// messages for the host, and runs the whole-graph view, whose state (layout, zoom, selection) lives here
// so that a re-render of the rest of the page keeps it.
import { ChangeMark, GraphFinding, graphFromMessage, ModelGraph } from "../wholeGraph";
import { GraphCanvas, NodeDetails } from "./graphCanvas";
import { thousands } from "../words";
import { PageLayout, ViewPrefs } from "./pageLayout";

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
// What the user arranged (the split, the minimap), kept in the webview's state: VS Code gives it back when it
// restores the view.
const prefs: ViewPrefs = { ...((vscode.getState() as ViewPrefs | undefined) ?? {}) };
const layout = new PageLayout(prefs, (kept) => vscode.setState(kept));

function post(type: string, index?: number): void {
  vscode.postMessage(index === undefined ? { type } : { type, index });
}

const workerUrl = document.body.dataset.worker;
const canvas = workerUrl ? new GraphCanvas(workerUrl, (message) => vscode.postMessage(message)) : undefined;
let findings: GraphFinding[] = [];
if (canvas) {
  layout.start();
  if (prefs.minimap === false) {
    canvas.setMinimap(false);
  }
  canvas.onMinimapToggle = (shown) => {
    prefs.minimap = shown;
    vscode.setState(prefs);
  };
}

// Groups of findings the user opened with "show all": kept open across the host's re-renders of the list.
const openGroups = new Set<string>();

function showGroups(): void {
  for (const row of document.querySelectorAll<HTMLElement>("ul.diagnostics li.group")) {
    const key = row.dataset.group ?? "";
    const open = openGroups.has(key);
    const button = row.querySelector<HTMLButtonElement>("button.show-all");
    if (button) {
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? "Show fewer" : `Show all ${thousands(Number(row.dataset.count))}`;
    }
    for (const member of document.querySelectorAll<HTMLElement>(`ul.diagnostics li[data-member="${CSS.escape(key)}"]`)) {
      member.hidden = !open && !member.classList.contains("selected");
    }
  }
}

document.addEventListener("click", (event) => {
  const button = (event.target as Element | null)?.closest<HTMLButtonElement>("button[data-action]");
  if (!button || button.disabled) {
    return;
  }
  const index = button.dataset.index === undefined ? undefined : Number(button.dataset.index);
  if (button.dataset.action === "toggleGroup") {
    const key = button.closest<HTMLElement>("li.group")?.dataset.group ?? "";
    if (!openGroups.delete(key)) {
      openGroups.add(key);
    }
    showGroups();
    return;
  }
  if (button.dataset.action === "reveal" && index !== undefined) {
    void reveal(index);
    return;
  }
  post(button.dataset.action!, index);
});

async function reveal(index: number): Promise<void> {
  const finding = findings.find((f) => f.index === index);
  // The graph fills the editor below the findings: scroll only when it is out of sight (a quick look above it).
  const body = document.getElementById("graph-body")?.getBoundingClientRect();
  if (body && (body.top < 0 || body.bottom > window.innerHeight + 1)) {
    document.getElementById("whole-graph")?.scrollIntoView({ block: "start" });
  }
  if (!canvas || !finding || !(await canvas.revealFinding(finding))) {
    const announce = document.getElementById("graph-announce");
    if (announce) {
      announce.textContent = "This finding is not on a graph element";
    }
  }
}

// Arrow keys walk the quick look's nodes and edge labels top to bottom (as data flows), left to right
// within a layer; Escape closes it.
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && document.getElementById("graph") && !(event.target as Element)?.closest("#whole-graph")) {
    post("closeGraph");
    return;
  }
  const current = document.activeElement;
  if (!(current instanceof SVGGraphicsElement) || !current.closest("svg.finding-graph")) {
    return;
  }
  const items = Array.from(document.querySelectorAll<SVGGraphicsElement>("svg.finding-graph [tabindex='0']"))
    .map((element) => ({ element, box: element.getBoundingClientRect() }))
    .sort((a, b) => a.box.top - b.box.top || a.box.left - b.box.left)
    .map((item) => item.element);
  const at = items.indexOf(current);
  const step = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[event.key];
  if (at >= 0 && step !== undefined) {
    items[(at + step + items.length) % items.length].focus();
    event.preventDefault();
  }
});

function autofocus(): void {
  document.querySelector<HTMLElement>("[data-autofocus]")?.focus();
  // The quick look opens scrolled to its finding, wherever dagre put it in a wide drawing.
  const canvas = document.querySelector<HTMLElement>(".graph-canvas");
  const focus = canvas?.querySelector(".node.focus");
  if (canvas && focus) {
    const box = focus.getBoundingClientRect();
    const frame = canvas.getBoundingClientRect();
    canvas.scrollLeft += box.left - frame.left - (canvas.clientWidth - box.width) / 2;
    canvas.scrollTop += box.top - frame.top - (canvas.clientHeight - box.height) / 2;
  }
}

window.addEventListener("message", (event: MessageEvent) => {
  const message = event.data as { type: string; [key: string]: unknown };
  if (message.type === "render") {
    // The text parts of the page, re-rendered by the host; the graph between them stays as it is.
    for (const part of ["top", "bottom"]) {
      const element = document.getElementById(part);
      if (element && typeof message[part] === "string") {
        element.innerHTML = message[part] as string;
      }
    }
    findings = (message.findings as GraphFinding[] | undefined) ?? findings;
    showGroups();
    layout.fill();
    autofocus();
  } else if (message.type === "graphData" && canvas) {
    findings = message.findings as GraphFinding[];
    void canvas.setData(graphFromMessage(message.graph as string | ModelGraph), findings,
      message.requested as number | undefined)
      .then(() => {
        if (typeof message.reveal === "number") {
          void reveal(message.reveal);
        }
      });
  } else if (message.type === "graphError") {
    const status = document.getElementById("graph-status");
    if (status) {
      status.textContent = String(message.error);
    }
  } else if (message.type === "nodeDetails" && canvas) {
    canvas.showDetails(message.details as NodeDetails | { error: string });
  } else if (message.type === "compareMarks" && canvas) {
    void canvas.setChanges(message.marks as ChangeMark[]);
  } else if (message.type === "revealNode" && canvas) {
    // A row of the comparison: its node, by graph path and position (the graph may still be on its way).
    void canvas.revealNodeAt(message.graph as string, message.node as number);
  } else if (message.type === "reveal") {
    void reveal(message.index as number);
  }
});

// After a load, put the keyboard where the user's action led, and ask for the graph.
window.addEventListener("load", () => {
  layout.fill();
  autofocus();
  post("ready");
});
