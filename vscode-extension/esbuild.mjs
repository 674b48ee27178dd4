// Bundles the extension into one file per JavaScript context: the extension host's (out/extension.js,
// with vscode-languageclient and dagre inside) and the model view's page script and layout worker.
// `vsce package` then ships no node_modules; the bundled packages' licences go to
// out/THIRD-PARTY-NOTICES.txt. `node esbuild.mjs --production` minifies.
import * as esbuild from "esbuild";
import fs from "node:fs";
import path from "node:path";

const production = process.argv.includes("--production");
const common = { bundle: true, minify: production, sourcemap: !production, legalComments: "none", metafile: true,
  logLevel: "warning" };

const builds = await Promise.all([
  esbuild.build({
    ...common, entryPoints: ["src/extension.ts"], outfile: "out/extension.js",
    platform: "node", format: "cjs", target: "node20", external: ["vscode"],
  }),
  esbuild.build({
    ...common, entryPoints: { main: "src/webview/main.ts", layout: "src/webview/layoutWorker.ts" },
    outdir: "out/webview", platform: "browser", format: "iife", target: "es2022",
  }),
]);

// Every package whose code went into a bundle, with its licence text.
const packages = new Set();
for (const { metafile } of builds) {
  for (const input of Object.keys(metafile.inputs)) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) {
      packages.add(match[1]);
    }
  }
}
const notices = [...packages].sort().map((name) => {
  const dir = path.join("node_modules", name);
  const { version, license } = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  const file = fs.readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  const text = file ? fs.readFileSync(path.join(dir, file), "utf8").trim() : `License: ${license}`;
  return `${name} ${version}\n${"-".repeat(name.length + version.length + 1)}\n${text}\n`;
});
fs.writeFileSync("out/THIRD-PARTY-NOTICES.txt",
  "The onnx-lint extension bundles the following packages.\n\n" + notices.join("\n"));
