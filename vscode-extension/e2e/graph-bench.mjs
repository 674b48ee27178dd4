// The whole-graph view's timings in Chromium: the model view's real page (renderView), its real bundles
// (out/webview/main.js and layout.js) and stylesheet, fed a model's onnx-lint.modelGraph answer the way the
// extension host feeds it. Measures time to first paint, frame time while panning (overview and zoomed in
// on a node found by search), and the page's JavaScript heap.
//
// Environment: CASES (JSON: [{name, data}] where data is a JSON file {graph, findings, reveal}), RESULT,
// CHROMIUM and SHOTS (a folder for screenshots) optional. Run from vscode-extension/ after `npm run compile` (benchmarks/graph_view.py does).
import * as esbuild from "esbuild";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { chromium } from "playwright-core";

const cases = JSON.parse(process.env.CASES);
const root = process.cwd();
// renderView from the TypeScript source, bundled on the fly: the page is the one the extension renders.
const bundled = await esbuild.build({ entryPoints: ["src/viewHtml.ts"], bundle: true, platform: "node", format: "esm", write: false });
const { renderView } = await import(`data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString("base64")}`);

const HARNESS = `
window.acquireVsCodeApi = () => ({ getState() { return undefined; }, setState() {}, postMessage(message) {
  if (message.type !== "ready") return;
  const requested = performance.now();
  fetch("/graph.json").then((r) => r.json()).then((data) => {
    window.postMessage({ type: "graphData", graph: data.graph, findings: data.findings, requested }, "*");
  });
} });`;

// A few of VS Code's Light Modern theme variables, as a webview gets them (for screenshots that look right).
const THEME = `html { --vscode-font-family: system-ui, sans-serif; --vscode-font-size: 13px; --vscode-foreground: #3b3b3b;
  --vscode-editor-background: #ffffff; --vscode-editor-foreground: #3b3b3b; --vscode-editor-font-family: monospace;
  --vscode-editorWidget-background: #f8f8f8; --vscode-editorWidget-border: #c8c8c8; --vscode-descriptionForeground: #717171;
  --vscode-editorError-foreground: #e51400; --vscode-editorWarning-foreground: #bf8803; --vscode-editorInfo-foreground: #1a85ff;
  --vscode-focusBorder: #005fb8; --vscode-badge-background: #cccccc; --vscode-badge-foreground: #3b3b3b;
  --vscode-button-background: #005fb8; --vscode-button-foreground: #ffffff; --vscode-button-secondaryBackground: #e5e5e5;
  --vscode-button-secondaryForeground: #3b3b3b; --vscode-input-background: #ffffff; --vscode-input-border: #cecece;
  --vscode-editor-inactiveSelectionBackground: #e5ebf1; --vscode-list-inactiveSelectionBackground: #e4e6f1; }`;

let current;
const server = http.createServer((request, response) => {
  const url = new URL(request.url, "http://x");
  const send = (type, body) => { response.writeHead(200, { "content-type": type }); response.end(body); };
  if (url.pathname === "/") {
    const html = renderView({ file: current.name, summary: null, diagnostics: [], trusted: true },
      { cspSource: `http://127.0.0.1:${server.address().port}`, script: "/out/webview/main.js", style: "/media/view.css",
        worker: "/out/webview/layout.js" });
    send("text/html", html.replace('<script src="/out/webview/main.js">', '<script src="/harness.js"></script><script src="/out/webview/main.js">')
      .replace("</head>", '<link rel="stylesheet" href="/theme.css"></head>'));
  } else if (url.pathname === "/theme.css") {
    send("text/css", THEME);
  } else if (url.pathname === "/harness.js") {
    send("text/javascript", HARNESS);
  } else if (url.pathname === "/graph.json") {
    send("application/json", fs.readFileSync(current.data));
  } else if (/^\/(out\/webview|media)\/[\w.-]+$/.test(url.pathname)) {
    const file = path.join(root, url.pathname);
    send(file.endsWith(".css") ? "text/css" : "text/javascript", fs.readFileSync(file));
  } else {
    response.writeHead(404);
    response.end();
  }
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));

const PAN = () => new Promise((resolve) => {
  const svg = document.getElementById("graph-svg");
  const rect = svg.getBoundingClientRect();
  let x = rect.left + rect.width / 2;
  const y = rect.top + rect.height / 2;
  const event = (type) => new PointerEvent(type, { clientX: x, clientY: y, pointerId: 7, bubbles: true });
  svg.dispatchEvent(event("pointerdown"));
  const frames = [];
  let last;
  const frame = (now) => {
    if (last !== undefined) frames.push(now - last);
    last = now;
    if (frames.length === 120) {
      svg.dispatchEvent(event("pointerup"));
      resolve(frames);
      return;
    }
    x += frames.length < 60 ? 5 : -5;
    svg.dispatchEvent(event("pointermove"));
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
});

const stats = (frames) => {
  const sorted = [...frames].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], p95: sorted[Math.floor(sorted.length * 0.95)],
    max: sorted[sorted.length - 1] };
};

// Chromium's profile holds sockets, whose paths must be short: a deep TMPDIR (pytest's) makes it exit at
// launch. Its profile goes to a short folder of its own, removed at the end.
const browserTmp = fs.mkdtempSync("/tmp/ol-graph-bench-");
process.env.TMPDIR = browserTmp;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--enable-precise-memory-info"],
});
const results = [];
try {
  for (const item of cases) {
    current = item;
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    const viewport = page.locator("#graph-viewport[data-first-paint-ms]");
    await viewport.waitFor({ state: "attached", timeout: 120_000 });
    const firstPaint = Number(await viewport.getAttribute("data-first-paint-ms"));
    const drawn = await page.locator("#graph-layer .item").count();
    const shot = async (what) => process.env.SHOTS &&
      await page.locator("#whole-graph").screenshot({ path: path.join(process.env.SHOTS, `${item.name}-${what}.png`) });
    await shot("overview");
    const overview = stats(await page.evaluate(PAN));
    // Zoom in on a node deep in the graph, found by search, and pan there.
    const data = JSON.parse(fs.readFileSync(item.data, "utf8"));
    const started = Date.now();
    await page.locator("#graph-search").fill(data.reveal);
    await page.locator("#graph-hits [data-graph='hit']").first().waitFor({ timeout: 30_000 });
    await page.locator("#graph-search").press("Enter");
    await page.locator("#graph-layer .item.selected").waitFor({ timeout: 60_000 });
    const revealMs = Date.now() - started;
    const zoomedDrawn = await page.locator("#graph-layer .item").count();
    await page.waitForTimeout(300);  // the details pane's request goes nowhere here; let the drawing settle
    await shot("revealed");
    const zoomed = stats(await page.evaluate(PAN));
    const heapMB = await page.evaluate(() => (performance.memory?.usedJSHeapSize ?? 0) / 1e6);
    results.push({ name: item.name, firstPaintMs: firstPaint, drawn, overview, revealMs, zoomedDrawn, zoomed,
      heapMB, errors, announced: await page.locator("#graph-announce").textContent() });
    await page.close();
  }
} finally {
  await browser.close();
  server.close();
  fs.rmSync(browserTmp, { recursive: true, force: true });
}
fs.writeFileSync(process.env.RESULT, JSON.stringify(results, null, 2));
