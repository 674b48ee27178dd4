// The whole-graph view's timings in Chromium: the model view's real page (renderView), its real bundles
// (out/webview/main.js and layout.js) and stylesheet, fed a model's onnx-lint.modelGraph answer the way the
// extension host feeds it. Measures the opening (time to first paint; open-to-interactive: a real mouse click
// on a drawn node after first paint, answered; the longest frame and the longest long task until then), frame
// time while panning (overview and zoomed in on a node found by search), and the page's JavaScript heap.
//
// Environment: CASES (JSON: [{name, data}] where data is a JSON file {graph, findings, reveal}), RESULT,
// REPEAT (opens of each model, each on a fresh page; default 1), CHROMIUM, SHOTS (a folder for screenshots) and
// PROFILE (a folder: the first open of each model as <name>.cpuprofile, Chromium's sampling profile of the page's
// main thread from the request to interactive, for DevTools or any .cpuprofile reader) and TRACE (a folder: the
// first open of each model as <name>.trace.json, Chromium's performance trace, for DevTools' Performance panel)
// optional. Run from vscode-extension/ after `npm run compile` (benchmarks/graph_view.py does).
import * as esbuild from "esbuild";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { chromium } from "playwright-core";

const cases = JSON.parse(process.env.CASES);
const root = process.cwd();
// renderView from the TypeScript source, bundled on the fly: the page is the one the extension renders.
const bundle = async (entry) => {
  const built = await esbuild.build({ entryPoints: [entry], bundle: true, platform: "node", format: "esm",
    write: false });
  return import(`data:text/javascript;base64,${Buffer.from(built.outputFiles[0].text).toString("base64")}`);
};
const { renderView } = await bundle("src/viewHtml.ts");
// The host's graphData message as this checkout's extension builds it (graphDataMessage in src/wholeGraph.ts; a
// checkout without it posted the graph as an object).
const { graphDataMessage = (graph, findings) => ({ type: "graphData", graph, findings }) } =
  await bundle("src/wholeGraph.ts");

// Loaded before the page's script. It stands in for VS Code's webview API and for the way the graph reaches the
// page, and records, in page time (performance.now()): the request, every message the page posts, every
// requestAnimationFrame from the start (a frame's start time), the main thread's long tasks (over 50 ms), and the
// real pointer input the page gets (its pointerdown, and the end of each click's handling: a listener on window
// runs after the page's own listeners on the document).
//
// In VS Code the extension host's message reaches the view through the workbench (which parses it off the view's
// thread) and the webview's host frame, which takes it in and posts it on to the view's frame: on the view's
// thread, one structured clone read and written, then the view's own read. Here a worker fetches and parses the
// host's message (the workbench's part, off the page's thread) and posts it to the page; the harness, as the host
// frame, takes it in and posts it on ("delivery", timed), and the page's listener reads it as it reads VS Code's.
const HARNESS = `
window.__bench = { requested: undefined, posts: [], frames: [], longTasks: [], inputs: [], recording: true };
new PerformanceObserver((list) => {
  for (const task of list.getEntries()) window.__bench.longTasks.push([task.startTime, task.duration]);
}).observe({ type: "longtask", buffered: true });
const tick = (now) => {
  window.__bench.frames.push(now);
  if (window.__bench.recording) requestAnimationFrame(tick);
};
requestAnimationFrame(tick);
addEventListener("pointerdown",
  (event) => window.__bench.inputs.push(["pointerdown", event.timeStamp, event.isTrusted]), true);
addEventListener("click", (event) => window.__bench.inputs.push(["clicked", performance.now(), event.isTrusted]));
const WORKBENCH = 'fetch(' + JSON.stringify(location.origin + "/message.json") + ')' +
  '.then((r) => r.json()).then((m) => postMessage(m));';
window.acquireVsCodeApi = () => ({ getState() { return undefined; }, setState() {}, postMessage(message) {
  window.__bench.posts.push({ at: performance.now(), ...message });
  if (message.type !== "ready") return;
  const requested = window.__bench.requested = performance.now();
  const workbench = new Worker(URL.createObjectURL(new Blob([WORKBENCH], { type: "text/javascript" })));
  workbench.onmessage = (event) => {
    const started = performance.now();
    window.postMessage({ ...event.data, requested }, "*");
    window.__bench.delivery = [started, performance.now() - started];
    workbench.terminate();
  };
} });`;

