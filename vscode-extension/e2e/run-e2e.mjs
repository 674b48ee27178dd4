// End to end in a real VS Code: code-server (CODE_SERVER: 4.100.3 or the current release) with the
// built .vsix, driven by playwright-core in Debian's Chromium. Opens a binary weakly-typed model,
// checks the model view and the Problems panel, its whole graph ("Show in graph" jumps to a finding,
// search, node details), a finding's quick look (light theme, then dark and high contrast),
// opens the textual view (coloured tokens, one Problems entry per finding), clicks "Fix all",
// checks the file on disk and the empty Problems panel, then quantizes (its progress notification with
// Cancel, its report with the target and the sensitivity table, the written model's view with its provenance,
// its whole graph coloured by each INT8 node's share of the error, a node's error in its details).
// Then a second quantize with an accuracy target from the settings (onnxLint.quantize.minCosine, the
// calibration data and the output, written to the workspace's settings file while VS Code runs): a model that
// meets it once one node moves to FP16, its report with the accuracy/coverage frontier plot and its points,
// the written model opened.
// Screenshots of each step.
//
// Then "onnx-lint: Restart server" from the palette while the 100k chain's view waits for its first lint: its findings
// and graph come back and one server runs, a new one.
// Then the whole graph of bigger models in the workspace (BIG_MODELS: JSON [{file, search}]), each
// opened, searched and photographed.
// Last, the model view with the mouse (MATRIX_MODELS: JSON [{file, name, expand}]): every model, in Light Modern, Dark
// Modern, Dark High Contrast and Light High Contrast, at 1400x900 and in a 350 px column (40 combinations, one
// screenshot each): a double-click expands a group, a click details a node, every visible text is checked for 4.5:1
// contrast. The models stay open in tabs and the themes are switched as a user does, without reloading code-server:
// the whole run takes about 5 minutes per code-server version on 2 cores, the matrix a little over 2 of them, so both
// versions run it whole.
// Environment: CODE_SERVER, VSIX, WORKSPACE, MODEL, FRONTIER_MODEL, FRONTIER_DATA, FRONTIER_OUTPUT, FRONTIER_TARGET,
// PYTHON, SCREENSHOTS, RESULT, CHROMIUM, BIG_MODELS and MATRIX_MODELS (optional).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const codeServer = env("CODE_SERVER");
const vsix = env("VSIX");
const workspace = env("WORKSPACE");
const model = env("MODEL");
// The accuracy target's model (in the workspace), its calibration data, the output to write, the target cosine.
const frontierModel = env("FRONTIER_MODEL");
const frontierData = env("FRONTIER_DATA");
const frontierOutput = env("FRONTIER_OUTPUT");
const frontierTarget = Number(env("FRONTIER_TARGET"));
const python = env("PYTHON");
const screenshots = env("SCREENSHOTS");
const resultPath = env("RESULT");
const result = { steps: [] };
fs.mkdirSync(screenshots, { recursive: true });

const home = fs.mkdtempSync(path.join(os.tmpdir(), "onnx-lint-e2e-"));
const userData = path.join(home, "user-data");
const extensions = path.join(home, "extensions");
fs.mkdirSync(path.join(userData, "User"), { recursive: true });
fs.mkdirSync(path.join(userData, "Machine"), { recursive: true });
// The interpreter is a machine-scoped setting: a code-server window is a remote one, where VS Code takes those from the
// remote's settings (Machine/, "Remote [code-server]" in the Settings UI) and drops them from the user's once the
// workbench has loaded its configuration. In the user's settings the first server still started with it, and
// "Restart server" then started `python3`.
fs.writeFileSync(path.join(userData, "Machine", "settings.json"),
  JSON.stringify({ "onnxLint.interpreter": python }, null, 2));
fs.writeFileSync(path.join(userData, "User", "settings.json"), JSON.stringify({
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "update.mode": "none",
  "window.restoreWindows": "none",
  "problems.autoReveal": true,
  "onnxLint.quantize.output": path.join(workspace, "weak.int8-fp16.onnx"),
}, null, 2));
// No theme id and no setting that a later VS Code renamed ("Default Light Modern" is "Light Modern"
// in 1.13x, extensions.autoUpdate false is "off"): 1.13x rewrites such a settings.json on start, and
// the light theme is picked by its label, the same in every version, as a user does.
const childEnv = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"), XDG_DATA_HOME: path.join(home, ".local") };

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

