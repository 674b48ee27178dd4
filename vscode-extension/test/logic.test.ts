// Unit tests of the extension's own logic (the parts that need no VS Code): `npm test`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { withoutShownMessages } from "../src/hoverText";
import { chooseInterpreter, installAdvice, installCommand, serverArguments } from "../src/interpreter";
import { serverSettings } from "../src/settings";
import { renderView, toViewDiagnostics, ViewState } from "../src/viewHtml";

function config(values: Record<string, unknown>) {
  return { get: <T>(key: string) => values[key] as T | undefined };
}

test("the interpreter setting wins, then the Python extension, then python3", () => {
  assert.deepEqual(chooseInterpreter(" /opt/venv/bin/python ", "/usr/bin/python3.12"),
    { command: "/opt/venv/bin/python", source: "setting onnxLint.interpreter" });
  assert.deepEqual(chooseInterpreter("", "/usr/bin/python3.12"), { command: "/usr/bin/python3.12", source: "Python extension" });
  assert.deepEqual(chooseInterpreter(undefined, undefined), { command: "python3", source: "default" });
});

test("the server is started as a module of that interpreter with the extra arguments", () => {
  assert.deepEqual(serverArguments(["--log-level", "debug"]), ["-m", "onnx_lint", "server", "--log-level", "debug"]);
});

test("the install command names the interpreter exactly, quoted when it must be", () => {
  assert.equal(installCommand("python3"), "python3 -m pip install 'onnx-lint[server,runtime]'");
  assert.equal(installCommand("/home/me/my envs/bin/python"), "\"/home/me/my envs/bin/python\" -m pip install 'onnx-lint[server,runtime]'");
});

test("a system Python gets venv or pipx advice (PEP 668 refuses pip there); a virtual environment gets pip", () => {
  const system = installAdvice("/usr/bin/python3");
  assert.match(system.message, /virtual environment/);
  assert.match(system.message, /pipx install 'onnx-lint\[server,runtime\]'/);
  assert.equal(system.command, "python3 -m venv .venv && .venv/bin/python -m pip install 'onnx-lint[server,runtime]'");
  assert.doesNotMatch(installAdvice("python3").message, /^Install it there/);
  for (const venv of ["/home/me/proj/.venv/bin/python", "/home/me/.local/share/pipx/venvs/onnx-lint/bin/python",
    "/opt/conda/envs/ml/bin/python", "C:\\proj\\venv\\Scripts\\python.exe"]) {
    assert.equal(installAdvice(venv).command, installCommand(venv), venv);
  }
});

test("server settings leave unset selectors to the configuration file and keep quantize defaults", () => {
  const settings = serverSettings(config({
    select: [], extendSelect: null, ignore: ["OL005"], lintOnChange: false, runtimeProbe: false, lintTimeout: 60, "quantize.calibrationData": "/data/calib.npz",
    "quantize.output": "", "quantize.perChannel": true, "quantize.minCosine": 0.995,
  }));
  assert.deepEqual(settings, { ignore: ["OL005"], lintOnChange: false, runtimeProbe: false, lintTimeout: 60,
    quantize: { calibrationData: "/data/calib.npz", perChannel: true, minCosine: 0.995 } });
  // No accuracy target (the setting's default, null) sends none.
  assert.deepEqual(serverSettings(config({ "quantize.minCosine": null })).quantize, {});
});

const diagnostics = toViewDiagnostics([
  { code: "OL001", message: "graph/output[0] 'Y': declared <scalar>", severity: 1, data: {
    fixable: true, key: ["OL001", "graph/output[0]", "Y"], location: { path: "graph/output[0]", tensor: "Y" },
    engine: "onnxruntime-symbolic" } },
  { code: "OL007", message: "underivable", severity: 3 },
  { code: "OL000", message: "cannot be read", severity: 1, data: { location: { path: "model" } } },
]);

const resources = { cspSource: "vscode-resource:", script: "vscode-resource:/out/webview/main.js", style: "vscode-resource:/media/view.css" };

const state: ViewState = {
  file: "weak.onnx", trusted: true, diagnostics,
  summary: {
    producer: "tf2onnx", producerVersion: "1.16", irVersion: 8, graph: "main", nodes: 4,
    opsets: [{ domain: "ai.onnx", version: 17 }],
    inputs: [{ name: "X", declared: "float[batch, 16]" }],
    outputs: [{ name: "Y", declared: "float", derived: "float[batch, 8]", engine: "onnx" }],
  },
};

