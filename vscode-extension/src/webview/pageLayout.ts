// The model view's layout in the page: the whole graph fills the editor's height below the page's header
// (the findings list above it is bounded, so the drawing stays in view however many findings there are),
// beside its details (below them in a narrow column), across a split that the mouse drags and the keyboard
// moves. The split and the minimap's visibility are kept in the webview's state, so that a view VS Code
// restores opens as it was left.
import { clampShare, GRAPH_SHARE, shareAfterKey } from "../graphSplit";

export interface ViewPrefs {
  graphShare?: number; // the drawing's share of the graph's width (height in a narrow column), in percent
  minimap?: boolean;
}

// Less room than this below the header (a quick look open above the graph): the graph fills the editor's
// height below its own heading instead, where "Show in graph" scrolls it.
const MIN_ROOM = 260;
const GAP = 8; // between the graph and the editor's bottom edge

function byId<T extends HTMLElement>(id: string): T | null {
  return document.getElementById(id) as T | null;
}

export class PageLayout {
  constructor(private readonly prefs: ViewPrefs, private readonly save: (prefs: ViewPrefs) => void) {}

  start(): void {
    const body = byId("graph-body");
    const split = byId("graph-split");
    if (!body || !split) {
      return;
    }
    if (this.prefs.graphShare !== undefined) {
      this.setShare(this.prefs.graphShare, false);
    }
    this.fill();
    window.addEventListener("resize", () => this.fill());
    // What sits above the graph changes size when the host re-renders it (a fix, a quick look) or when the
    // search's legend shows: the graph follows.
    const above = new ResizeObserver(() => this.fill());
    for (const id of ["top", "graph-head"]) {
      const element = byId(id);
      if (element) {
        above.observe(element);
      }
    }
    this.bindSplit(body, split);
  }

  /** Size the graph to the editor's height below what is above it. */
  fill(): void {
    const body = byId("graph-body");
    const section = byId("whole-graph");
    if (!body || !section) {
      return;
    }
    const top = body.getBoundingClientRect().top + window.scrollY;
    const below = window.innerHeight - top - GAP;
    const height = below >= MIN_ROOM ? below
      : window.innerHeight - (top - (section.getBoundingClientRect().top + window.scrollY)) - GAP;
    body.style.setProperty("--graph-fill", `${Math.floor(height)}px`);
    byId("graph-split")?.setAttribute("aria-orientation", this.sideBySide(body) ? "vertical" : "horizontal");
    this.showShare(body);
  }

  private sideBySide(body: HTMLElement): boolean {
    return getComputedStyle(body).flexDirection !== "column";
  }

  private share(body: HTMLElement): number {
    return Number(getComputedStyle(body).getPropertyValue("--graph-share").trim()) || GRAPH_SHARE.initial;
  }

  private showShare(body: HTMLElement): void {
    const share = Math.round(this.share(body));
    const split = byId("graph-split");
    split?.setAttribute("aria-valuenow", String(share));
    split?.setAttribute("aria-valuetext", `the drawing ${share}%, its details ${100 - share}%`);
  }

  setShare(share: number, keep = true): void {
    const body = byId("graph-body");
    if (!body) {
      return;
    }
    const clamped = clampShare(share);
    body.style.setProperty("--graph-share", clamped.toFixed(1));
    this.showShare(body);
    if (keep) {
      this.prefs.graphShare = Math.round(clamped * 10) / 10;
      this.save(this.prefs);
    }
  }

  private bindSplit(body: HTMLElement, split: HTMLElement): void {
    let dragging = false;
    const at = (event: PointerEvent) => {
      const rect = body.getBoundingClientRect();
      return this.sideBySide(body) ? (event.clientX - rect.left) / rect.width * 100
        : (event.clientY - rect.top) / rect.height * 100;
    };
    split.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) {
        return;
      }
      dragging = true;
      split.classList.add("dragging");
      try {
        split.setPointerCapture(event.pointerId);
      } catch {
        // a pointer the browser does not track: the drag still follows it while it is over the split
      }
      event.preventDefault();  // no text selection while dragging
    });
    split.addEventListener("pointermove", (event) => {
      if (dragging && (event.buttons & 1) !== 0) {
        this.setShare(at(event), false);
      }
    });
    const end = () => {
      if (dragging) {
        dragging = false;
        split.classList.remove("dragging");
        this.setShare(this.share(body));  // remembered once the drag ends
      }
    };
    split.addEventListener("pointerup", end);
    split.addEventListener("pointercancel", end);
    split.addEventListener("lostpointercapture", end);
    // The keyboard, as the window splitter pattern has it: arrows move it, Home and End to its limits.
    split.addEventListener("keydown", (event) => {
      const to = shareAfterKey(event.key, this.share(body));
      if (to !== undefined) {
        this.setShare(to);
        event.preventDefault();
      }
    });
  }
}