// A few of VS Code's Light Modern theme variables, as a webview gets them (for screenshots that look right).
const THEME = `html { --vscode-font-family: system-ui, sans-serif; --vscode-font-size: 13px;
  --vscode-foreground: #3b3b3b; --vscode-editor-background: #ffffff; --vscode-editor-foreground: #3b3b3b;
  --vscode-editor-font-family: monospace; --vscode-editorWidget-background: #f8f8f8;
  --vscode-editorWidget-border: #c8c8c8; --vscode-descriptionForeground: #717171;
  --vscode-editorError-foreground: #e51400; --vscode-editorWarning-foreground: #bf8803;
  --vscode-editorInfo-foreground: #1a85ff; --vscode-focusBorder: #005fb8; --vscode-badge-background: #cccccc;
  --vscode-badge-foreground: #3b3b3b; --vscode-button-background: #005fb8; --vscode-button-foreground: #ffffff;
  --vscode-button-secondaryBackground: #e5e5e5; --vscode-button-secondaryForeground: #3b3b3b;
  --vscode-input-background: #ffffff; --vscode-input-border: #cecece;
  --vscode-editor-inactiveSelectionBackground: #e5ebf1; --vscode-list-inactiveSelectionBackground: #e4e6f1; }`;

let current;
const server = http.createServer((request, response) => {
  const url = new URL(request.url, "http://x");
  const send = (type, body) => { response.writeHead(200, { "content-type": type }); response.end(body); };
  if (url.pathname === "/") {
    const html = renderView({ file: current.name, summary: null, diagnostics: [], trusted: true },
      { cspSource: `http://127.0.0.1:${server.address().port}`, script: "/out/webview/main.js",
        style: "/media/view.css", worker: "/out/webview/layout.js" });
    send("text/html", html.replace('<script src="/out/webview/main.js">',
      '<script src="/harness.js"></script><script src="/out/webview/main.js">')
      .replace("</head>", '<link rel="stylesheet" href="/theme.css"></head>'));
  } else if (url.pathname === "/theme.css") {
    send("text/css", THEME);
  } else if (url.pathname === "/harness.js") {
    send("text/javascript", HARNESS);
  } else if (url.pathname === "/message.json") {
    send("application/json", current.message);
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

// The quiet time after a click's answer in which no long task may start, for the page to count as interactive.
const QUIET_MS = 500;
// How long a click may go unanswered before the page counts as not answering it.
const ANSWER_TIMEOUT_MS = 10_000;

// The node box a user would click once the graph is painted: a drawn node (a group box if the view draws no node)
// other than the one selected on open, wholly inside the drawing and the window, and on top where it is clicked (no
// minimap over it); the one nearest the drawing's middle.
const TARGET = () => {
  const svg = document.getElementById("graph-svg").getBoundingClientRect();
  const inside = (r) => r.width > 4 && r.height > 4 && r.left >= svg.left && r.top >= svg.top &&
    r.right <= svg.right && r.bottom <= svg.bottom && r.bottom <= innerHeight && r.right <= innerWidth;
  const onTop = (element, r) => element.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));
  for (const kind of ["node", "block"]) {
    const boxes = [...document.querySelectorAll(`#graph-layer .item.${kind}:not(.selected)`)]
      .map((element) => ({ element, id: element.dataset.id, r: element.querySelector("rect").getBoundingClientRect() }))
      .filter((box) => inside(box.r) && onTop(box.element, box.r));
    const mx = (svg.left + svg.right) / 2;
    const my = (svg.top + svg.bottom) / 2;
    const distance = (r) => Math.hypot(r.left + r.width / 2 - mx, r.top + r.height / 2 - my);
    boxes.sort((a, b) => distance(a.r) - distance(b.r));
    if (boxes.length) {
      const r = boxes[0].r;
      return { id: boxes[0].id, kind, x: r.left + r.width / 2, y: r.top + r.height / 2 };
    }
  }
  return null;
};

/** Whether the page shows the clicked box selected and, for a node, has asked for its details; when. */
const ANSWERED = (target) => {
  const element = document.querySelector(`#graph-layer .item[data-id="${CSS.escape(target.id)}"]`);
  if (!element?.classList.contains("selected")) return null;
  const clicked = window.__bench.inputs.find(([type, , trusted]) => type === "clicked" && trusted);
  if (!clicked) return null;
  if (target.kind !== "node") return { at: clicked[1] };
  const node = Number(/^\d+:n(\d+)$/.exec(target.id)?.[1]);
  const pressed = window.__bench.inputs.find(([type, , trusted]) => type === "pointerdown" && trusted);
  const asked = window.__bench.posts.find((m) => m.type === "nodeDetails" && m.index === node && m.at >= pressed[1]);
  return asked ? { at: Math.max(asked.at, clicked[1]) } : null;
};

/** Opening a model: first paint, then a real click on a drawn node, answered, and the main thread quiet. */
async function open(page) {
  const painted = await page.waitForFunction(() => {
    const { firstPaintMs, layoutMs } = document.getElementById("graph-viewport")?.dataset ?? {};
    return firstPaintMs === undefined ? null : [Number(firstPaintMs), layoutMs === undefined ? null : Number(layoutMs)];
  }, null, { timeout: 120_000, polling: "raf" });
  const [firstPaint, layoutMs] = await painted.jsonValue();  // the first layout's time in the worker (newer pages)
  const target = await page.evaluate(TARGET);
  if (!target) {
    throw new Error("no node box in view to click");
  }
  await page.mouse.click(target.x, target.y);  // real input: move, press, release through the browser
  let answer = null;
  try {
    answer = await (await page.waitForFunction(ANSWERED, target, { timeout: ANSWER_TIMEOUT_MS, polling: "raf" }))
      .jsonValue();
  } catch {
    // the click went unanswered: the page was never interactive within the timeout
  }
  // Interactive: the answer, and then QUIET_MS in which no long task starts (a long task running at the answer, or
  // starting within QUIET_MS of its end, moves the moment to that task's end).
  const quiet = await page.evaluateHandle(([quietMs]) => new Promise((resolve) => {
    const check = () => {
      const tasks = window.__bench.longTasks;
      const last = tasks.reduce((end, [start, duration]) => Math.max(end, start + duration), 0);
      if (performance.now() - last >= quietMs + 100) resolve(true); else setTimeout(check, 50);
    };
    setTimeout(check, quietMs);
  }), [QUIET_MS]);
  await quiet.jsonValue();
  const bench = await page.evaluate(() => {
    window.__bench.recording = false;
    return window.__bench;
  });
  const requested = bench.requested;
  let end = answer ? answer.at : requested + firstPaint + ANSWER_TIMEOUT_MS;
  for (let moved = true; answer && moved;) {
    moved = false;
    for (const [start, duration] of bench.longTasks) {
      if (start < end + QUIET_MS && start + duration > end) {
        end = start + duration;
        moved = true;
      }
    }
  }
  // Frames and long tasks from the request to the page being interactive (or to the click's timeout).
  let longestFrame = 0;
  for (let i = 1; i < bench.frames.length; i++) {
    if (bench.frames[i] > requested && bench.frames[i - 1] < end) {
      longestFrame = Math.max(longestFrame, bench.frames[i] - bench.frames[i - 1]);
    }
  }
  const tasks = bench.longTasks.filter(([start, duration]) => start + duration > requested && start < end);
  const pressed = bench.inputs.find(([type, , trusted]) => type === "pointerdown" && trusted);
  return {
    firstPaintMs: firstPaint, layoutMs, clicked: target.kind, clickMs: pressed ? pressed[1] - requested : null,
    interactiveMs: answer ? end - requested : null, answerMs: answer ? answer.at - requested : null, longestFrame,
    longestTask: Math.max(0, ...tasks.map(([, duration]) => duration)), longTasks: tasks.length,
    longTaskMs: tasks.reduce((sum, [, duration]) => sum + duration, 0),
    tasks: tasks.map(([start, duration]) => [Math.round(start - requested), Math.round(duration)]),
    deliveryMs: bench.delivery ? bench.delivery[1] : null,
  };
}

// Chromium's profile holds sockets, whose paths must be short: a deep TMPDIR (pytest's) makes it exit at
// launch. Its profile goes to a short folder of its own, removed at the end.
const browserTmp = fs.mkdtempSync("/tmp/ol-graph-bench-");
process.env.TMPDIR = browserTmp;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--enable-precise-memory-info"],
});
const results = [];
const repeat = Number(process.env.REPEAT || 1);
try {
  for (const item of cases) {
    // The host's message, built before the page asks for it (the server's answer, as the extension posts it).
    const data = JSON.parse(fs.readFileSync(item.data, "utf8"));
    current = { ...item, message: JSON.stringify(graphDataMessage(data.graph, data.findings)) };
    // Each open on a fresh page; the last open's page goes on to the pan, search and heap measurements.
    const opens = [];
    let page;
    const errors = [];
    for (let run = 0; run < repeat; run++) {
      await page?.close();
      page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      page.on("pageerror", (error) => errors.push(String(error)));
      const profile = process.env.PROFILE && run === 0 ? await page.context().newCDPSession(page) : undefined;
      if (profile) {
        await profile.send("Profiler.enable");
        await profile.send("Profiler.setSamplingInterval", { interval: 200 });
        await profile.send("Profiler.start");
      }
      const trace = process.env.TRACE && run === 0 ? path.join(process.env.TRACE, `${item.name}.trace.json`)
        : undefined;
      if (trace) {
        await browser.startTracing(page, { path: trace, screenshots: false,
          categories: ["devtools.timeline", "disabled-by-default-devtools.timeline",
            "disabled-by-default-devtools.timeline.stack", "v8.execute", "blink.user_timing"] });
      }
      await page.goto(`http://127.0.0.1:${server.address().port}/`);
      opens.push(await open(page));
      if (trace) {
        await browser.stopTracing();
      }
      if (profile) {
        const { profile: samples } = await profile.send("Profiler.stop");
        fs.writeFileSync(path.join(process.env.PROFILE, `${item.name}.cpuprofile`), JSON.stringify(samples));
        await profile.detach();
      }
    }
    const drawn = await page.locator("#graph-layer .item").count();
    const shot = async (what) => process.env.SHOTS &&
      await page.locator("#whole-graph").screenshot({ path: path.join(process.env.SHOTS, `${item.name}-${what}.png`) });
    await shot("overview");
    const overview = stats(await page.evaluate(PAN));
    // Zoom in on a node deep in the graph, found by search, and pan there.
    const started = Date.now();
    await page.locator("#graph-search").fill(data.reveal);
    const hit = page.locator("#graph-hits [data-graph='hit']").first();
    await hit.waitFor({ timeout: 30_000 });
    const match = `${await hit.getAttribute("data-g")}:n${await hit.getAttribute("data-node")}`;
    await page.locator("#graph-search").press("Enter");
    // The match selected (not any selection: the clicked node, or the first finding's, is selected already).
    await page.locator(`#graph-layer .item.selected[data-id="${match}"]`).waitFor({ timeout: 60_000 });
    const revealMs = Date.now() - started;
    const zoomedDrawn = await page.locator("#graph-layer .item").count();
    await page.waitForTimeout(300);  // the details pane's request goes nowhere here; let the drawing settle
    await shot("revealed");
    const zoomed = stats(await page.evaluate(PAN));
    const heapMB = await page.evaluate(() => (performance.memory?.usedJSHeapSize ?? 0) / 1e6);
    results.push({ name: item.name, firstPaintMs: opens[0].firstPaintMs, opens, drawn, overview, revealMs, zoomedDrawn,
      zoomed, heapMB, errors, announced: await page.locator("#graph-announce").textContent() });
    await page.close();
  }
} finally {
  await browser.close();
  server.close();
  fs.rmSync(browserTmp, { recursive: true, force: true });
}
fs.writeFileSync(process.env.RESULT, JSON.stringify(results, null, 2));