async function waitFor(predicate, what, timeoutMs = 90_000, intervalMs = 250) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await predicate();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out waiting for ${what} (last: ${last})`);
}

// Contrast (WCAG 2.1, 1.4.3) of every visible text of a model view, run in its page: each against the background it
// is drawn on (the box behind an SVG label, else the nearest opaque background, translucent layers and opacity
// blended in): 4.5:1, 3:1 for large text. Disabled controls are exempt. The lowest, and the finding's marked row.
async function auditContrast() {
  const paint = document.createElement("canvas").getContext("2d", { willReadFrequently: true });
  const rgba = (css) => {  // any CSS colour (rgb(), color(srgb ...) from color-mix) as [r, g, b, a 0..1]
    if (!css || css === "none" || css.startsWith("url")) return null;
    paint.clearRect(0, 0, 1, 1);
    paint.fillStyle = "rgba(0, 0, 0, 0)";
    paint.fillStyle = css;
    paint.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = paint.getImageData(0, 0, 1, 1).data;
    return [r, g, b, a / 255];
  };
  const over = (top, bottom) => [0, 1, 2].map((i) => top[i] * top[3] + bottom[i] * (1 - top[3])).concat(1);
  const luminance = (c) => c.slice(0, 3).map((v) => v / 255)
    .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const page = rgba(getComputedStyle(document.body).backgroundColor) ?? [255, 255, 255, 1];
  const background = (element) => {
    const layers = [];
    for (let e = element; e && e !== document.documentElement; e = e.parentElement) {
      if (e instanceof SVGElement && e.tagName !== "svg") {
        // An SVG label sits on the box its group draws first (a node's rect); a frame without fill shows what is under it.
        const rect = [...e.children].find((c) => c.tagName === "rect" && c !== element);
        const style = rect && getComputedStyle(rect);
        const fill = style && rgba(style.fill);
        if (fill && fill[3] * Number(style.fillOpacity) > 0) layers.push([...fill.slice(0, 3), fill[3] * Number(style.fillOpacity)]);
      } else {
        const colour = rgba(getComputedStyle(e).backgroundColor);
        if (colour && colour[3] > 0) layers.push(colour);
      }
      if (layers.length && layers[layers.length - 1][3] >= 1) break;
    }
    return layers.reverse().reduce((under, layer) => over(layer, under), page);
  };
  const visible = (element) => {
    if (!element.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
    let r = element.getBoundingClientRect();
    let area = { x: 0, y: 0, right: window.innerWidth, bottom: window.innerHeight };
    for (let e = element.parentElement; e; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (e.tagName === "svg" || style.overflowX !== "visible" || style.overflowY !== "visible") {
        const clip = e.getBoundingClientRect();
        area = { x: Math.max(area.x, clip.x), y: Math.max(area.y, clip.y), right: Math.min(area.right, clip.right),
          bottom: Math.min(area.bottom, clip.bottom) };
      }
    }
    return r.width > 1 && r.height > 1 && Math.min(r.right, area.right) - Math.max(r.x, area.x) > 1 &&
      Math.min(r.bottom, area.bottom) - Math.max(r.y, area.y) > 1;
  };
  const failures = [];
  const marked = [];  // the finding's row in the node's details, whatever its ratio
  let checked = 0;
  for (const element of document.body.querySelectorAll("*")) {
    if (["SCRIPT", "STYLE", "title", "TITLE", "OPTION"].includes(element.tagName) || element.closest(".sr-only")) continue;
    const own = element instanceof HTMLInputElement ? element.value
      : [...element.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join("").trim();
    if (!own || !visible(element)) continue;
    if (element.closest(":disabled, [aria-disabled='true']")) continue;  // inactive controls are exempt
    const style = getComputedStyle(element);
    let colour = rgba(element instanceof SVGElement ? style.fill : style.color);
    if (!colour) continue;
    let opacity = 1;
    for (let e = element; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
    const under = background(element);
    const text = over([...colour.slice(0, 3), colour[3] * opacity], under);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    const found = ratio(text, under);
    checked += 1;
    if (element.closest("#graph-details tr.marked")) marked.push({ text: own.slice(0, 30), ratio: Math.round(found * 100) / 100 });
    if (found < (large ? 3 : 4.5)) {
      failures.push({ text: own.slice(0, 50), element: `${element.tagName.toLowerCase()}.${element.getAttribute("class") ?? ""}`,
        colour: `rgb(${text.slice(0, 3).map(Math.round).join(",")})`, background: `rgb(${under.slice(0, 3).map(Math.round).join(",")})`,
        ratio: Math.round(found * 100) / 100 });
    }
  }
  return { checked, failures, marked };
}

// The onnx-lint servers this e2e's VS Code runs (`python -m onnx_lint server`, with this run's HOME), by process id.
function onnxLintServers() {
  const found = [];
  for (const pid of fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      const at = argv.indexOf("onnx_lint");
      if (at < 1 || argv[at - 1] !== "-m" || argv[at + 1] !== "server") continue;
      if (fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`HOME=${home}`)) found.push(pid);
    } catch {
      // a process that ended meanwhile
    }
  }
  return found;
}

function step(name) {
  result.steps.push(name);
  console.log(`e2e: ${name}`);
}

const install = spawnSync(codeServer, ["--install-extension", vsix, "--extensions-dir", extensions,
  "--user-data-dir", userData], { env: childEnv, encoding: "utf8" });
if (install.status !== 0) throw new Error(`installing the .vsix failed: ${install.stdout}${install.stderr}`);
step("installed the .vsix");

const port = await freePort();
const server = spawn(codeServer, ["--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--disable-telemetry",
  "--disable-update-check", "--disable-workspace-trust", "--extensions-dir", extensions, "--user-data-dir", userData,
  workspace], { env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
let serverLog = "";
server.stdout.on("data", (d) => { serverLog += d; });
server.stderr.on("data", (d) => { serverLog += d; });

let browser;
let page;
async function shot(name) {
  const file = path.join(screenshots, `${String(result.steps.length).padStart(2, "0")}-${name}.png`);
  await page.screenshot({ path: file });
  (result.screenshots ??= []).push(file);
}

try {
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, "code-server to listen", 60_000);
  step("code-server is up");
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
      "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"],
  });
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
  step("workbench loaded");

  // Themes, picked as a user does (Preferences: Color Theme): the open view follows each
  // (VS Code restyles webviews through the --vscode-* variables).
  // The theme is typed into the picker: newer VS Code lists more themes than its list shows at once.
  const pickTheme = async (name) => {
    const label = new RegExp(`^${name}`);
    await page.locator(".part.sidebar").click({ position: { x: 150, y: 400 } });
    await page.keyboard.press("F1");
    const quickInput = page.locator(".quick-input-widget input");
    await quickInput.waitFor({ timeout: 30_000 });
    await quickInput.fill(">Preferences: Color Theme");
    await page.locator(".quick-input-list .monaco-list-row", { hasText: /^Preferences: Color Theme/ }).first().click();
    await page.locator(".quick-input-list .monaco-list-row", { hasText: /Modern/ }).first().waitFor({ timeout: 30_000 });
    await quickInput.fill(name);
    const row = page.locator(".quick-input-list .monaco-list-row", { hasText: label }).first();
    await row.waitFor({ timeout: 30_000 });
    await row.click();
  };

  // A command from the palette, tried again while it does not run (something that takes the focus closes the
  // palette).
  const runCommand = (label, done = async () => true) => waitFor(async () => {
    if (await page.locator(".quick-input-widget").isVisible()) await page.keyboard.press("Escape");
    await page.keyboard.press("F1");
    await page.locator(".quick-input-widget input").fill(`>${label}`, { timeout: 5_000 });
    await page.locator(".quick-input-list .monaco-list-row", { hasText: new RegExp(`^${label}`), hasNotText: /JSON/ })
      .first().click({ timeout: 5_000 });
    return await done();
  }, `the command ${label}`, 90_000, 1_000);

  // A workspace file opened as a user types its path into Quick Open (F1, then the path instead of a command).
  const quickOpen = (relative) => waitFor(async () => {
    if (await page.locator(".quick-input-widget").isVisible()) await page.keyboard.press("Escape");
    // The keys go to the workbench, not to a view.
    await page.locator(".part.sidebar").click({ position: { x: 150, y: 400 } });
    await page.keyboard.press("F1");
    await page.locator(".quick-input-widget input").fill(relative, { timeout: 5_000 });
    let row = page.locator(".quick-input-list .monaco-list-row", { hasText: path.basename(relative) });
    if (path.dirname(relative) !== ".") row = row.filter({ hasText: path.dirname(relative) });
    await row.first().click({ timeout: 10_000 });
    return true;
  }, `Quick Open to open ${relative}`, 90_000, 1_000);

  // The quantize report as a reader meets it (src/reportHtml.ts): its parts in the order they appear, the verdict,
  // the warnings, the accuracy table, the coverage and the nodes kept out of INT8, and its visible text.
  const reportFacts = async (section) => ({
    ...(await section.evaluate((root) => {
      const parts = { "p.verdict": "verdict", "ul.report-warnings": "warnings", "p.written": "written",
        "table.quantize-outputs": "outputs", "section.quantize-coverage": "coverage", "ul.kept-out": "kept",
        "section.sensitivity": "sensitivity", "section.quantize-frontier": "frontier", "section.quantize-made": "made",
        "details.raw-report": "raw" };
      const all = [...root.querySelectorAll(Object.keys(parts).join(", "))];
      return { order: all.map((e) => parts[Object.keys(parts).find((selector) => e.matches(selector))]),
        verdictKind: root.querySelector("p.verdict")?.getAttribute("data-verdict") ?? "",
        rawOpen: root.querySelector("details.raw-report")?.open ?? null };
    })),
    verdict: await section.locator("p.verdict").innerText(),
    warnings: await section.locator("ul.report-warnings li").allInnerTexts(),
    target: await section.locator("p.quantize-target").innerText(),
    samples: await section.locator("p.samples").innerText(),
    headers: await section.locator("table.quantize-outputs th").allInnerTexts(),
    rows: await section.locator("table.quantize-outputs tbody tr").allInnerTexts(),
    coverage: await section.locator("section.quantize-coverage").innerText(),
    kept: await section.locator("ul.kept-out li").allInnerTexts(),
    text: await section.innerText(),
  });
  // WCAG contrast of every visible piece of text in the report against the background it is drawn on (the nearest
  // ancestor's opaque background); marks drawn as icons (aria-hidden) need 3:1. The lowest of each, with the text.
  const reportContrast = (section) => section.evaluate((root) => {
    // "rgb(204, 167, 0)", or a color-mix() as Chromium computes it: "color(srgb 0.8 0.73 0.4)" (0 to 1).
    const rgb = (css) => {
      const n = (css.match(/[\d.]+/g) ?? []).map(Number);
      return css.startsWith("color(") ? [...n.slice(0, 3).map((v) => v * 255), ...n.slice(3)] : n;
    };
    const luminance = ([r, g, b]) => [r, g, b].map((c) => c / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
      .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
    const background = (element) => {
      for (let e = element; e; e = e.parentElement) {
        const colour = rgb(getComputedStyle(e).backgroundColor);
        if (colour.length >= 3 && (colour.length < 4 || colour[3] > 0.5)) return colour;
      }
      return rgb(getComputedStyle(document.body).backgroundColor);
    };
    const ratio = (a, b) => {
      const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
      return (hi + 0.05) / (lo + 0.05);
    };
    const lowest = { text: { ratio: Infinity, what: "" }, icon: { ratio: Infinity, what: "" }, checked: 0 };
    for (const element of root.querySelectorAll("*")) {
      const own = [...element.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent.trim()).join("");
      if (!own || element.closest("svg") || !element.getClientRects().length || element.closest("details:not([open]) > :not(summary)")) continue;
      const style = getComputedStyle(element);
      if (style.visibility === "hidden") continue;
      const kind = element.closest("[aria-hidden=true]") ? "icon" : "text";
      const found = ratio(rgb(style.color), background(element));
      lowest.checked += 1;
      if (found < lowest[kind].ratio) lowest[kind] = { ratio: Math.round(found * 100) / 100, what: `${element.className || element.tagName}: ${own.slice(0, 60)}`, colour: style.color };
    }
    return lowest;
  });

  // Open the model from the explorer: it opens in onnx-lint's custom editor (no didOpen is sent).
  const entry = page.locator(`.explorer-folders-view .monaco-list-row[aria-label^="${path.basename(model)}"]`);
  await entry.waitFor({ timeout: 60_000 });
  // Until the extension host has registered the custom editor, VS Code opens the file as binary text;
  // a user would reopen it, and so does the test.
  const binaryNotice = page.getByText("The file is not displayed in the text editor");
  const webviews = page.locator("iframe.webview.ready");
  for (let attempt = 0; ; attempt++) {
    await entry.dblclick();
    const opened = await waitFor(async () => (await binaryNotice.isVisible() && "binary")
      || ((await webviews.count()) > 0 && "view"), "the model to open", 60_000);
    if (opened === "view") break;
    if (attempt === 10) throw new Error("the model never opened in the onnx-lint model view");
    await page.keyboard.press("Control+W");
    await page.waitForTimeout(2000);
  }
  // The first webview is this model's view (quantizing opens a second one, for the written model).
  const view = page.frameLocator("iframe.webview.ready").first().frameLocator("iframe#active-frame");
  const outputs = view.locator("table.outputs");
  await outputs.waitFor({ timeout: 120_000 });
  await view.locator("ul.diagnostics li").first().waitFor({ timeout: 120_000 });
  result.outputs = await outputs.locator("tbody tr").allInnerTexts();
  result.viewProblems = await view.locator("ul.diagnostics li").allInnerTexts();
  result.identity = await view.locator("dl.identity").innerText();
  step("model view shows outputs and problems");
  // The light theme (the themes are listed once the built-in extensions are up, as they are now).
  await pickTheme("Light Modern");
  await page.locator(".monaco-workbench.vs").waitFor({ timeout: 60_000 });
  await view.locator("body.vscode-light").waitFor({ timeout: 60_000 });
  step("picked the light theme");
  await shot("model-view");

  // The whole graph, for every model: drawn once the server has sent it, laid out off the page's thread.
  const whole = view.locator("#whole-graph");
  await view.locator("#graph-viewport[data-first-paint-ms]").waitFor({ state: "attached", timeout: 120_000 });
  const graphFacts = () => view.locator("body").evaluate(() => ({
    status: document.getElementById("graph-status")?.textContent ?? "",
    items: [...document.querySelectorAll("#graph-layer .item")].map((g) => g.getAttribute("class")),
    staleEdges: [...document.querySelectorAll("#graph-layer .edge.stale")].map((g) => `${g.getAttribute("class")} ${g.getAttribute("data-tensor")}`),
    selected: document.querySelector("#graph-layer .item.selected")?.getAttribute("aria-label") ?? "",
    announced: document.getElementById("graph-announce")?.textContent ?? "",
    focused: document.activeElement?.id ?? "",
    tableSelected: document.querySelector("#graph-table-body tr[aria-selected='true']")?.textContent ?? "",
    firstPaintMs: Number(document.getElementById("graph-viewport")?.dataset.firstPaintMs ?? -1),
    errorStroke: (() => { const r = document.querySelector("#graph-layer .item.error rect"); return r ? getComputedStyle(r).stroke : ""; })(),
    plainStroke: (() => { const r = document.querySelector("#graph-layer .item:not(.error):not(.warning):not(.info) rect"); return r ? getComputedStyle(r).stroke : ""; })(),
  }));
  result.wholeGraph = { drawn: await graphFacts() };
  // -- Layout, selection and navigation: the model as it opens --------------------------------------------------
  // On open the first finding's node (OL001's Add_2) is selected and detailed, and the keyboard stays where VS Code
  // put it (nothing in the view takes the focus).
  await view.locator("#graph-details table.node-tensors").first().waitFor({ timeout: 60_000 });
  result.layout = { opened: { ...(await graphFacts()), details: await view.locator("#graph-details h3").innerText() } };
  if (!result.layout.opened.selected.startsWith("Add node Add_2") || !result.layout.opened.details.includes("Add_2")) {
    throw new Error(`on open, the first finding's node is not selected: ${JSON.stringify(result.layout.opened)}`);
  }
  if (result.layout.opened.focused !== "") {
    throw new Error(`on open, the view took the keyboard focus (${result.layout.opened.focused})`);
  }
  step("on open, the first finding's node is selected and detailed, the focus left where it was");
  // "Show in graph" on OL001: the node computing the stale output is selected, announced, and detailed.
  await view.locator("ul.diagnostics li", { hasText: "OL001" }).locator("button.show-graph").click();
  await view.locator("#graph-layer .item.selected").waitFor({ timeout: 60_000 });
  await view.locator("#graph-details table.node-tensors").first().waitFor({ timeout: 60_000 });
  result.wholeGraph.shown = await graphFacts();
  result.wholeGraph.details = {
    title: await view.locator("#graph-details h3").innerText(),
    outputs: await view.locator("#graph-details table.node-tensors").last().locator("tbody tr").allInnerTexts(),
  };
  step("Show in graph selects the finding's node in the whole graph, with its details");
  await whole.evaluate((section) => section.scrollIntoView());
  await page.waitForTimeout(300);
  await shot("whole-graph-light");
  // Search by op type: Enter goes to the first match.
  await view.locator("#graph-search").fill("Gelu");
  await view.locator("#graph-hits [data-graph='hit']").first().waitFor({ timeout: 30_000 });
  result.wholeGraph.hits = await view.locator("#graph-hits [data-graph='hit']").allInnerTexts();
  await view.locator("#graph-search").press("Enter");
  await waitFor(async () => (await graphFacts()).selected.startsWith("Gelu") || (await graphFacts()).selected.includes("Gelu"),
    "the search match to be selected", 30_000);
  result.wholeGraph.searched = await graphFacts();
  // The keyboard: from the selection, the next node down.
  await page.keyboard.press("ArrowDown");
  result.wholeGraph.keyboard = await graphFacts();
  step("search and the arrow keys move the selection");
  // The mouse, with real pointer events (press, move, release), not dispatched events or keys: a click on a
  // node selects it and opens its details; a drag on empty space pans and keeps the selection; a click on
  // empty space clears it.
  const transform = () => view.locator("#graph-layer").getAttribute("transform");
  // A node wholly inside the visible drawing, away from the minimap (the bottom-right corner).
  const targetId = await view.locator("body").evaluate(() => {
    const area = document.getElementById("graph-svg").getBoundingClientRect();
    const map = document.getElementById("graph-minimap").getBoundingClientRect();
    for (const g of document.querySelectorAll("#graph-layer .item.node:not(.selected)")) {
      const r = g.getBoundingClientRect();
      const inside = r.left > area.left + 20 && r.right < area.right - 20 && r.top > area.top + 20 && r.bottom < area.bottom - 20;
      const underMap = r.right > map.left && r.bottom > map.top;
      if (inside && !underMap) return g.getAttribute("data-id");
    }
    return null;
  });
  if (!targetId) throw new Error("no node lies wholly inside the visible drawing");
  const target = view.locator(`#graph-layer .item[data-id="${targetId}"]`);
  const targetLabel = await target.getAttribute("aria-label");
  const tb = await target.boundingBox();
  await page.mouse.click(tb.x + tb.width / 2, tb.y + tb.height / 2);
  await waitFor(async () => (await graphFacts()).selected === targetLabel, "a mouse click to select the node", 30_000);
  await view.locator("#graph-details table.node-tensors").first().waitFor({ timeout: 60_000 });
  result.wholeGraph.clicked = { ...(await graphFacts()), label: targetLabel,
    details: await view.locator("#graph-details h3").innerText() };
  const svgBox = await view.locator("#graph-svg").boundingBox();
  const empty = { x: svgBox.x + 6, y: svgBox.y + 6 };
  const panFrom = await transform();
  await page.mouse.move(empty.x, empty.y);
  await page.mouse.down();
  await page.mouse.move(empty.x + 60, empty.y + 40, { steps: 8 });
  await page.mouse.up();
  result.wholeGraph.dragged = { moved: (await transform()) !== panFrom, ...(await graphFacts()) };
  await page.mouse.click(empty.x, empty.y);
  await waitFor(async () => (await graphFacts()).selected === "", "a click on empty space to clear the selection", 30_000);
  result.wholeGraph.cleared = await graphFacts();
  step("the mouse selects a node, pans the drawing and clears the selection");

  // -- Layout, selection and navigation: the graph is the view ------------------------------------------------
  // At 1400x900 and in a 350 px wide editor column: the graph fills the editor's height below the header (no
  // scrolling), beside (then above) its details; the minimap has its own strip, which never overlaps the drawing,
  // and a toggle; the split between drawing and details follows the mouse and the arrow keys; search counts agree
  // in number. Then the contrast of every visible text in the light, dark and high-contrast themes.
  const layoutFacts = () => view.locator("body").evaluate(() => {
    const box = (element) => {
      const r = element?.getBoundingClientRect();
      return r ? { x: r.x, y: r.y, width: r.width, height: r.height, right: r.right, bottom: r.bottom } : null;
    };
    const byId = (id) => document.getElementById(id);
    const svg = box(byId("graph-svg"));
    const map = box(byId("graph-minimap"));
    const overlap = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.x, b.x)) *
      Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.y, b.y));
    // The nodes as drawn (clipped to the drawing) that the minimap would cover.
    const covered = [...document.querySelectorAll("#graph-layer .item")].filter((g) => {
      const r = box(g);
      const shown = { x: Math.max(r.x, svg.x), y: Math.max(r.y, svg.y), right: Math.min(r.right, svg.right),
        bottom: Math.min(r.bottom, svg.bottom) };
      return shown.right > shown.x && shown.bottom > shown.y && map.width > 0 && overlap(shown, map) > 0;
    }).length;
    return {
      innerWidth: window.innerWidth, innerHeight: window.innerHeight, scrollY: window.scrollY,
      body: box(byId("graph-body")), svg, minimap: map, details: box(byId("graph-details")), split: box(byId("graph-split")),
      minimapOverlap: map.width > 0 ? overlap(svg, map) : 0, covered,
      minimapHidden: byId("graph-minimap-strip").hidden,
      minimapPressed: document.querySelector("[data-graph='minimap']").getAttribute("aria-pressed"),
      orientation: byId("graph-split").getAttribute("aria-orientation"),
      share: Number(byId("graph-split").getAttribute("aria-valuenow")),
      problems: [...document.querySelectorAll("ul.diagnostics > li:not([hidden])")].map((li) => li.innerText.split("\n")[0]),
      selected: document.querySelector("#graph-layer .item.selected")?.getAttribute("aria-label") ?? "",
    };
  });
  // The graph fills the editor: wholly in view without scrolling, its bottom at the editor's bottom, a good part of its
  // height (weak.onnx's two findings wrap to 8 lines beside 4.13x's Chat bar: 388 of 776 px there).
  const fillsEditor = (facts, share) => facts.body.y > 0 && facts.body.bottom <= facts.innerHeight &&
    facts.body.bottom >= facts.innerHeight - 24 && facts.body.height >= share * facts.innerHeight;
  const layoutPanel = page.locator(".part.panel.bottom");
  if (await layoutPanel.isVisible()) {
    await page.keyboard.press("Control+J");
    await layoutPanel.waitFor({ state: "hidden", timeout: 10_000 }).catch(() => undefined);
  }
  const toTop = () => view.locator("body").evaluate(() => window.scrollTo(0, 0));
  // The finding's node shown with the mouse ("Show in graph"), so that the details (the finding's row marked) are
  // part of every check and photograph below.
  await toTop();
  await page.waitForTimeout(300);
  const showOl001 = await view.locator("ul.diagnostics li", { hasText: "OL001" }).locator("button.show-graph").boundingBox();
  await page.mouse.click(showOl001.x + showOl001.width / 2, showOl001.y + showOl001.height / 2);
  await view.locator("#graph-details tr.marked").first().waitFor({ timeout: 60_000 });
  await toTop();
  await page.waitForTimeout(500);
  const wide = await layoutFacts();
  result.layout.wide = wide;
  if (!fillsEditor(wide, 0.4) || wide.orientation !== "vertical" || wide.details.x < wide.svg.right) {
    throw new Error(`at 1400x900 the graph does not fill the editor beside its details: ${JSON.stringify(wide)}`);
  }
  if (wide.minimap.width < 40 || wide.minimapOverlap > 0 || wide.covered > 0) {
    throw new Error(`the minimap overlaps the drawing: ${JSON.stringify(wide)}`);
  }
  await shot("layout-1400x900");
  // The minimap's toggle, with the mouse: hidden, the drawing takes its strip; shown again.
  const minimapButton = await view.locator("button[data-graph='minimap']").boundingBox();
  await page.mouse.click(minimapButton.x + minimapButton.width / 2, minimapButton.y + minimapButton.height / 2);
  await waitFor(async () => (await layoutFacts()).minimapHidden, "the minimap to hide", 10_000);
  result.layout.minimapOff = await layoutFacts();
  await page.mouse.click(minimapButton.x + minimapButton.width / 2, minimapButton.y + minimapButton.height / 2);
  await waitFor(async () => !(await layoutFacts()).minimapHidden, "the minimap to show again", 10_000);
  if (!(result.layout.minimapOff.svg.width > wide.svg.width + 30) || result.layout.minimapOff.minimapPressed !== "false") {
    throw new Error(`hiding the minimap did not give its room to the drawing: ${JSON.stringify(result.layout.minimapOff)}`);
  }
  // The split, dragged with the mouse 200 px to the left: the details widen by as much; then two presses of the
  // right arrow key give the drawing 10% more.
  const grip = wide.split;
  const frameOrigin = await page.locator("iframe.webview.ready").first().boundingBox();
  const sash = await view.locator("#graph-split").boundingBox();
  await page.mouse.move(sash.x + sash.width / 2, sash.y + sash.height / 2);
  await page.mouse.down();
  await page.mouse.move(sash.x + sash.width / 2 - 200, sash.y + sash.height / 2, { steps: 10 });
  await page.mouse.up();
  const dragged = await layoutFacts();
  await view.locator("#graph-split").focus();
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  const keyed = await layoutFacts();
  result.layout.split = { before: { share: wide.share, details: wide.details.width, grip, frameOrigin },
    dragged: { share: dragged.share, details: dragged.details.width }, keyed: { share: keyed.share, details: keyed.details.width } };
  if (Math.abs(dragged.details.width - wide.details.width - 200) > 24 || dragged.share >= wide.share) {
    throw new Error(`the split did not follow the mouse: ${JSON.stringify(result.layout.split)}`);
  }
  if (keyed.share !== dragged.share + 10 || !(keyed.details.width < dragged.details.width)) {
    throw new Error(`the split did not follow the arrow keys: ${JSON.stringify(result.layout.split)}`);
  }
  step("the graph fills the editor beside its details; the minimap has its own strip and a toggle; the split follows the mouse and the keys");
  // Search counts in the singular and the plural (a capped search is checked on the 100,000-node chain below).
  const searchCount = () => view.locator("#graph-search-count").innerText();
  await view.locator("#graph-search").fill("Gelu");
  await waitFor(async () => (await searchCount()) === "1 match", "the search to count one match", 10_000);
  await view.locator("#graph-search").fill("MatMul");
  await waitFor(async () => (await searchCount()) === "2 matches", "the search to count two matches", 10_000);
  result.layout.search = { one: "1 match", two: await searchCount(), status: (await graphFacts()).status };
  await view.locator("#graph-search").fill("");
  await waitFor(async () => (await searchCount()) === "", "the search count to clear", 10_000);
  if (result.layout.search.status !== "4 nodes in 1 graph") throw new Error(`status: ${result.layout.search.status}`);
  // A 350 px wide editor column (the window narrowed until the view is that wide): the details go below the drawing.
  const frameWidth = async () => (await page.locator("iframe.webview.ready").first().boundingBox()).width;
  let windowWidth = 1400;
  for (let i = 0; i < 3 && Math.abs((await frameWidth()) - 350) > 4; i++) {
    windowWidth -= Math.round((await frameWidth()) - 350);
    await page.setViewportSize({ width: windowWidth, height: 900 });
    await page.waitForTimeout(800);
  }
  await toTop();
  await page.waitForTimeout(500);
  const narrow = { ...(await layoutFacts()), frameWidth: await frameWidth() };
  result.layout.narrow = narrow;
  await shot("layout-350px-column");
  if (Math.abs(narrow.frameWidth - 350) > 12 || !fillsEditor(narrow, 0.3) || narrow.orientation !== "horizontal" ||
      narrow.details.y < narrow.svg.bottom || narrow.minimapOverlap > 0 || narrow.covered > 0 || !narrow.selected) {
    throw new Error(`in a 350 px column the graph does not fill the editor above its details: ${JSON.stringify(narrow)}`);
  }
  await page.setViewportSize({ width: 1400, height: 900 });
  await page.waitForTimeout(800);
  step("in a 350 px wide column the graph fills the editor above its details");
  // Contrast (WCAG 2.1, 1.4.3): every visible text of the view, at the top of the page and at its bottom, against
  // the background it is drawn on (the box behind an SVG label, else the nearest opaque background, translucent
  // layers and opacity blended in): 4.5:1, 3:1 for large text. Disabled controls are exempt.
  const contrastAudit = () => view.locator("body").evaluate(auditContrast);
  result.layout.contrast = {};
  for (const [theme, name, body] of [["light", "Light Modern", "body.vscode-light"],
    ["dark", "Dark Modern", "body.vscode-dark:not(.vscode-high-contrast)"], ["high-contrast", "Dark High Contrast", "body.vscode-high-contrast"]]) {
    if (!(await view.locator(body).count())) {
      await pickTheme(name);
      await view.locator(body).waitFor({ timeout: 60_000 });
      await page.waitForTimeout(1000);
    }
    await toTop();
    // The finding's row (Y ← OL001) scrolled into the details pane's view: it is what high contrast made unreadable.
    await view.locator("#graph-details tr.marked").first().evaluate((row) => row.scrollIntoView({ block: "nearest" }));
    await toTop();
    await page.waitForTimeout(300);
    const top = await contrastAudit();
    await shot(`contrast-${theme}`);
    await view.locator("body").evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await page.waitForTimeout(300);
    const bottom = await contrastAudit();
    result.layout.contrast[theme] = { checked: top.checked + bottom.checked, failures: [...top.failures, ...bottom.failures],
      marked: top.marked };
  }
  await pickTheme("Light Modern");
  await view.locator("body.vscode-light").waitFor({ timeout: 60_000 });
  await toTop();
  const unreadable = Object.entries(result.layout.contrast).filter(([, c]) => c.failures.length || c.checked < 20 ||
    !c.marked.some((cell) => cell.text.startsWith("←")));
  if (unreadable.length) throw new Error(`text below 4.5:1 (WCAG AA): ${JSON.stringify(Object.fromEntries(unreadable))}`);
  step("every visible text of the view has 4.5:1 contrast in the light, dark and high-contrast themes");

  // The Problems panel lists every diagnostic of the file (pulled for the custom-editor tab).
  await page.keyboard.press("Control+Shift+M");
  const markers = page.locator(".markers-panel .monaco-list-row");
  await waitFor(async () => (await markers.allInnerTexts()).join("\n").includes("OL003"), "the Problems panel entries");
  result.problems = await markers.allInnerTexts();
  step("Problems panel lists the diagnostics");
  await shot("problems-panel");
  // The model entry's code link (an entry of a binary model sits at Ln 1) selects its finding in the graph.
  await markers.filter({ hasText: "OL001" }).first().locator(".monaco-link", { hasText: "OL001" }).first().click();
  await waitFor(async () => (await graphFacts()).selected.startsWith("Add node Add_2"),
    "the Problems entry's finding selected in the graph", 30_000);
  result.wholeGraph.fromProblems = await graphFacts();
  step("the Problems entry's code link selects its node in the graph");

  // A finding in its graph: the stale output's node, highlighted, its edge labelled declared vs derived.
  await view.locator("ul.diagnostics li", { hasText: "OL001" }).locator("button.quick-look").click();
  const svg = view.locator("svg.finding-graph");
  await svg.waitFor({ timeout: 120_000 });
  const staleEdge = svg.locator('g.edge.stale[data-tensor="Y"]');
  result.graph = {
    title: await view.locator("#graph-title").innerText(),
    where: await view.locator("#graph p.where").innerText(),
    focusNodes: await svg.locator("g.node.focus").evaluateAll((nodes) => nodes.map((n) => ({
      op: n.getAttribute("data-op"), kind: n.getAttribute("class"), text: n.textContent,
      stroke: getComputedStyle(n.querySelector("rect")).stroke, strokeWidth: getComputedStyle(n.querySelector("rect")).strokeWidth }))),
    staleEdge: await staleEdge.textContent(),
    nodeOps: await svg.locator("g.node").evaluateAll((nodes) => nodes.map((n) => n.getAttribute("data-op"))),
    focused: await view.locator("body").evaluate(() => document.activeElement?.id ?? ""),
  };
  const themeColours = () => view.locator("body").evaluate((body) => {
    const path = document.querySelector('svg.finding-graph g.edge.stale[data-tensor="Y"] path');
    const button = document.querySelector("button#fix-all");
    return {
      bodyClass: body.className,
      background: getComputedStyle(body).backgroundColor,
      foreground: getComputedStyle(body).color,
      staleStroke: getComputedStyle(path).stroke,
      buttonBackground: getComputedStyle(button).backgroundColor,
      nodeFill: getComputedStyle(document.querySelector("svg.finding-graph g.node:not(.focus) rect")).fill,
      variables: getComputedStyle(document.documentElement).getPropertyValue("--vscode-editor-background").trim(),
    };
  });
  result.light = await themeColours();
  step("a finding's graph highlights the stale output's node with declared and derived shapes");
  // The screenshots show the drawing: the panel is hidden and the view scrolled to it.
  await page.keyboard.press("Control+J");
  await view.locator("#graph-title").evaluate((title) => title.scrollIntoView());
  await page.waitForTimeout(500);
  await shot("graph-light");

  // Keyboard: arrow keys walk the drawn nodes and edge labels, each of which says what it is.
  const described = () => view.locator("body").evaluate(() => document.activeElement?.getAttribute("aria-label") ?? "");
  await svg.locator("g.node.input").focus();
  const before = await described();
  await page.keyboard.press("ArrowDown");
  result.keyboard = [before, await described()];
  step("arrow keys move through the drawing");

  await pickTheme("Dark Modern");
  await view.locator("body.vscode-dark").waitFor({ timeout: 60_000 });
  await page.waitForTimeout(1000);
  result.dark = await themeColours();
  step("the view follows the dark theme");
  await shot("graph-dark");
  await whole.evaluate((section) => section.scrollIntoView());
  await page.waitForTimeout(300);
  result.wholeGraph.dark = await graphFacts();
  await shot("whole-graph-dark");
  await pickTheme("Dark High Contrast");
  await view.locator("body.vscode-high-contrast").waitFor({ timeout: 60_000 });
  await page.waitForTimeout(1000);
  result.highContrast = { ...(await themeColours()), buttonBorder: await view.locator("button#quantize").evaluate(
    (b) => getComputedStyle(b).borderTopColor) };
  step("the view follows the high-contrast theme");
  await whole.evaluate((section) => section.scrollIntoView());
  await page.waitForTimeout(300);
  result.wholeGraph.highContrast = await graphFacts();
  await shot("whole-graph-high-contrast");
  await pickTheme("Dark Modern");
  await view.locator("body.vscode-dark:not(.vscode-high-contrast)").waitFor({ timeout: 60_000 });
  // Escape closes the drawing.
  await view.locator("#graph-title").focus();
  await page.keyboard.press("Escape");
  await view.locator("#graph").waitFor({ state: "detached", timeout: 30_000 });
  step("Escape closes the drawing");
  await page.keyboard.press("Control+Shift+M");

  // "Show model as text": the server's textual view, where the diagnostics sit on real lines.
  await view.locator("button#show-text").click();
  const textTab = page.locator('.tabs-container .tab[aria-label*="weak.onnx.txt"]');
  await textTab.waitFor({ timeout: 60_000 });
  await waitFor(async () => (await page.locator(".monaco-editor .view-lines").first().innerText()).includes("=>"),
    "the textual view's text");
  await waitFor(async () => /weak\.onnx\.txt[\s\S]*Ln 6/.test((await markers.allInnerTexts()).join("\n")),
    "the textual view's diagnostics on real lines");
  // One entry per finding: with the textual view open, its entries (on lines) replace the model's.
  await waitFor(async () => !/weak\.onnx\b(?!\.txt)/.test((await markers.allInnerTexts()).join("\n")),
    "the model's own entries to leave while the textual view shows them", 30_000);
  result.textProblems = await markers.allInnerTexts();
  step("textual view shows the diagnostics on real lines");
  // Its tokens are coloured by the ONNX text grammar.
  result.language = await page.locator(".part.statusbar").innerText();
  result.tokens = await page.locator(".monaco-editor .view-lines").first().evaluate((lines) => {
    const colours = {};
    for (const span of lines.querySelectorAll("span > span")) {
      const text = span.textContent.trim();
      if (text && !(text in colours)) colours[text] = getComputedStyle(span).color;
    }
    const plain = lines.querySelector("span > span.mtk1");
    return { colours, plain: plain ? getComputedStyle(plain).color : "" };
  });
  step("the textual view's tokens are coloured");
  await shot("text-view");
  // Closing the textual view brings the model's own entries back: still one entry per finding.
  await textTab.locator(".tab-actions .action-label").click();
  await waitFor(async () => {
    const rows = (await markers.allInnerTexts()).join("\n");
    return !rows.includes("weak.onnx.txt") && rows.includes("[Ln 1, Col 1]") && rows;
  }, "the model's entries back in the Problems panel", 60_000);
  result.problemsTextClosed = await markers.allInnerTexts();
  step("with the textual view closed the model's entries are back");
  await page.locator('.tabs-container .tab[aria-label^="weak.onnx,"], .tabs-container .tab[aria-label="weak.onnx"]').first().click();
  await view.locator("button#fix-all").waitFor({ timeout: 30_000 });

  await view.locator("button#fix-all").click();
  step("clicked Fix all");
  await waitFor(() => {
    const check = spawnSync(python, ["-c", `import onnx,sys; m=onnx.load(sys.argv[1]); d=m.graph.output[0].type.tensor_type.shape.dim; print(len(d))`, model], { encoding: "utf8" });
    return check.stdout.trim() === "2";
  }, "the fixed model on disk");
  step("file on disk is fixed");
  await view.locator("p.clean").waitFor({ timeout: 120_000 });
  await waitFor(async () => (await page.locator(".markers-panel").innerText()).includes("No problems have been detected"),
    "an empty Problems panel");
  result.problemsAfter = await page.locator(".markers-panel").innerText();
  result.outputsAfter = await outputs.locator("tbody tr").allInnerTexts();
  step("Problems panel is empty");
  await shot("fixed");

  // Quantize from the view: its report (the accuracy table) appears in the view, the written model opens.
  await view.locator("button#quantize").click();
  const random = page.locator(".quick-input-list .monaco-list-row", { hasText: /^Calibrate on random inputs/ });
  await random.waitFor({ timeout: 30_000 });
  // While quantize runs (here: while it asks for calibration data), its buttons are disabled and the view says so.
  await view.locator("button#quantize[disabled]").waitFor({ state: "attached", timeout: 30_000 });
  result.quantizing = { busy: await view.locator("p.busy").innerText(),
    fixAllDisabled: await view.locator("button#fix-all").isDisabled() };
  // The server's work-done progress is a notification with its step text and Cancel (src/progress.ts). The
  // toasts come and go with the steps, so the workbench records every one it shows from now on.
  await page.evaluate(() => {
    const seen = (window.onnxLintToasts = []);
    const record = () => {
      for (const toast of document.querySelectorAll(".notifications-toasts .notification-toast")) {
        const message = toast.querySelector(".notification-list-item-message")?.textContent?.trim() ?? "";
        const buttons = [...toast.querySelectorAll(".notification-list-item-buttons-container .monaco-button")]
          .map((b) => b.textContent.trim());
        const entry = JSON.stringify({ message, buttons });
        if (message && !seen.includes(entry)) seen.push(entry);
      }
    };
    new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await random.click();
  // Asked once per workspace: which runtime the model is for (TensorRT: every zero-point 0).
  const tensorrt = page.locator(".quick-input-list .monaco-list-row", { hasText: /^TensorRT/ });
  await tensorrt.waitFor({ timeout: 30_000 });
  result.targetTitle = await page.locator(".quick-input-title").innerText();
  await tensorrt.click();
  const report = view.locator("section.quantize-report");
  await report.waitFor({ timeout: 240_000 });
  result.quantize = {
    ...(await reportFacts(report)),
    sensitivityHeaders: await report.locator("table.sensitivity th").allInnerTexts(),
    sensitivityRows: await report.locator("table.sensitivity tbody tr").allInnerTexts(),
    frontierPlots: await report.locator("svg.frontier").count(),  // no --min-cosine here: no search, no plot
  };
  await page.locator('.tabs-container .tab[aria-label^="weak.int8-fp16.onnx"]').waitFor({ timeout: 60_000 });
  const written = page.frameLocator("iframe.webview.ready").nth(1).frameLocator("iframe#active-frame");
  await written.locator("table.outputs").waitFor({ timeout: 120_000 });
  result.quantize.opened = await written.locator("h1").innerText();
  result.quantize.enabledAfter = await view.locator("button#quantize").isEnabled();
  result.quantize.notifications = (await page.evaluate(() => window.onnxLintToasts)).map((t) => JSON.parse(t));
  // The written model's own view, once linted: where it came from, and no note about its own Q/DQ.
  await written.locator("p.clean, ul.diagnostics li").first().waitFor({ timeout: 120_000 });
  result.quantize.writtenIdentity = await written.locator("dl.identity").innerText();
  result.quantize.writtenProblems = await written.locator("section[aria-labelledby='problems-title']").innerText();
  step("quantize shows its report in the view and opens the written model");
  await report.evaluate((section) => section.scrollIntoView());
  await shot("quantized");

  // The report page read as a user reads it. The raw JSON opens from its disclosure with the mouse (it is not on
  // the page until then); the page's text keeps 4.5:1 contrast (WCAG AA) in the dark, light and high-contrast
  // themes, each photographed.
  const rawSummary = report.locator("details.raw-report > summary");
  await rawSummary.scrollIntoViewIfNeeded();
  const rawBox = await rawSummary.boundingBox();
  await page.mouse.click(rawBox.x + 20, rawBox.y + rawBox.height / 2);
  await report.locator("pre.report-json").waitFor({ state: "visible", timeout: 30_000 });
  result.quantize.raw = { open: await report.locator("details.raw-report").evaluate((d) => d.open),
    json: await report.locator("pre.report-json").innerText() };
  await page.mouse.click(rawBox.x + 20, rawBox.y + rawBox.height / 2);  // closed again: the screenshots show the page
  await report.locator("pre.report-json").waitFor({ state: "hidden", timeout: 30_000 });
  // The report gets the room: no panel below the editors, no secondary side bar (4.13x opens its chat there).
  if (await page.locator(".part.panel.bottom").isVisible()) await page.keyboard.press("Control+J");
  if (await page.locator(".part.auxiliarybar").isVisible()) await page.keyboard.press("Control+Alt+B");
  result.quantize.readable = {};
  for (const [theme, name, body] of [["dark", "Dark Modern", "body.vscode-dark:not(.vscode-high-contrast)"],
    ["light", "Light Modern", "body.vscode-light"], ["high-contrast", "Dark High Contrast", "body.vscode-high-contrast"]]) {
    if (theme !== "dark") {
      await pickTheme(name);
      await view.locator(body).waitFor({ timeout: 60_000 });
      await page.waitForTimeout(1000);
    }
    result.quantize.readable[theme] = await reportContrast(report);
    await report.evaluate((section) => section.scrollIntoView());
    await page.waitForTimeout(300);
    await shot(`quantized-report-${theme}`);
  }
  await pickTheme("Dark Modern");
  await view.locator("body.vscode-dark:not(.vscode-high-contrast)").waitFor({ timeout: 60_000 });
  step("the quantize report reads top-down, its raw JSON behind a disclosure, readable in every theme");

  // The written model's whole graph: each INT8 node tinted by its share of the INT8 error (the server's
  // int8Error), the legend shown; a mouse click on such a node puts its error in the details.
  await written.locator("#graph-viewport[data-first-paint-ms]").waitFor({ state: "attached", timeout: 120_000 });
  await written.locator("#graph-layer .item.int8").first().waitFor({ state: "attached", timeout: 60_000 });
  // The drawing and its details get the room: the panel below the editors goes (Ctrl+J toggles it).
  const panel = page.locator(".part.panel.bottom");
  if (await panel.isVisible()) {
    await page.keyboard.press("Control+J");
    await panel.waitFor({ state: "hidden", timeout: 10_000 }).catch(() => undefined);
  }
  await written.locator("button[data-graph='fit']").click();
  await written.locator("#graph-viewport").evaluate((viewport) => viewport.scrollIntoView({ block: "start" }));
  await page.waitForTimeout(300);
  const sensitivityFacts = () => written.locator("body").evaluate(() => {
    const fill = (g) => (g ? getComputedStyle(g.querySelector("rect")).fill : "");
    const int8 = document.querySelector("#graph-layer .item.int8");
    const legend = document.getElementById("graph-int8-legend");
    return {
      legend: legend && !legend.hidden ? legend.innerText : "",
      int8: [...document.querySelectorAll("#graph-layer .item.int8")].map((g) => ({ id: g.getAttribute("data-id"),
        classes: g.getAttribute("class"), share: Number(g.getAttribute("data-int8-share")), label: g.getAttribute("aria-label"),
        bar: g.querySelector("rect.int8-bar")?.getAttribute("width") ?? null })),
      int8Fill: fill(int8),
      plainFill: fill(document.querySelector("#graph-layer .item.node:not(.int8)")),
      barFill: int8 ? getComputedStyle(int8.querySelector("rect.int8-bar")).fill : "",
      selected: document.querySelector("#graph-layer .item.selected")?.getAttribute("aria-label") ?? "",
    };
  });
  result.sensitivity = { drawn: await sensitivityFacts() };
  // The mouse: the wheel zooms in on the costliest INT8 node (the point under the pointer stays put), a click
  // selects it.
  const hottest = [...result.sensitivity.drawn.int8].sort((a, b) => b.share - a.share)[0];
  const int8Node = written.locator(`#graph-layer .item.int8[data-id="${hottest.id}"]`);
  const scale = async () => Number(/scale\(([\d.]+)\)/.exec(await written.locator("#graph-layer").getAttribute("transform"))?.[1] ?? 1);
  let nb = await int8Node.boundingBox();
  await page.mouse.move(nb.x + nb.width / 2, nb.y + nb.height / 2);
  for (let i = 0; i < 12 && (await scale()) < 1; i++) {
    await page.mouse.wheel(0, -120);
    await page.waitForTimeout(60);
  }
  nb = await int8Node.boundingBox();
  await page.mouse.click(nb.x + nb.width / 2, nb.y + nb.height / 2);
  await written.locator("#graph-details p.int8-error").waitFor({ timeout: 60_000 });
  result.sensitivity.clicked = { ...(await sensitivityFacts()), label: hottest.label, scale: await scale(),
    title: await written.locator("#graph-details h3").innerText(),
    line: await written.locator("#graph-details p.int8-error").innerText() };
  step("the written model's graph colours its INT8 nodes by their share of the error; a click details it");
  await page.waitForTimeout(300);
  await shot("quantized-sensitivity");

  // Compare the written model with its original, with the mouse: "Compare with…" in its toolbar, the original
  // picked from the quick pick (offered first: the same folder and name), then the section's numbers, a
  // "Precision changed" row clicked (its node selected in the graph, its details saying what changed), and the
  // badges on the graph. Every text of the section keeps 4.5:1 contrast.
  {
    const button = written.locator("button#compare-with");
    await button.scrollIntoViewIfNeeded();
    const bb = await button.boundingBox();
    await page.mouse.click(bb.x + bb.width / 2, bb.y + bb.height / 2);
    const original = page.locator(".quick-input-list .monaco-list-row", { hasText: /^weak\.onnx/ });
    await original.waitFor({ timeout: 30_000 });
    result.compare = { offered: await page.locator(".quick-input-list .monaco-list-row").allInnerTexts() };
    await original.click();
    const section = written.locator("section#compare");
    await section.locator(".compare-summary").waitFor({ timeout: 120_000 });
    result.compare.direction = await section.locator(".compare-direction").innerText();
    result.compare.summary = await section.locator(".compare-summary").innerText();
    result.compare.kinds = await section.locator("details.compare-kind > summary").allInnerTexts();
    const precision = section.locator("details.compare-kind", { hasText: /^Precision changed/ });
    const summary = precision.locator("summary");
    const sb = await summary.boundingBox();
    await page.mouse.click(sb.x + 20, sb.y + sb.height / 2);
    const row = precision.locator("li.change", { hasText: "INT8" }).first();
    await row.waitFor({ state: "visible", timeout: 30_000 });
    result.compare.row = await row.innerText();
    const link = row.locator("button.change-link");
    const lb = await link.boundingBox();
    await page.mouse.click(lb.x + lb.width / 2, lb.y + lb.height / 2);
    await written.locator("#graph-details p.change-detail").waitFor({ timeout: 60_000 });
    result.compare.details = { title: await written.locator("#graph-details h3").innerText(),
      line: await written.locator("#graph-details p.change-detail").innerText(),
      selected: await written.locator("#graph-layer .item.selected").getAttribute("aria-label") };
    result.compare.badges = await written.locator("#graph-layer .change-badge text").allTextContents();
    result.compare.legend = await written.locator("#graph-compare-legend").isVisible();
    result.compare.readable = await reportContrast(section);
    step("Compare with… the original: the numbers, a row selects its INT8 node, the graph's badges");
    await section.evaluate((s) => s.scrollIntoView());
    await shot("compare-with-original");
  }

  // An accuracy target from the settings, written to the workspace's .vscode/settings.json as a user edits it
  // while VS Code runs (code-server reloads a workspace's settings file live, not the user's):
  // onnxLint.quantize.minCosine, the calibration data and a new output. The outlier model misses the target in
  // INT8 until its most costly node moves to FP16; the report plots each build the search tried.
  // The runtime is set too, as this workspace's earlier answer (TensorRT): the server refuses a settings change
  // whose quantize.target is the setting's default, "" ("quantize option 'target' must be one of ..."), and
  // keeps its previous settings; the command itself sends the accuracy target, so it would still run.
  // The model views close first: they redraw when the settings change, and a redrawn view takes the focus.
  await runCommand("View: Close All Editors", async () => (await page.locator(".tabs-container .tab").count()) === 0);
  await page.evaluate(() => { window.onnxLintToasts.length = 0; });
  fs.mkdirSync(path.join(workspace, ".vscode"), { recursive: true });
  fs.writeFileSync(path.join(workspace, ".vscode", "settings.json"), JSON.stringify({
    "onnxLint.quantize.calibrationData": frontierData,
    "onnxLint.quantize.minCosine": frontierTarget,
    "onnxLint.quantize.output": frontierOutput,
    "onnxLint.quantize.target": "tensorrt",
  }, null, 2));
  // The Settings UI shows the new value once VS Code has read the file (the extension reads the same settings).
  const settingsEditor = page.locator(".settings-editor");
  await runCommand("Preferences: Open Workspace Settings", () => settingsEditor.waitFor({ timeout: 10_000 }).then(() => true));
  const minCosineItem = settingsEditor.locator(".setting-item-contents", { hasText: "Min Cosine" }).first();
  await waitFor(async () => {
    await settingsEditor.locator(".settings-header .suggest-input-container").click();
    await page.keyboard.press("Control+A");
    await page.keyboard.type("onnxLint.quantize.minCosine");
    return minCosineItem.waitFor({ timeout: 10_000 }).then(() => true);
  }, "the Settings UI to find onnxLint.quantize.minCosine", 60_000, 1_000);
  await waitFor(async () => (await minCosineItem.locator("input").first().inputValue()) === String(frontierTarget),
    "the Settings UI to show the accuracy target from the settings file", 60_000);
  result.frontier = { setting: await minCosineItem.innerText() };
  step("the accuracy target written to the settings file shows in the Settings UI");
  await shot("settings-min-cosine");
  // Closed with Escape where it is a modal editor (VS Code 1.13x: the command palette does not open over it, the
  // first Escape clears the search), else as the editor it is.
  const modalEditor = page.locator(".modal-editor-part");
  await waitFor(async () => {
    if (!(await settingsEditor.first().isVisible())) return true;
    if (await modalEditor.first().isVisible()) await page.keyboard.press("Escape");
    else await runCommand("View: Close All Editors");
    return false;
  }, "the Settings UI to close", 60_000, 1_000);
  await page.waitForTimeout(500);
  // Open the outlier model from the explorer and click Quantize in its view with the mouse: nothing is asked
  // (the calibration data, the output and the runtime come from the settings).
  await page.locator(`.explorer-folders-view .monaco-list-row[aria-label^="${path.basename(frontierModel)}"]`).dblclick();
  const frontierView = page.frameLocator("iframe.webview.ready").first().frameLocator("iframe#active-frame");
  await frontierView.locator("table.outputs").waitFor({ timeout: 120_000 });
  result.frontier.opened = await frontierView.locator("h1").innerText();
  const quantizeButton = await frontierView.locator("button#quantize:not([disabled])").boundingBox();
  await page.mouse.click(quantizeButton.x + quantizeButton.width / 2, quantizeButton.y + quantizeButton.height / 2);
  const frontierReport = frontierView.locator("section.quantize-report");
  const asked = page.locator(".quick-input-widget .quick-input-title");
  const ended = await waitFor(async () => ((await frontierReport.count()) > 0 && "report")
    || ((await asked.isVisible()) && `asked: ${await asked.innerText()}`), "the quantize report with the frontier", 240_000);
  if (ended !== "report") throw new Error(`quantize asked instead of using the settings (${ended})`);
  const frontierSection = frontierReport.locator("section.quantize-frontier");
  result.frontier.report = {
    ...(await reportFacts(frontierReport)),
    sensitivityRows: await frontierReport.locator("table.sensitivity tbody tr").allInnerTexts(),
    heading: await frontierSection.locator("h3").innerText(),
    plots: await frontierReport.locator("svg.frontier").count(),
    plotTitle: await frontierSection.locator("svg.frontier > title").textContent(),
    points: await frontierSection.locator("svg.frontier circle").evaluateAll((circles) => circles.map((c) => ({
      met: c.getAttribute("class"), label: c.querySelector("title")?.textContent ?? "",
      fill: getComputedStyle(c).fill }))),
    plotWidth: (await frontierSection.locator("svg.frontier").boundingBox())?.width ?? 0,
    caption: await frontierSection.locator("figcaption").innerText(),
  };
  // The same builds as a table, behind a disclosure the mouse opens.
  await frontierSection.locator("details > summary").scrollIntoViewIfNeeded();
  const disclosure = await frontierSection.locator("details > summary").boundingBox();
  await page.mouse.click(disclosure.x + 20, disclosure.y + disclosure.height / 2);
  await frontierSection.locator("table.frontier-points").waitFor({ state: "visible", timeout: 30_000 });
  result.frontier.report.tableHeaders = await frontierSection.locator("table.frontier-points th").allInnerTexts();
  result.frontier.report.tableRows = await frontierSection.locator("table.frontier-points tbody tr").allInnerTexts();
  // The written model opens beside, in its own view.
  const frontierTab = page.locator(`.tabs-container .tab[aria-label^="${path.basename(frontierOutput)}"]`);
  await frontierTab.waitFor({ timeout: 60_000 });
  const frontierWritten = page.frameLocator("iframe.webview.ready").nth(1).frameLocator("iframe#active-frame");
  await frontierWritten.locator("table.outputs").waitFor({ timeout: 120_000 });
  await frontierWritten.locator("p.clean, ul.diagnostics li").first().waitFor({ timeout: 120_000 });
  await frontierWritten.locator("#graph-layer .item.int8").first().waitFor({ state: "attached", timeout: 120_000 });
  result.frontier.written = {
    opened: await frontierWritten.locator("h1").innerText(),
    identity: await frontierWritten.locator("dl.identity").innerText(),
    int8: await frontierWritten.locator("#graph-layer .item.int8").evaluateAll((items) =>
      items.map((g) => g.getAttribute("aria-label"))),
  };
  result.frontier.enabledAfter = await frontierView.locator("button#quantize").isEnabled();
  result.frontier.notifications = (await page.evaluate(() => window.onnxLintToasts)).map((t) => JSON.parse(t));
  step("quantize with the accuracy target from the settings plots the frontier and opens the written model");
  // The screenshots give the report room: no secondary side bar (4.13x opens its chat there), no toasts.
  const auxiliaryBar = page.locator(".part.auxiliarybar");
  if (await auxiliaryBar.isVisible()) {
    await page.keyboard.press("Control+Alt+B");
    await auxiliaryBar.waitFor({ state: "hidden", timeout: 10_000 }).catch(() => undefined);
  }
  await runCommand("Notifications: Clear All Notifications");
  // The verdict at the top of the report: the target met once one node moved to FP16 ...
  await frontierReport.evaluate((section) => section.scrollIntoView());
  await page.waitForTimeout(300);
  await shot("quantize-frontier-verdict");
  // ... the sensitivity table (the node that costs the most first) above the plot of the builds tried ...
  await frontierReport.locator("section.sensitivity").evaluate((section) => section.scrollIntoView());
  await page.waitForTimeout(500);
  await shot("quantize-frontier");
  // ... and the plot above its table.
  await frontierSection.evaluate((section) => section.scrollIntoView());
  await page.waitForTimeout(300);
  await shot("quantize-frontier-table");

  // -- "onnx-lint: Restart server" while a model view lints -------------------------------------------------------
  // The 100,000-node chain, never opened before, opened from Quick Open, and at once (its lint takes seconds, its view
  // shows nothing yet) the palette runs "onnx-lint: Restart server". The view comes back with its findings and its
  // graph, the Problems panel and the status bar list them, and one onnx-lint server runs: a new one, the old gone.
  const restartModel = JSON.parse(process.env.BIG_MODELS || "[]").find((big) => big.file === "chain-100k.onnx");
  if (restartModel) {
    await runCommand("View: Close All Editors", async () => (await page.locator(".tabs-container .tab").count()) === 0);
    const before = await waitFor(async () => { const found = onnxLintServers(); return found.length === 1 && found; },
      "one onnx-lint server before the restart", 60_000);
    const statusProblems = page.locator(".part.statusbar [id='status.problems']");
    // What the window shows of the model: its view's findings (none until its first lint answers), the status bar.
    const shown = async () => {
      const rows = [];
      for (const frame of page.frames()) {
        rows.push(...await frame.locator("ul.diagnostics > li").allInnerTexts().catch(() => []));
      }
      return { findings: rows.length, statusBar: (await statusProblems.innerText()).replace(/\s+/g, " ").trim() };
    };
    const opened = Date.now();
    await quickOpen(restartModel.file);
    const restartView = page.frameLocator("iframe.webview.ready").first().frameLocator("iframe#active-frame");
    await page.keyboard.press("F1");
    await page.locator(".quick-input-widget input").fill(">onnx-lint: Restart server");
    const restartRow = page.locator(".quick-input-list .monaco-list-row", { hasText: /^onnx-lint: Restart server/ })
      .first();
    await restartRow.waitFor({ timeout: 10_000 });
    const atRestart = { ...(await shown()), afterOpenMs: Date.now() - opened };
    await restartRow.click();
    const clickedAt = Date.now();
    await restartView.locator("ul.diagnostics li.group").first().waitFor({ timeout: 180_000 });
    await restartView.locator("#graph-viewport[data-first-paint-ms]").waitFor({ state: "attached", timeout: 180_000 });
    await waitFor(async () => !(await restartView.locator("p.busy, p.failure").count()), "the view to settle", 60_000);
    const after = await waitFor(async () => {
      const found = onnxLintServers();
      return found.length === 1 && found[0] !== before[0] && found;
    }, "one onnx-lint server, a new one, after the restart", 60_000);
    const restartMarkers = page.locator(".markers-panel .monaco-list-row");
    await waitFor(async () => {
      if (!(await page.locator(".markers-panel").isVisible())) {
        await page.locator(".part.sidebar").click({ position: { x: 150, y: 400 } });
        await page.keyboard.press("Control+Shift+M");
      }
      return /chain-100k\.onnx[\s\S]*OL005/.test((await restartMarkers.allInnerTexts()).join("\n"));
    }, "the chain's entries in the Problems panel after the restart", 60_000, 1_000);
    result.restart = {
      atRestart, seconds: (Date.now() - clickedAt) / 1000, serversBefore: before.length, serversAfter: after.length,
      newServer: after[0] !== before[0], after: await shown(),
      problems: await restartView.locator("ul.diagnostics > li:not([hidden])").allInnerTexts(),
      status: await restartView.locator("#graph-status").innerText(),
      drawn: await restartView.locator("#graph-layer .item").count(),
      panel: (await restartMarkers.allInnerTexts()).slice(0, 4),
    };
    await shot("restart-server");
    await page.keyboard.press("Control+J");
    step("Restart server while a model lints: the view comes back with its findings and graph, one new server runs");
  }

  // Bigger models: each opens to its whole graph, and search finds a node in it.
  result.big = [];
  for (const big of JSON.parse(process.env.BIG_MODELS || "[]")) {
    await page.keyboard.press("F1");
    await page.locator(".quick-input-widget input").fill(">View: Close All Editors");
    await page.locator(".quick-input-list .monaco-list-row", { hasText: /^View: Close All Editors/ }).first().click();
    await page.waitForTimeout(1000);
    const started = Date.now();
    await page.locator(`.explorer-folders-view .monaco-list-row[aria-label^="${big.file}"]`).dblclick();
    const bigView = page.frameLocator("iframe.webview.ready").first().frameLocator("iframe#active-frame");
    await bigView.locator("#graph-viewport[data-first-paint-ms]").waitFor({ state: "attached", timeout: 240_000 });
    const opened = Date.now() - started;
    const facts = () => bigView.locator("body").evaluate(() => ({
      status: document.getElementById("graph-status")?.textContent ?? "",
      drawn: document.querySelectorAll("#graph-layer .item").length,
      selected: document.querySelector("#graph-layer .item.selected")?.getAttribute("aria-label") ?? "",
      firstPaintMs: Number(document.getElementById("graph-viewport")?.dataset.firstPaintMs ?? -1),
    }));
    const first = await facts();
    await bigView.locator("#whole-graph").evaluate((section) => section.scrollIntoView());
    await shot(`whole-graph-${big.file.replace(/\.onnx$/, "")}`);
    await bigView.locator("#graph-search").fill(big.search);
    await bigView.locator("#graph-hits [data-graph='hit']").first().waitFor({ timeout: 60_000 });
    await bigView.locator("#graph-search").press("Enter");
    // The match selected (on open the first finding's node already is: wait for the match itself).
    await waitFor(async () => (await facts()).selected.includes(big.search), "the search's match to be selected", 120_000);
    const entry = { file: big.file, openedMs: opened, first, searched: await facts() };
    result.big.push(entry);
    await page.waitForTimeout(300);
    await shot(`whole-graph-${big.file.replace(/\.onnx$/, "")}-search`);
    if (big.weightFinding) {
      // A finding on a weight: "Show in graph" selects its node (or the one reading it), the weight marked.
      await bigView.locator("ul.diagnostics li", { hasText: big.weightFinding }).first()
        .locator("button.show-graph").click();
      await bigView.locator("#graph-details tr.marked").first().waitFor({ timeout: 60_000 });
      entry.weight = { ...(await facts()),
        announced: await bigView.locator("#graph-announce").textContent(),
        marked: await bigView.locator("#graph-details tr.marked").first().innerText() };
      await shot(`whole-graph-${big.file.replace(/\.onnx$/, "")}-weight`);
    }
    if (big.weightFinding) {
      // -- Constants' values and edge shapes, with the mouse ------------------------------------------------
      // The node "Show in graph" selected (the Constant holding the flagged weight): a click on empty space
      // clears the selection, a click on the node selects it again and its details show its values, the largest
      // value FP16 cannot hold, and "Show all" (a click) the rest. Then the wheel zooms in on it until the edges
      // say their shapes; its own output edge's label is read back.
      const constantId = await bigView.locator("#graph-layer .item.selected").getAttribute("data-id");
      const constantNode = bigView.locator(`#graph-layer .item[data-id="${constantId}"]`);
      const area = await bigView.locator("#graph-svg").boundingBox();
      const blank = await bigView.locator("body").evaluate(() => {  // a point of the drawing with nothing on it
        const svg = document.getElementById("graph-svg").getBoundingClientRect();
        for (let y = 6; y < svg.height - 6; y += 12) {
          for (let x = 6; x < svg.width - 6; x += 12) {
            const hit = document.elementFromPoint(svg.left + x, svg.top + y);
            if (hit?.closest("#graph-svg") && !hit.closest(".item")) return { x, y };
          }
        }
        return { x: 6, y: 6 };
      });
      await page.mouse.click(area.x + blank.x, area.y + blank.y);
      await waitFor(async () => (await facts()).selected === "", "a click on empty space to clear the selection", 30_000);
      const box = await constantNode.boundingBox();
      await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
      const values = bigView.locator("#graph-details .tensor-values").first();
      await values.waitFor({ timeout: 60_000 });
      const constant = { ...(await facts()),
        title: await bigView.locator("#graph-details h3").innerText(),
        preview: await values.locator(".values-preview").innerText(),
        summary: await values.locator(".values-summary").innerText(),
        fp16: (await values.locator(".values-fp16").count()) ? await values.locator(".values-fp16").innerText() : "",
        fp16Colour: (await values.locator(".values-fp16").count())
          ? await values.locator(".values-fp16").evaluate((p) => getComputedStyle(p).color) : "",
        plainColour: await values.locator(".values-summary").evaluate((p) => getComputedStyle(p).color) };
      const showAll = values.locator("details.all-values > summary");
      if (await showAll.count()) {
        await showAll.scrollIntoViewIfNeeded();
        const sb = await showAll.boundingBox();
        await page.mouse.click(sb.x + 20, sb.y + sb.height / 2);
        await values.locator("details.all-values[open] code").waitFor({ state: "visible", timeout: 30_000 });
        constant.all = await values.locator("details.all-values code").innerText();
      }
      await shot(`whole-graph-${big.file.replace(/\.onnx$/, "")}-constant-values`);
      // Zoomed out, no edge label; the wheel over the node zooms in (the point under the pointer stays put).
      const scale = async () => Number(/scale\(([\d.]+)\)/.exec(await bigView.locator("#graph-layer").getAttribute("transform"))?.[1] ?? 1);
      const labelsShown = () => bigView.locator("#graph-layer g.edge-shapes").evaluate((g) => getComputedStyle(g).display !== "none");
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      for (let i = 0; i < 30 && (await scale()) > 0.5; i++) {
        await page.mouse.wheel(0, 120);
        await page.waitForTimeout(40);
      }
      constant.zoomedOut = { scale: await scale(), labels: await labelsShown() };
      const nb = await constantNode.boundingBox();
      await page.mouse.move(nb.x + nb.width / 2, nb.y + nb.height / 2);
      for (let i = 0; i < 30 && (await scale()) < 1.2; i++) {
        await page.mouse.wheel(0, -120);
        await page.waitForTimeout(40);
      }
      const tensor = big.weightTensor;
      constant.zoomedIn = { scale: await scale(), labels: await labelsShown(),
        ...(await bigView.locator("body").evaluate((body, name) => {
          const area = document.getElementById("graph-svg").getBoundingClientRect();
          const label = [...document.querySelectorAll("#graph-layer text.edge-shape")]
            .find((t) => t.getAttribute("data-tensor") === name);
          const r = label?.getBoundingClientRect();
          const visible = [...document.querySelectorAll("#graph-layer text.edge-shape")].filter((t) => {
            const b = t.getBoundingClientRect();
            return b.width > 0 && b.left >= area.left && b.right <= area.right && b.top >= area.top && b.bottom <= area.bottom;
          });
          return { label: label?.textContent ?? "", labelInView: !!r && r.width > 0 && r.left >= area.left &&
            r.right <= area.right && r.top >= area.top && r.bottom <= area.bottom,
            visibleLabels: visible.slice(0, 8).map((t) => t.textContent) };
        }, tensor)) };
      entry.constant = constant;
      await shot(`whole-graph-${big.file.replace(/\.onnx$/, "")}-edge-shapes`);
    }
    step(`the whole graph of ${big.file}: opened, searched`);
  }
  // -- Layout, selection and navigation on the 100,000-node chain ---------------------------------------------
  // Its 201 findings (200 stale value_info entries of one shape, and the stale output) are a few rows, and the graph
  // still fills the editor below them; "Show all" (a click) lists the 200 and the graph stays in view; search for
  // Relu says that it lists 50 of the 25,000 matches; a double-click on a group expands it and selects no text.
  const chainModel = JSON.parse(process.env.BIG_MODELS || "[]").find((big) => big.file === "chain-100k.onnx");
  if (chainModel) {
    await page.keyboard.press("F1");
    await page.locator(".quick-input-widget input").fill(">View: Close All Editors");
    await page.locator(".quick-input-list .monaco-list-row", { hasText: /^View: Close All Editors/ }).first().click();
    await page.waitForTimeout(1000);
    const chainPanel = page.locator(".part.panel.bottom");
    if (await chainPanel.isVisible()) {
      await page.keyboard.press("Control+J");
      await chainPanel.waitFor({ state: "hidden", timeout: 10_000 }).catch(() => undefined);
    }
    await page.locator(`.explorer-folders-view .monaco-list-row[aria-label^="${chainModel.file}"]`).dblclick();
    const chainView = page.frameLocator("iframe.webview.ready").first().frameLocator("iframe#active-frame");
    await chainView.locator("#graph-viewport[data-first-paint-ms]").waitFor({ state: "attached", timeout: 240_000 });
    await chainView.locator("ul.diagnostics li.group").first().waitFor({ timeout: 120_000 });
    const chainFacts = () => chainView.locator("body").evaluate(() => {
      const box = (element) => {
        const r = element?.getBoundingClientRect();
        return r ? { x: r.x, y: r.y, width: r.width, height: r.height, right: r.right, bottom: r.bottom } : null;
      };
      return {
        innerHeight: window.innerHeight,
        body: box(document.getElementById("graph-body")),
        rows: [...document.querySelectorAll("ul.diagnostics > li:not([hidden])")].map((li) => li.innerText.replace(/\s+/g, " ")),
        members: document.querySelectorAll("ul.diagnostics > li.member:not([hidden])").length,
        selected: document.querySelector("#graph-layer .item.selected")?.getAttribute("aria-label") ?? "",
        items: document.querySelectorAll("#graph-layer .item").length,
        clusters: [...document.querySelectorAll("#graph-layer .cluster")].map((c) => c.getAttribute("data-id")),
        count: document.getElementById("graph-search-count")?.textContent ?? "",
        hits: document.querySelectorAll("#graph-hits [data-graph='hit']").length,
        more: document.querySelector("#graph-hits li.more")?.textContent ?? "",
        textSelected: String(window.getSelection()),
      };
    });
    await chainView.locator("body").evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(500);
    const chain = { opened: await chainFacts() };
    result.layout.chain = chain;
    await shot("layout-chain-100k-grouped");
    const groupRow = chain.opened.rows.find((row) => row.includes("OL005 × 200"));
    if (chain.opened.rows.length > 4 || !groupRow || !/Show all 200/.test(groupRow) ||
        !(chain.opened.body.bottom <= chain.opened.innerHeight && chain.opened.body.height >= 0.45 * chain.opened.innerHeight)) {
      throw new Error(`the 201 findings are not a few rows above a graph that fills the editor: ${JSON.stringify(chain.opened)}`);
    }
    if (!chain.opened.selected.includes("error")) {
      throw new Error(`on open, the first finding's node is not selected: ${JSON.stringify(chain.opened.selected)}`);
    }
    const showAll = await chainView.locator("ul.diagnostics li.group button.show-all").boundingBox();
    await page.mouse.click(showAll.x + showAll.width / 2, showAll.y + showAll.height / 2);
    await waitFor(async () => (await chainFacts()).members === 200, "show all to list the 200 findings", 10_000);
    chain.shownAll = await chainFacts();
    if (!(chain.shownAll.body.bottom <= chain.shownAll.innerHeight && chain.shownAll.body.y > 0)) {
      throw new Error(`with the 200 findings listed the graph left the editor: ${JSON.stringify(chain.shownAll.body)}`);
    }
    await shot("layout-chain-100k-show-all");
    const fewer = await chainView.locator("ul.diagnostics li.group button.show-all").boundingBox();
    await page.mouse.click(fewer.x + fewer.width / 2, fewer.y + fewer.height / 2);
    await waitFor(async () => (await chainFacts()).members === 0, "show fewer to fold the 200 findings", 10_000);
    // Search: Relu is one node in four, 25,000 of them; the list says it shows 50.
    await chainView.locator("#graph-search").fill("Relu");
    await waitFor(async () => (await chainFacts()).count.includes(" of "), "the search to report its cap", 30_000);
    chain.searched = await chainFacts();
    await shot("layout-chain-100k-search-cap");
    if (chain.searched.count !== "50 of 25,000 matches shown" || chain.searched.hits !== 50 ||
        !chain.searched.more.startsWith("50 of 25,000 matches shown")) {
      throw new Error(`search does not say where it stops: ${JSON.stringify(chain.searched)}`);
    }
    await chainView.locator("#graph-search").fill("");
    // A double-click on a group, with the mouse: it expands (its frame is drawn around its members), no text selected.
    const collapse = await chainView.locator("button[data-graph='collapse']").boundingBox();
    await page.mouse.click(collapse.x + collapse.width / 2, collapse.y + collapse.height / 2);
    await page.waitForTimeout(1500);
    const blockId = await chainView.locator("body").evaluate(() => {
      const area = document.getElementById("graph-svg").getBoundingClientRect();
      for (const g of document.querySelectorAll("#graph-layer .item.block")) {
        const r = g.getBoundingClientRect();
        if (r.left > area.left + 10 && r.right < area.right - 10 && r.top > area.top + 10 && r.bottom < area.bottom - 10) {
          return g.getAttribute("data-id");
        }
      }
      return null;
    });
    if (!blockId) throw new Error("no group lies wholly inside the drawing");
    const block = await chainView.locator(`#graph-layer .item[data-id="${blockId}"]`).boundingBox();
    chain.beforeDoubleClick = await chainFacts();
    await page.mouse.dblclick(block.x + block.width / 2, block.y + block.height / 2);
    await waitFor(async () => (await chainFacts()).clusters.includes(blockId), "a double-click to expand the group", 60_000);
    chain.doubleClicked = { ...(await chainFacts()), block: blockId };
    await shot("layout-chain-100k-group-expanded");
    if (chain.doubleClicked.textSelected !== "" || !(chain.doubleClicked.items > chain.beforeDoubleClick.items)) {
      throw new Error(`a double-click did not expand the group cleanly: ${JSON.stringify(chain.doubleClicked)}`);
    }
    step("the 100,000-node chain: 201 findings in a few rows above the graph, search says its cap, a double-click expands a group");
  }

  // -- The model view with the mouse: every model, in every theme, at both sizes ------------------------------------
  // MATRIX_MODELS: [{file (in the workspace), name, expand: [label patterns]}]. Each model is opened once (Quick Open),
  // all in one editor group. Then at 1400x900 and in a 350 px column, in Light Modern, Dark Modern, Dark High Contrast
  // and Light High Contrast, each model's tab is clicked and its view used with the mouse: where it has groups,
  // "Collapse all", then a double-click on the largest group whose label matches each pattern in turn, then on the
  // group it opened to while that is a group; a click on a node in view, whose details must name it; the contrast of
  // every visible text; a screenshot.
  const matrixModels = JSON.parse(process.env.MATRIX_MODELS || "[]");
  if (matrixModels.length) {
    const matrixStarted = Date.now();
    await runCommand("View: Close All Editors", async () => (await page.locator(".tabs-container .tab").count()) === 0);
    if (await page.locator(".part.panel.bottom").isVisible()) await page.keyboard.press("Control+J");
    if (await page.locator(".part.auxiliarybar").isVisible()) await page.keyboard.press("Control+Alt+B");
    await runCommand("Notifications: Clear All Notifications");
    const shownFrame = () => page.locator("iframe.webview.ready:visible").first();
    const shownView = () => page.frameLocator("iframe.webview.ready:visible").first()
      .frameLocator("iframe#active-frame");
    // The view in front, once it is the model's (its title is the file's name) and it has drawn its graph.
    const front = async (file) => {
      const frame = shownView();
      await waitFor(async () => (await frame.locator("h1").innerText({ timeout: 2_000 })) === path.basename(file),
        `the view of ${file} in front`, 60_000);
      await frame.locator("#graph-viewport[data-first-paint-ms]").waitFor({ state: "attached", timeout: 240_000 });
      await frame.locator("p.clean, ul.diagnostics li").first().waitFor({ timeout: 240_000 });
      await frame.locator("#graph-busy").waitFor({ state: "hidden", timeout: 60_000 });
      return frame;
    };
    for (const model of matrixModels) {
      await quickOpen(model.file);
      await front(model.file);
    }
    step(`opened ${matrixModels.map((m) => m.file).join(", ")} side by side in tabs`);
    // What the drawing shows, in the view's page: its area, its items (each with the point to click: the middle of its
    // part in view), the frames of the expanded groups.
    const drawing = (frame) => frame.locator("body").evaluate(() => {
      const box = (e) => {
        const r = e.getBoundingClientRect();
        return { x: r.left, y: r.top, right: r.right, bottom: r.bottom };
      };
      const area = box(document.getElementById("graph-svg"));
      const items = [...document.querySelectorAll("#graph-layer .item")].map((g) => {
        const r = box(g);
        const shown = { x: Math.max(r.x, area.x + 4), y: Math.max(r.y, area.y + 4),
          right: Math.min(r.right, area.right - 4), bottom: Math.min(r.bottom, area.bottom - 4) };
        return { id: g.getAttribute("data-id"), kind: ["block", "node"].find((k) => g.classList.contains(k)) ?? "other",
          label: g.getAttribute("aria-label") ?? "", title: g.querySelector("text")?.textContent ?? "", rect: r,
          selected: g.classList.contains("selected"),
          size: Number((/, ([\d,]+) nodes?\b/.exec(g.getAttribute("aria-label") ?? "")?.[1] ?? "0").replace(/,/g, "")),
          point: shown.right - shown.x > 12 && shown.bottom - shown.y > 8
            ? { x: (shown.x + shown.right) / 2, y: (shown.y + shown.bottom) / 2 } : null };
      });
      return { area, items, width: window.innerWidth, height: window.innerHeight,
        textSelected: String(window.getSelection()),
        clusters: [...document.querySelectorAll("#graph-layer .cluster")].map((c) => ({ id: c.getAttribute("data-id"),
          label: c.querySelector(".cluster-label")?.textContent ?? "", rect: box(c.querySelector("rect")) })) };
    });
    const within = (inner, outer) => inner.x >= outer.x - 1 && inner.right <= outer.right + 1 &&
      inner.y >= outer.y - 1 && inner.bottom <= outer.bottom + 1;
    const viewOrigin = () => page.frameLocator("iframe.webview.ready:visible").first().locator("iframe#active-frame")
      .boundingBox();
    const settle = async (frame) => {
      await page.waitForTimeout(150);
      await frame.locator("#graph-busy").waitFor({ state: "hidden", timeout: 60_000 });
    };
    // An item brought into the drawing's view as a user does: dragging the drawing (pressed on it, released anywhere in
    // the view).
    const intoView = async (frame, id) => {
      for (let i = 0; i < 12; i++) {
        const { area, items, width, height } = await drawing(frame);
        const r = items.find((item) => item.id === id)?.rect;
        if (!r) throw new Error(`${id} is not drawn`);
        const fits = r.right - r.x < area.right - area.x - 16 && r.bottom - r.y < area.bottom - area.y - 16;
        const centre = { x: (r.x + r.right) / 2, y: (r.y + r.bottom) / 2 };
        const middle = { x: (area.x + area.right) / 2, y: (area.y + area.bottom) / 2 };
        if (fits ? within(r, { x: area.x + 8, y: area.y + 8, right: area.right - 8, bottom: area.bottom - 8 })
          : Math.abs(centre.x - middle.x) < 20 && Math.abs(centre.y - middle.y) < 20) return;
        // From the drawing's edge on the side it moves from, as far as the view reaches.
        const from = { x: middle.x > centre.x ? area.x + 6 : area.right - 6,
          y: middle.y > centre.y ? area.y + 6 : area.bottom - 6 };
        const to = { x: Math.max(4, Math.min(width - 4, from.x + middle.x - centre.x)),
          y: Math.max(4, Math.min(height - 4, from.y + middle.y - centre.y)) };
        const origin = await viewOrigin();
        await page.mouse.move(origin.x + from.x, origin.y + from.y);
        await page.mouse.down();
        await page.mouse.move(origin.x + to.x, origin.y + to.y, { steps: 8 });
        await page.mouse.up();
      }
      throw new Error(`dragging the drawing never brought ${id} into view`);
    };
    const clickAt = async (frame, id, double) => {
      await intoView(frame, id);
      const point = (await drawing(frame)).items.find((item) => item.id === id).point;
      const origin = await viewOrigin();
      await page.mouse[double ? "dblclick" : "click"](origin.x + point.x, origin.y + point.y);
    };
    // One model, as the user sees it in one theme and at one size; `photograph`: a screenshot's name for the drawing
    // once the groups the model names (`expand`) are open.
    const useWithMouse = async (model, frame, photograph) => {
      const seen = { expanded: [] };
      let opened;  // the group the last double-click expanded
      if ((await drawing(frame)).items.some((i) => i.kind === "block")) {
        const collapse = await frame.locator("button[data-graph='collapse']").boundingBox();
        await page.mouse.click(collapse.x + collapse.width / 2, collapse.y + collapse.height / 2);
        await settle(frame);
        const patterns = [...(model.expand ?? [])];
        for (let depth = 0; depth < 8; depth++) {
          const now = await drawing(frame);
          const frameOf = opened && now.clusters.find((c) => c.id === opened);
          const inside = (item) => !frameOf || within(item.rect, frameOf.rect);
          const pattern = patterns.shift();
          let group;
          if (pattern !== undefined) {
            group = now.items.filter((i) => i.kind === "block" && new RegExp(pattern).test(i.title))
              .sort((a, b) => b.size - a.size)[0];
            if (!group) {
              const titles = JSON.stringify(now.items.map((i) => i.title));
              throw new Error(`${model.name}: no group labelled ${pattern}: ${titles}`);
            }
          } else {
            if (now.items.some((i) => i.kind === "node" && inside(i))) break;  // the nodes are drawn
            const blocks = now.items.filter((i) => i.kind === "block" && inside(i));
            group = blocks.find((i) => i.selected) ?? blocks.sort((a, b) => b.size - a.size)[0];
            if (!group) break;
          }
          await clickAt(frame, group.id, true);
          await waitFor(async () => (await drawing(frame)).clusters.some((c) => c.id === group.id),
            `a double-click to expand ${group.title}`, 60_000);
          await settle(frame);
          opened = group.id;
          const after = await drawing(frame);
          const cluster = after.clusters.find((c) => c.id === group.id);
          seen.expanded.push({ title: group.title, label: group.label, frame: cluster.label, before: now.items.length,
            after: after.items.length, textSelected: after.textSelected,
            inside: after.items.filter((i) => within(i.rect, cluster.rect)).map((i) => i.title) });
          if (pattern !== undefined && !patterns.length && photograph) await shot(photograph);
        }
      }
      const now = await drawing(frame);
      const frameOf = opened && now.clusters.find((c) => c.id === opened);
      // A node with a name to read in its details (an exporter's Constants have none), in the group opened, else in
      // view.
      const nodes = now.items.filter((i) => i.kind === "node");
      const pick = (list) => list.find((i) => /^\S+ node [^,]/.test(i.label) && !i.label.startsWith("Constant "))
        ?? list[0];
      const node = pick(nodes.filter((i) => frameOf && within(i.rect, frameOf.rect) && !i.selected)) ??
        pick(nodes.filter((i) => i.point && !i.selected)) ?? nodes[0];
      if (!node) {
        throw new Error(`${model.name}: no node drawn to click: ${JSON.stringify(now.items.map((i) => i.label))}`);
      }
      await clickAt(frame, node.id, false);
      await waitFor(async () => (await drawing(frame)).items.find((i) => i.id === node.id)?.selected,
        `a click to select ${node.label}`, 30_000);
      await frame.locator("#graph-details h3 code").first().waitFor({ timeout: 60_000 });
      seen.clicked = { label: node.label, details: await frame.locator("#graph-details h3").innerText(),
        announced: await frame.locator("#graph-announce").textContent() };
      return seen;
    };
    const themes = [["light", "Light Modern", "body.vscode-light"],
      ["dark", "Dark Modern", "body.vscode-dark:not(.vscode-high-contrast)"],
      ["high-contrast", "Dark High Contrast", "body.vscode-high-contrast:not(.vscode-high-contrast-light)"],
      ["high-contrast-light", "Light High Contrast", "body.vscode-high-contrast-light"]];
    result.matrix = { combinations: [] };
    for (const size of ["1400x900", "350px"]) {
      if (size === "350px") {
        // The window narrowed until the editor, and so the view, is a 350 px column.
        let width = 1400;
        for (let i = 0; i < 4 && Math.abs((await shownFrame().boundingBox()).width - 350) > 4; i++) {
          width -= Math.round((await shownFrame().boundingBox()).width - 350);
          await page.setViewportSize({ width, height: 900 });
          await page.waitForTimeout(800);
        }
      } else {
        await page.setViewportSize({ width: 1400, height: 900 });
      }
      for (const [theme, name, body] of themes) {
        if (!(await shownView().locator(body).count())) await pickTheme(name);
        for (const model of matrixModels) {
          const started = Date.now();
          const tab = page.locator(`.tabs-container .tab[aria-label^="${path.basename(model.file)}"]`).first();
          await tab.click();
          const frame = await front(model.file);
          await frame.locator(body).waitFor({ timeout: 60_000 });
          await frame.locator("body").evaluate(() => window.scrollTo(0, 0));
          const opened = theme === "light" && size === "1400x900" && `matrix-${model.name}-opened`;
          const seen = await useWithMouse(model, frame, opened);
          await frame.locator("body").evaluate(() => window.scrollTo(0, 0));
          const contrast = await frame.locator("body").evaluate(auditContrast);
          const frameBox = await shownFrame().boundingBox();
          await shot(`matrix-${model.name}-${theme}-${size}`);
          result.matrix.combinations.push({ model: model.name, theme, size, ...seen, frameWidth: frameBox.width,
            viewport: page.viewportSize(), contrast: { checked: contrast.checked, failures: contrast.failures },
            ms: Date.now() - started });
        }
      }
    }
    await page.setViewportSize({ width: 1400, height: 900 });
    result.matrix.seconds = (Date.now() - matrixStarted) / 1000;
    step(`the model view with the mouse: ${result.matrix.combinations.length} models × themes × sizes`);
  }
  result.ok = true;
} catch (error) {
  result.error = String(error?.stack || error);
  if (page) await shot("failure").catch(() => undefined);
} finally {
  result.serverLog = serverLog.slice(-4000);
  fs.writeFileSync(resultPath, JSON.stringify(result, null, 2));
  if (browser) await browser.close();
  server.kill("SIGTERM");
  fs.rmSync(home, { recursive: true, force: true });
}
process.exit(result.ok ? 0 : 1);
