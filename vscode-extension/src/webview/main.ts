// The model view's only script (loaded from the extension, as the CSP demands): it turns clicks and
// keys into messages for the extension host, which re-renders the page. No state lives here.

interface VsCodeApi {
  postMessage(message: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();

function post(type: string, index?: number): void {
  vscode.postMessage(index === undefined ? { type } : { type, index });
}

document.addEventListener("click", (event) => {
  const button = (event.target as Element | null)?.closest<HTMLButtonElement>("button[data-action]");
  if (!button || button.disabled) {
    return;
  }
  const index = button.dataset.index === undefined ? undefined : Number(button.dataset.index);
  post(button.dataset.action!, index);
});

// Arrow keys walk the drawing's nodes and edge labels top to bottom (as data flows), left to right
// within a layer; Escape closes the drawing.
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && document.getElementById("graph")) {
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

// After a re-render, put the keyboard where the user's action led (the drawing, the report).
window.addEventListener("load", () => {
  document.querySelector<HTMLElement>("[data-autofocus]")?.focus();
});