test("diagnostics from the server keep severity, fixability and the fix key", () => {
  assert.deepEqual(diagnostics.map((d) => [d.code, d.severity, d.fixable]),
    [["OL001", "error", true], ["OL007", "info", false], ["OL000", "error", false]]);
  assert.deepEqual(diagnostics[0].key, ["OL001", "graph/output[0]", "Y"]);
  assert.deepEqual(diagnostics[0].location, { path: "graph/output[0]", tensor: "Y" });
  assert.equal(diagnostics[0].engine, "onnxruntime-symbolic");
  assert.equal(diagnostics[1].location, null);
});

test("the view shows identity, declared next to derived, and the problems with their buttons", () => {
  const html = renderView(state, resources);
  assert.match(html, /tf2onnx 1\.16/);
  assert.match(html, /<td class="stale">float<\/td><td>float\[batch, 8\] <span class="engine">\(onnx\)<\/span>/);
  assert.match(html, /declared &lt;scalar&gt;/);  // escaped
  assert.equal((html.match(/class="fix"/g) ?? []).length, 1);  // only the fixable one
  assert.match(html, /<button id="fix-all" data-action="fixAll">Fix all<\/button>/);
  // A finding located in a graph can be drawn; one without a location (OL007 here) or a model-level one cannot.
  assert.equal((html.match(/data-action="graph"/g) ?? []).length, 1);
  assert.match(html, /<button class="secondary show-graph" data-action="reveal" data-index="0" aria-controls="whole-graph">Show in graph/);
  assert.match(html, /<button class="secondary quick-look" data-action="graph" data-index="0"/);
  assert.equal((html.match(/<span class="not-graph">not a graph element<\/span>/g) ?? []).length, 2);
  assert.match(html, /<link rel="stylesheet" href="vscode-resource:\/media\/view.css">/);
  assert.match(html, /<script src="vscode-resource:\/out\/webview\/main.js"><\/script>/);
});

test("a model onnx-lint quantize wrote shows where it came from; any other model has no such line", () => {
  const provenance = "Quantized by onnx-lint 0.1.0 from weak<1>.onnx, minmax calibration, INT8 (asymmetric) activations";
  const html = renderView({ ...state, summary: { ...state.summary!, provenance } }, resources);
  assert.match(html, /<dt>provenance<\/dt><dd class="provenance">Quantized by onnx-lint 0\.1\.0 from weak&lt;1&gt;\.onnx, minmax/);
  assert.doesNotMatch(renderView(state, resources), /provenance/);
  assert.doesNotMatch(renderView({ ...state, summary: { ...state.summary!, provenance: null } }, resources), /provenance/);
});

test("the CSP allows the extension's own scripts and styles only: no inline script, no eval", () => {
  const html = renderView(state, resources);
  const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)![1];
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src vscode-resource:;/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|nonce/);
  assert.doesNotMatch(html, /<script>|<script nonce|\son(click|load|keydown)=/);
});

test("an untrusted workspace gets no enabled button that writes", () => {
  const html = renderView({ ...state, trusted: false }, resources);
  assert.match(html, /<button id="fix-all" data-action="fixAll" disabled/);
  assert.match(html, /<button id="quantize" class="secondary" data-action="quantize" disabled/);
  assert.match(html, /<button class="fix" data-action="fix" data-index="0" disabled/);
  assert.match(html, /<p class="restricted" role="note">Static lint only: this workspace is not trusted/);
  assert.doesNotMatch(renderView(state, resources), /class="restricted"/);
});

test("a clean model says so and Fix all is disabled", () => {
  const html = renderView({ ...state, diagnostics: [] }, resources);
  assert.match(html, /No problems\./);
  assert.match(html, /<button id="fix-all" data-action="fixAll" disabled>/);
});

test("the hover says a finding's message once: VS Code already shows it above the server's explanation", () => {
  const server = "**OL001** graph output 'Y' is declared as a scalar (rank 0) [but] the graph computes float[batch, 8]\n\n" +
    "## What it does\n...\n\n[OL001 on the docs site](https://x/rules/OL001/)";
  const shown = withoutShownMessages(server, ["graph output 'Y' is declared as a scalar (rank 0) [but] the graph computes float[batch, 8]"]);
  assert.equal(shown, "**OL001**\n\n## What it does\n...\n\n[OL001 on the docs site](https://x/rules/OL001/)");
  assert.equal(withoutShownMessages(server, ["another message"]), server);
});
