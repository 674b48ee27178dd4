"""The VS Code extension: its unit tests, its `.vsix`, and an end-to-end run in a real VS Code.

The end-to-end test installs code-server from npm, installs the built `.vsix` into it, and drives
it with playwright-core in Debian's Chromium (FIELD-NOTES): the current release (4.139.1, VS Code
1.139, on Node 24 from the npm registry) and the oldest VS Code `engines.vscode` allows (4.100.3,
VS Code 1.100, on the system's Node 20). It needs Node 20, npm, Chromium and code-server's build
dependencies, which `.ci/run` installs; CI sets ONNX_LINT_REQUIRE_EDITORS=1 so that anything missing
fails there instead of skipping. Screenshots of each step land in
`vscode-extension/e2e/screenshots/<code-server version>/` (a CI artefact).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from real_models import package_models
from test_quantize import outlier_model

from benchmarks import models as bench
from examples import defects

REPO = Path(__file__).resolve().parent.parent
EXTENSION = REPO / "vscode-extension"
VSIX = EXTENSION / "onnx-lint.vsix"
CODE_SERVERS = EXTENSION / "e2e" / ".code-server"  # one install per version
SCREENSHOTS = EXTENSION / "e2e" / "screenshots"
# The current code-server, and the oldest that our engines.vscode (^1.100) admits.
CODE_SERVER_VERSIONS = ["4.139.1", "4.100.3"]


def _require(tool: str, path: str | None = None) -> str:
    found = path if path and Path(path).exists() else shutil.which(tool)
    if found is None:
        if os.environ.get("ONNX_LINT_REQUIRE_EDITORS") == "1":
            pytest.fail(f"{tool} is not installed")
        pytest.skip(f"{tool} is not installed")
    return found


def _run(command: list[str], cwd: Path, timeout: int, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


@pytest.fixture(scope="module")
def built_extension() -> Path:
    """A clean `npm ci`, the extension's unit tests (`npm test`), and `vsce package`: the .vsix.

    Always `npm ci`, as a fresh clone does: a node_modules left from an older lockfile would hide a
    dependency change (it takes seconds from npm's cache).
    """
    npm = _require("npm")
    _require("node")
    _run([npm, "ci", "--no-audit", "--no-fund"], EXTENSION, timeout=900)
    tests = _run([npm, "test"], EXTENSION, timeout=300)
    assert "# fail 0" in tests.stdout and "# pass" in tests.stdout, tests.stdout
    VSIX.unlink(missing_ok=True)
    shutil.rmtree(EXTENSION / "out")  # `vsce package` alone must build it (the vscode:prepublish script)
    packaged = _run([npm, "run", "package"], EXTENSION, timeout=300)
    # vsce's warning for an unbundled extension ("... JavaScript files. For performance reasons, you should
    # bundle your extension") must not appear.
    assert "bundle your extension" not in packaged.stdout + packaged.stderr, packaged.stdout
    return VSIX


def test_vsix_packages_the_bundled_extension_for_vscode_1_100(built_extension):
    with zipfile.ZipFile(built_extension) as vsix:
        names = set(vsix.namelist())
        manifest = json.loads(vsix.read("extension/package.json"))
        notices = vsix.read("extension/out/THIRD-PARTY-NOTICES.txt").decode()
    # One bundle per JavaScript context (esbuild): no node_modules, no unbundled files for vsce to warn about.
    assert manifest["main"] == "./out/extension.js" and "extension/out/extension.js" in names
    assert {"extension/out/webview/main.js", "extension/out/webview/layout.js"} <= names
    assert not any("/node_modules/" in n or n.startswith("extension/src/") or n.startswith("extension/e2e/")
                   for n in names)
    assert "dependencies" not in manifest  # everything the extension runs is inside its bundles
    # The bundled packages' licences travel with them.
    assert "vscode-languageclient" in notices and "@dagrejs/dagre" in notices and "MIT" in notices
    assert manifest["engines"]["vscode"] == "^1.100.0"
    # Activation on opening a model (or its textual view), not on any folder that holds one.
    assert manifest["activationEvents"] == ["onCustomEditor:onnxLint.model", "onLanguage:onnx-text"]
    assert manifest["bugs"]["url"].endswith("/issues") and manifest["homepage"].startswith("https://")
    assert manifest["contributes"]["customEditors"][0]["selector"] == [{"filenamePattern": "*.onnx"}]
    titles = {c["command"]: c["title"] for c in manifest["contributes"]["commands"]}
    assert titles["onnxLint.showModelText"] == "Show model as text" and "onnxLint.restartServer" in titles
    assert manifest["capabilities"]["untrustedWorkspaces"]["supported"] == "limited"
    # Settings: selectors are lists the Settings UI can edit, and every setting the README names exists.
    settings = manifest["contributes"]["configuration"]["properties"]
    for key in ("select", "extendSelect", "ignore"):
        assert settings[f"onnxLint.{key}"]["default"] == [], key
    assert settings["onnxLint.runtimeProbe"]["type"] == "boolean"
    # The accuracy target: a cosine from -1 to 1, none by default (null: no search, as without --min-cosine).
    min_cosine = settings["onnxLint.quantize.minCosine"]
    assert min_cosine["type"] == ["number", "null"] and min_cosine["default"] is None
    assert (min_cosine["minimum"], min_cosine["maximum"]) == (-1, 1)
    readme = (EXTENSION / "README.md").read_text()
    named = set(re.findall(r"`onnxLint\.([A-Za-z.]+)`", readme))
    quantize = r"`(calibrationData|output|calibrationMethod|perChannel|keepIoTypes|target|minCosine)`"
    named |= {f"quantize.{k}" for k in re.findall(quantize, readme)}
    assert len(named) > 10 and {f"onnxLint.{k}" for k in named} <= set(settings), named
    # The model view's style, the ONNX text grammar.
    assert {"extension/media/view.css", "extension/syntaxes/onnx-text.tmLanguage.json"} <= names
    [language] = manifest["contributes"]["languages"]
    assert language["id"] == "onnx-text" and "*.onnx.txt" in language["filenamePatterns"]
    assert manifest["contributes"]["grammars"][0]["language"] == "onnx-text"
    assert "vscode:prepublish" in manifest["scripts"]
    assert built_extension.stat().st_size < 1_000_000


def test_vsce_ls_lists_only_what_the_extension_needs(built_extension):
    """What `vsce ls` lists is what the .vsix holds: the bundles and their licences, the manifest, README,
    CHANGELOG, licence, icon, stylesheet and grammar; `vsce package` says nothing about unbundled files."""
    npx = _require("npx")
    listed = _run([npx, "--no-install", "vsce", "ls"], EXTENSION, timeout=300).stdout.split()
    assert {"package.json", "README.md", "CHANGELOG.md", "LICENSE", "media/icon.png", "media/view.css",
            "out/extension.js", "out/webview/main.js", "out/webview/layout.js", "out/THIRD-PARTY-NOTICES.txt",
            "syntaxes/onnx-text.tmLanguage.json"} <= set(listed)
    assert all(n in ("package.json", "README.md", "CHANGELOG.md", "LICENSE") or
               n.startswith(("out/", "media/", "syntaxes/")) for n in listed), listed
    assert not any(n.endswith((".ts", ".map", ".tsbuildinfo", ".mjs")) or n.startswith(("out/test/", "out/src/"))
                   for n in listed)
    assert len([n for n in listed if n.endswith(".js")]) == 3
    with zipfile.ZipFile(built_extension) as vsix:
        packed = {n.removeprefix("extension/") for n in vsix.namelist() if n.startswith("extension/")}
    # vsce stores LICENSE as LICENSE.txt.
    assert {n.lower() for n in packed} == {("license.txt" if n == "LICENSE" else n).lower() for n in listed}


@pytest.mark.parametrize("code_server_version", CODE_SERVER_VERSIONS)
def test_end_to_end_in_code_server_open_see_problems_in_the_graph_fix_all(built_extension, tmp_path,
                                                                          code_server_version):
    node = _require("node")
    chromium = _require("chromium", "/usr/bin/chromium")
    prefix = CODE_SERVERS / code_server_version
    _run(["bash", str(EXTENSION / "e2e" / "install-code-server.sh"), str(prefix), code_server_version], REPO,
         timeout=1500)
    code_server = prefix / "bin" / "code-server"
    screenshots = SCREENSHOTS / code_server_version
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    model = workspace / "weak.onnx"
    onnx.save(defects.weakly_typed_mlp(), model)
    # The accuracy target's model: INT8 misses cosine 0.995 until its most costly node (mm4) is FP16
    # (tests/test_quantize.py::test_min_cosine_is_a_target_that_the_fallback_reaches); the e2e sets
    # onnxLint.quantize.minCosine, calibrationData and output to these before it quantizes it.
    frontier_model = outlier_model(workspace / "outlier.onnx")
    frontier_data = workspace / "outlier-calibration.npz"
    np.savez(frontier_data, X=np.random.default_rng(3).standard_normal((16, 16)).astype(np.float32))
    frontier_output = workspace / "outlier.min-cosine.onnx"
    # The whole graph of bigger models: a real one (PP-OCRv4 detection) and a 100k-node chain.
    big = [{"file": "chain-100k.onnx", "search": "mm20000"}]
    onnx.save(bench.weakly_typed(bench.mlp_chain(100_000)), workspace / "chain-100k.onnx")
    ppocr = next((p for p in package_models("rapidocr_onnxruntime") if "PP-OCRv4_det" in p.name), None)
    if ppocr is None and os.environ.get("ONNX_LINT_REQUIRE_EDITORS") == "1":
        pytest.fail("rapidocr_onnxruntime is not installed (tests/real-models.txt)")
    if ppocr is not None:
        shutil.copy(ppocr, workspace / "ppocr-det.onnx")
        big.append({"file": "ppocr-det.onnx", "search": "Conv", "weightFinding": "OL201",
                    "weightTensor": "batch_norm_0.w_2"})
    # The model view with the mouse, in four themes and two sizes: weak.onnx as it is before "Fix all" (a copy the e2e
    # never fixes), a scoped real export (a transformers BERT, tests/exports/make_bert_export.py), PP-OCRv4 det (no
    # scopes), the 100k chain and the model the e2e's quantize writes.
    (workspace / "unfixed").mkdir()
    onnx.save(defects.weakly_typed_mlp(), workspace / "unfixed" / "weak.onnx")
    shutil.copy(REPO / "tests" / "exports" / "ts_bert_tiny.onnx", workspace / "bert-tiny.onnx")
    matrix = [{"file": "unfixed/weak.onnx", "name": "weak"},
              {"file": "bert-tiny.onnx", "name": "bert", "expand": ["^encoder", r"^layer\.\d"]},
              *([{"file": "ppocr-det.onnx", "name": "ppocr-det"}] if ppocr is not None else []),
              {"file": "chain-100k.onnx", "name": "chain-100k"},
              {"file": "weak.int8-fp16.onnx", "name": "quantized"}]
    if screenshots.exists():
        shutil.rmtree(screenshots)
    result_file = tmp_path / "result.json"
    done = subprocess.run([node, str(EXTENSION / "e2e" / "run-e2e.mjs")], cwd=EXTENSION, capture_output=True,
                          text=True, timeout=900, env={
                              **os.environ, "CODE_SERVER": str(code_server), "VSIX": str(built_extension),
                              "WORKSPACE": str(workspace), "MODEL": str(model), "PYTHON": sys.executable,
                              "FRONTIER_MODEL": str(frontier_model), "FRONTIER_DATA": str(frontier_data),
                              "FRONTIER_OUTPUT": str(frontier_output), "FRONTIER_TARGET": "0.995",
                              "SCREENSHOTS": str(screenshots), "RESULT": str(result_file), "CHROMIUM": chromium,
                              "BIG_MODELS": json.dumps(big), "MATRIX_MODELS": json.dumps(matrix)})
    assert result_file.is_file(), done.stdout + done.stderr
    seen = json.loads(result_file.read_text())
    assert seen.get("ok"), f"{seen.get('error')}\nsteps: {seen['steps']}\n{seen.get('serverLog')}"

    # The model view: declared next to derived, and both findings with their buttons.
    assert seen["outputs"] == ["Y\tfloat\tfloat[batch, 8] (onnxruntime-symbolic)"]
    assert [p.split()[:2] for p in seen["viewProblems"]] == [["ERROR", "OL001"], ["WARNING", "OL003"]]
    assert "onnx-lint-examples" in seen["identity"] and "com.microsoft 1" in seen["identity"]
    # The Problems panel: the file and its two entries, from onnx-lint, with their codes.
    rows = "\n".join(seen["problems"])
    assert "weak.onnx" in rows and "OL001" in rows and "OL003" in rows and rows.count("onnx-lint") == 2

    # OL001 in its graph: the node computing the stale output is drawn and highlighted, the output's
    # edge says what the file declares and what the graph computes, and which engine derived it.
    graph = seen["graph"]
    assert graph["title"] == "OL001 in its graph" and "graph/output[0] 'Y'" in graph["where"]
    assert "derived by onnxruntime-symbolic" in graph["where"]
    focus = {n["op"]: n for n in graph["focusNodes"]}
    assert set(focus) == {"Add", "output"} and "Add_2" in focus["Add"]["text"] and "Y" in focus["output"]["text"]
    assert focus["Add"]["strokeWidth"] == "3px"
    assert "declared float" in graph["staleEdge"] and "derived float[batch, 8]" in graph["staleEdge"]
    assert {"MatMul", "Gelu", "Add"} <= set(graph["nodeOps"])
    assert graph["focused"] == "graph-title"  # the keyboard lands on the drawing
    # Light, then dark: the open view follows the theme through VS Code's --vscode-* variables.
    light, dark = seen["light"], seen["dark"]
    assert "vscode-light" in light["bodyClass"] and "vscode-dark" in dark["bodyClass"]
    assert _luminance(light["background"]) > 0.8 > 0.25 > _luminance(dark["background"])
    assert _luminance(light["foreground"]) < 0.3 < 0.6 < _luminance(dark["foreground"])
    for key in ("staleStroke", "buttonBackground", "nodeFill"):
        assert light[key] != dark[key] and light[key] not in ("", "none"), (key, light[key], dark[key])
    assert light["variables"] and light["variables"] != dark["variables"]
    contrast = seen["highContrast"]
    assert "vscode-high-contrast" in contrast["bodyClass"] and _luminance(contrast["background"]) < 0.05
    assert _luminance(contrast["buttonBorder"]) > 0.3  # the theme's contrast border around buttons
    # Keyboard: the arrow keys moved from one drawn element to the next, each described in words.
    # Top down, as data flows: from the graph input X to the label of its edge.
    assert seen["keyboard"][0] == "graph input, X"
    assert seen["keyboard"][1].startswith("tensor X, declared float[batch, 16]")

    # The whole graph: every node drawn (a small model), the stale output's producer and edge in the
    # error colour; "Show in graph" selects the node, announces it, syncs the table and details it.
    whole = seen["wholeGraph"]
    drawn = whole["drawn"]
    assert "nodes in 1 graph" in drawn["status"] and drawn["firstPaintMs"] >= 0
    assert any("error" in c for c in drawn["items"])
    assert any(e.endswith(" Y") and "error" in e for e in drawn["staleEdges"])
    assert drawn["errorStroke"] != drawn["plainStroke"]
    shown = whole["shown"]
    assert shown["selected"].startswith("Add node Add_2") and "error here" in shown["selected"]
    assert shown["announced"] == "Selected " + shown["selected"] and "Add_2" in shown["tableSelected"]
    assert shown["focused"] == "graph-viewport"
    assert "Add" in whole["details"]["title"]
    # The finding's tensor is named and marked in the node's details (for an initializer, the same mark).
    assert any(r.startswith("Y ← OL001\tfloat\tfloat[batch, 8]") for r in whole["details"]["outputs"]), whole["details"]
    assert any("Gelu" in h for h in whole["hits"]) and "Gelu" in whole["searched"]["selected"]
    assert whole["keyboard"]["selected"] != whole["searched"]["selected"]  # ArrowDown moved on
    # The mouse (real pointer events): a click selects the node under the pointer and details it; a drag pans
    # and keeps the selection; a click on empty space clears it.
    clicked = whole["clicked"]
    assert clicked["selected"] == clicked["label"] and clicked["announced"] == "Selected " + clicked["label"]
    assert clicked["label"].split(" node")[0] in clicked["details"]
    assert whole["dragged"]["moved"] and whole["dragged"]["selected"] == clicked["label"]
    assert whole["cleared"]["selected"] == "" and whole["cleared"]["announced"] == "Selection cleared"
    # The Problems panel: the model entry's code link brings its finding's node back into the selection.
    assert whole["fromProblems"]["selected"].startswith("Add node Add_2")
    # High contrast marks the finding with the theme's own contrast border, not the legend colour alone.
    assert whole["highContrast"]["errorStroke"] not in ("", whole["highContrast"]["plainStroke"])
    assert (whole["dark"]["errorStroke"], whole["dark"]["plainStroke"]) != (drawn["errorStroke"], drawn["plainStroke"])
    # Bigger models open to an overview (blocks, not 100k boxes) and search reveals a node inside.
    for opened in seen["big"]:
        assert 0 < opened["first"]["drawn"] <= 200, opened
        assert opened["searched"]["selected"], opened
    assert {b["file"] for b in seen["big"]} == {b["file"] for b in big}
    hundred_k = next(b for b in seen["big"] if b["file"] == "chain-100k.onnx")
    assert "100,000 nodes" in hundred_k["first"]["status"] and "mm20000" in hundred_k["searched"]["selected"]
    ppocr_view = next((b for b in seen["big"] if b["file"] == "ppocr-det.onnx"), None)
    if ppocr_view is not None:
        # OL201 is on a weight (a BatchNormalization's variance, held by a Constant node the exporter
        # hoisted to the top): "Show in graph" finds it inside the overview's groups, selects it, and
        # marks the weight in the node's details.
        shown = ppocr_view["weight"]
        assert shown["selected"].startswith("Constant node"), shown
        assert shown["announced"].startswith("Selected Constant node"), shown
        assert shown["marked"].startswith("batch_norm_0.w_2 ← OL201"), shown
        # Clicked with the mouse, that Constant details its values (Netron's way): the first 16, its type, size and
        # range, the value FP16 cannot hold in the finding colour, and "Show all" (a click) for every value.
        constant = ppocr_view["constant"]
        assert constant["selected"].startswith("Constant node"), constant
        assert constant["preview"].startswith("[") and constant["preview"].count(",") == 16, constant["preview"]
        size = PPOCR_BN_VARIANCE[0]
        assert constant["summary"].startswith(f"float {size} · {size} values · range "), constant["summary"]
        assert constant["fp16"].startswith(f"{size} of {size} value(s) exceed FP16's range ±65504 (largest magnitude "
                                           "9.79e+07)"), constant
        assert constant["fp16Colour"] != constant["plainColour"], constant
        assert constant["all"].count(",") == size - 1, constant["all"]
        # Zoomed out, edges carry no label; zoomed in with the wheel, they say their shapes, the Constant's own
        # output edge its shape in the drawing.
        assert constant["zoomedOut"]["labels"] is False, constant["zoomedOut"]
        zoomed = constant["zoomedIn"]
        assert zoomed["labels"] is True and zoomed["scale"] >= 0.8, zoomed
        assert zoomed["label"] == PPOCR_BN_VARIANCE[1] and zoomed["labelInView"], zoomed

    # "Show model as text": the same findings on the real lines of the textual view, one entry each
    # (the model's own entries leave the panel while the view shows them), and coloured tokens.
    text_rows = "\n".join(seen["textProblems"])
    assert "weak.onnx.txt" in text_rows and "[Ln 6, Col 39]" in text_rows  # 'Y' in the graph header
    assert text_rows.count("OL001") == 1 and text_rows.count("OL003") == 1
    assert "ONNX text" in seen["language"]
    closed = "\n".join(seen["problemsTextClosed"])
    assert closed.count("OL001") == 1 and closed.count("OL003") == 1 and ".txt" not in closed
    colours, plain = seen["tokens"]["colours"], seen["tokens"]["plain"]
    for token in ("MatMul", "float", "example", "Gelu"):
        assert colours.get(token) not in (None, plain), (token, colours.get(token), plain)
    assert colours["MatMul"] != colours["float"] != colours["example"]
    # After "Fix all": the file on disk is fixed and the panel is empty.
    assert "No problems have been detected" in seen["problemsAfter"]
    assert seen["outputsAfter"] == ["Y\tfloat[batch, 8]\tfloat[batch, 8] (onnxruntime-symbolic)"]
    fixed = onnx.load(model)
    onnx.checker.check_model(fixed, full_check=True)
    assert [d.dim_param or d.dim_value for d in fixed.graph.output[0].type.tensor_type.shape.dim] == ["batch", 8]
    # Quantize from the view: the accuracy table in the view, and the written model opened beside it.
    quantized = seen["quantize"]
    assert quantized["headers"][:3] == ["output", "shape", "cosine similarity"]
    assert "max abs error" in quantized["headers"]
    [row] = quantized["rows"]
    assert row.startswith("Y\t") and (model.parent / "weak.int8-fp16.onnx").is_file()
    assert quantized["opened"] == "weak.int8-fp16.onnx"  # its own model view, beside
    assert seen["quantizing"] == {"busy": "Quantizing…", "fixAllDisabled": True}  # no second run meanwhile
    assert quantized["enabledAfter"] is True
    assert "random" in quantized["text"]  # the loud warning about random calibration
    # While it ran: a notification with its step text and a Cancel button (the server's work-done progress).
    steps = [n for n in quantized["notifications"] if n["message"].startswith("Quantize weak.onnx to INT8+FP16")]
    assert steps and all(n["buttons"] == ["Cancel"] for n in steps), quantized["notifications"]
    assert any(re.search(r"(Repairing annotations|Calibrating on \d+ samples|Quantizing, converting)", n["message"])
               for n in steps), steps
    # The written model's view: no note about the Q/DQ onnx-lint itself wrote, and where the model came from.
    # Asked once for this workspace which runtime the model is for; TensorRT was picked: every zero-point 0.
    assert "asked once for this workspace" in seen["targetTitle"]
    assert "OL202" not in quantized["writtenProblems"] and "OL205" not in quantized["writtenProblems"]
    assert re.search(r"provenance\s+Quantized by onnx-lint \S+ for TensorRT from weak\.onnx, \w+ calibration, "
                     r"INT8 \(symmetric\) activations", quantized["writtenIdentity"]), quantized["writtenIdentity"]
    # The report: the runtime picked, and each INT8 node's sensitivity (alone in INT8: its worst-output cosine, its
    # share of the summed error, its MACs). No --min-cosine here, so no search and no frontier plot (the plot and
    # its safety check are covered by the unit tests, test/view.test.ts).
    assert quantized["target"] == "Target runtime: TensorRT"
    # The report reads top-down: the verdict first (TensorRT, no accuracy target set: the worst cosine on the samples
    # compared), then the warning that random inputs make the figures meaningless, before any figure; the accuracy
    # per output, the INT8 coverage, the sensitivity, how it was made; the whole JSON last, behind a closed
    # disclosure that a mouse click opens.
    order = quantized["order"]
    assert order[:4] == ["verdict", "warnings", "written", "outputs"], order
    assert order.index("outputs") < order.index("coverage") < order.index("sensitivity") < order.index("made") \
        < order.index("raw") == len(order) - 1, order
    assert quantized["rawOpen"] is False and quantized["raw"]["open"] is True
    raw = json.loads(quantized["raw"]["json"])
    assert raw["target"] == "tensorrt" and raw["min_cosine"] is None and raw["written"] is True
    compared, samples = raw["calibration"]["validation_samples"], raw["calibration"]["samples"]
    worst = min(o["cosine_similarity"] for o in raw["outputs"])
    assert quantized["verdictKind"] == "unchecked"
    assert quantized["verdict"].endswith(
        "Quantized for TensorRT with no accuracy target set (onnxLint.quantize.minCosine, --min-cosine on the command "
        f"line): the worst output's cosine similarity with FP32 is {worst:.6f} on {compared} samples."), quantized
    assert quantized["warnings"][0].startswith("Warning: no --calibration-data given: calibrating on RANDOM inputs")
    assert f"on the same {compared} samples (" in quantized["samples"], quantized["samples"]
    assert f" {samples} calibration samples, random inputs)" in quantized["samples"], quantized["samples"]
    assert float(row.split("\t")[2]) == round(raw["outputs"][0]["cosine_similarity"], 6), row
    share = f"{raw['coverage']['int8_mac_share']:.1%}"
    assert re.search(rf"{re.escape(share)} of the \S+ multiply-accumulates run in INT8", quantized["coverage"])
    assert f"Nodes: {raw['nodes']['int8']} in INT8, " in quantized["coverage"], quantized["coverage"]
    assert "validation_samples" not in quantized["text"] and "source:" not in quantized["text"]  # no field dump
    # Readable in every theme: every text of the report at 4.5:1 or more against its background, marks at 3:1.
    for theme in ("dark", "light", "high-contrast"):
        readable = quantized["readable"][theme]
        assert readable["checked"] > 20 and readable["text"]["ratio"] >= 4.5, (theme, readable)
        assert readable["icon"]["ratio"] >= 3, (theme, readable)
    assert quantized["sensitivityHeaders"] == ["node", "op", "cosine alone", "share of error", "MACs"]
    assert quantized["sensitivityRows"], quantized["text"]
    assert all(re.fullmatch(r"\S+\tMatMul\t0\.\d{6}\t\d+\.\d%\t[\d,]+", r) for r in quantized["sensitivityRows"]), \
        quantized["sensitivityRows"]
    assert quantized["frontierPlots"] == 0
    # The written model's whole graph: its INT8 nodes tinted by their share of the error (shares summing to 1),
    # the legend shown; a mouse click on the costliest one selects it and its details say its error in words.
    sensitivity = seen["sensitivity"]
    drawn = sensitivity["drawn"]
    assert drawn["legend"].startswith("INT8 error share"), drawn["legend"]
    assert drawn["int8"] and abs(sum(n["share"] for n in drawn["int8"]) - 1) < 1e-3, drawn["int8"]
    hottest = max(drawn["int8"], key=lambda n: n["share"])
    assert re.search(r"int8-l[0-4]", hottest["classes"]) and float(hottest["bar"]) > 0, hottest
    assert re.search(r", \d+\.\d% of the INT8 error", hottest["label"]), hottest
    row = next(r for r in quantized["sensitivityRows"] if " " + r.split("\t")[0] + "," in hottest["label"])
    assert abs(float(row.split("\t")[3].rstrip("%")) - 100 * hottest["share"]) <= 0.06, (row, hottest)  # they agree
    assert drawn["int8Fill"] not in ("", "none", drawn["plainFill"]), drawn  # the tint is drawn, in the theme's colours
    assert drawn["barFill"] not in ("", "none"), drawn
    clicked = sensitivity["clicked"]
    assert clicked["selected"] == hottest["label"], clicked
    assert row.split("\t")[0] in clicked["title"], clicked
    line = r"INT8 error: (\d+\.\d)% of the total; worst-output cosine [01]\.\d{6} with only this node in INT8"
    said = re.fullmatch(line, clicked["line"])
    assert said and abs(float(said[1]) - 100 * hottest["share"]) <= 0.06, clicked["line"]

    # Compare with… the original, with the mouse: offered first, the model's own role and why, the numbers, a
    # "Precision changed" row that selects its INT8 node (its details say what changed), badges on the graph.
    compare = seen["compare"]
    assert compare["offered"][0].startswith("weak.onnx"), compare["offered"]
    assert compare["direction"].startswith("This model is the twin of weak.onnx (weak.int8-fp16.onnx was quantized "
                                           "from weak.onnx)"), compare["direction"]
    assert re.search(r"precision\s+FP32 \d+ → .*INT8 \d+", compare["summary"]), compare["summary"]
    assert any(k.startswith("Precision changed (") for k in compare["kinds"]), compare["kinds"]
    assert "FP32 → INT8 (Q/DQ)" in compare["row"], compare["row"]
    assert compare["details"]["line"] == "Compared: FP32 → INT8 (Q/DQ)", compare["details"]
    assert compare["row"].split(" ")[1].strip("'") in compare["details"]["title"], compare
    assert "compared: FP32 → INT8 (Q/DQ)" in compare["details"]["selected"], compare["details"]
    assert "INT8" in compare["badges"] and compare["legend"], compare
    assert compare["readable"]["checked"] > 10 and compare["readable"]["text"]["ratio"] >= 4.5, compare["readable"]

    # The accuracy target from the settings (onnxLint.quantize.minCosine 0.995, calibrationData, output, target,
    # written to the workspace's .vscode/settings.json while VS Code runs): nothing asked, the report plots the
    # frontier of the builds the search tried and lists them, the costliest node alone (mm4) moved to FP16, and
    # the written model opens.
    frontier = seen["frontier"]
    assert "Min Cosine" in frontier["setting"] and "accuracy target" in frontier["setting"].lower(), frontier["setting"]
    assert frontier["opened"] == "outlier.onnx"
    report = frontier["report"]
    assert report["plots"] == 1 and report["heading"] == "Accuracy against INT8 coverage", report
    assert report["plotTitle"].startswith("Accuracy against INT8 coverage") and report["plotWidth"] > 200, report
    assert report["caption"].startswith("Each build the accuracy target tried")
    # The plot's points and the table's rows are the same builds (validated, and those the masked model predicted),
    # most INT8 first: the first pass misses the target, one node in FP16 meets it (the written model), and so does
    # FP16 only. A point is filled when its build meets the target.
    assert report["tableHeaders"] == ["build", "INT8 share of MACs", "worst-output cosine", "meets the target"]
    points = [r.split("\t") for r in report["tableRows"]]
    assert len(points) == len(report["points"]) >= 3, (points, report["points"])
    shares = [float(p[1].rstrip("%")) for p in points]
    assert shares == sorted(shares, reverse=True) and shares[-1] == 0.0, points
    assert points[0][0] == "first pass" and points[0][3] == "no" and float(points[0][2]) < 0.995, points
    assert any(p[0].startswith("1 node(s) in FP16") and "predicted" not in p[0] and p[3] == "yes"
               and float(p[2]) >= 0.995 and 0 < float(p[1].rstrip("%")) < shares[0] for p in points), points
    assert points[-1][0] == "FP16 only" and points[-1][3] == "yes", points
    drawn = {p["label"].split(": INT8 ")[0]: p for p in report["points"]}
    assert set(drawn) == {p[0] for p in points}, (drawn, points)
    for build, _share, _cosine, met in points:
        assert drawn[build]["met"].split()[0] == ("met" if met == "yes" else "missed"), drawn[build]
        assert (drawn[build]["fill"] != "none") == (met == "yes"), drawn[build]
    assert report["sensitivityRows"][0].split("\t")[:2] == ["mm4", "MatMul"], report["sensitivityRows"]
    assert report["sensitivityRows"][0].endswith("\tFP16 (accuracy target)"), report["sensitivityRows"]
    # The verdict first: the target met, after the fallback moved one node to FP16; that node named with why.
    assert report["order"][0] == "verdict" and report["verdictKind"] == "met", report["order"]
    met = re.search(r"Meets the accuracy target for TensorRT \(cosine ≥ 0\.995\): the worst output's cosine similarity "
                    r"with FP32 is (0\.\d{6}) on 16 samples, after moving 1 node to FP16\.$", report["verdict"])
    assert met and float(met[1]) >= 0.995, report["verdict"]
    assert any(k.startswith("FP16, 1 node: mm4 (MatMul, ") and "the accuracy target (cosine ≥ 0.995) moved it to FP16"
               in k for k in report["kept"]), report["kept"]
    [output_row] = report["rows"]
    assert output_row.startswith("Y\t") and float(output_row.split("\t")[2]) >= 0.995, output_row
    # Calibrated on the data the setting names (no warning about random inputs).
    assert "outlier-calibration.npz" in report["text"] and "RANDOM" not in report["text"], report["text"]
    assert report["target"] == "Target runtime: TensorRT"  # from the settings file, not asked
    written = frontier["written"]
    assert written["opened"] == "outlier.min-cosine.onnx" and frontier_output.is_file()
    assert "provenance" in written["identity"] and "from outlier.onnx" in written["identity"], written["identity"]
    assert written["int8"] and not any(" mm4," in label for label in written["int8"]), written["int8"]
    assert any(" mm0," in label for label in written["int8"]), written["int8"]
    moved = onnx.load(frontier_output)
    int8_inputs = {n.output[0] for n in moved.graph.node if n.op_type == "DequantizeLinear"}
    [mm4] = [n for n in moved.graph.node if n.name == "mm4"]
    assert not int8_inputs & set(mm4.input), list(mm4.input)  # mm4 reads float tensors: it is FP16
    assert frontier["enabledAfter"] is True
    # No error on the way (an accuracy target the server refused, a settings change it rejected).
    assert not [n for n in frontier["notifications"] if "onnx-lint:" in n["message"]], frontier["notifications"]

    # "onnx-lint: Restart server" from the palette while the 100k chain's view waited for its first lint (it listed no
    # finding yet, the status bar counted no error): the view lists its findings and draws its graph, the status bar and
    # the Problems panel count its 201 errors, and one onnx-lint server runs, a new one.
    restart = seen["restart"]
    assert restart["atRestart"]["findings"] == 0 and restart["atRestart"]["statusBar"].startswith("0 "), restart
    assert restart["serversBefore"] == restart["serversAfter"] == 1 and restart["newServer"], restart
    assert [p.split("\n")[:2] for p in restart["problems"]] == [["ERROR", "OL001"], ["ERROR", "OL005 × 200"]], restart
    assert restart["status"] == "100,000 nodes in 1 graph" and 0 < restart["drawn"] <= 200, restart
    assert restart["after"]["statusBar"].startswith("201 ") and restart["panel"][0].startswith("chain-100k.onnx\n201")

    # The model view with the mouse, for every model in Light Modern, Dark Modern, Dark High Contrast and Light High
    # Contrast, at 1400x900 and in a 350 px column: a double-click expands a group (where the model has groups; BERT's
    # `encoder`, then a `layer.N` whose frame holds its attention, intermediate and output), a click on a node selects
    # it and its details name it, and every visible text has 4.5:1 contrast.
    combinations = seen["matrix"]["combinations"]
    themes = ("light", "dark", "high-contrast", "high-contrast-light")
    assert sorted((c["model"], c["theme"], c["size"]) for c in combinations) == sorted(
        (m["name"], theme, size) for m in matrix for theme in themes for size in ("1400x900", "350px"))
    first_group = {"bert": "encoder", "ppocr-det": "stage ", "chain-100k": "#0–"}
    for c in combinations:
        where = (c["model"], c["theme"], c["size"])
        width = c["frameWidth"]
        assert abs(width - 350) <= 12 if c["size"] == "350px" else width > 900, (where, width)
        clicked = c["clicked"]
        op, _, rest = clicked["label"].partition(" node ")
        name = rest.split(",")[0]
        assert op and name and clicked["details"] == f"{op} {name}", (where, clicked)
        assert clicked["announced"] == "Selected " + clicked["label"], (where, clicked)
        assert c["contrast"]["checked"] >= 25 and c["contrast"]["failures"] == [], (where, c["contrast"])
        expanded = c["expanded"]
        if c["model"] not in first_group:
            assert expanded == [], (where, expanded)  # no groups: nothing to double-click
            continue
        assert expanded and expanded[0]["title"].startswith(first_group[c["model"]]), (where, expanded)
        for group in expanded:  # each double-click drew the group's frame around more items, and selected no text
            assert group["frame"].startswith(group["title"]) and group["after"] > group["before"], (where, group)
            assert group["textSelected"] == "" and group["inside"], (where, group)
        if c["model"] == "bert":
            layer = expanded[1]
            assert re.fullmatch(r"layer\.\d( \(\d/\d\))?", layer["title"]), (where, expanded)
            parts = {t.split(" (")[0] for t in layer["inside"]}
            assert parts == {"attention", "intermediate", "output"}, (where, layer)
            assert "/encoder/layer." in name, (where, clicked)  # the node clicked is inside the layer opened
        if c["model"] == "chain-100k":
            assert expanded[-1]["inside"] == ["MatMul", "Add", "Relu", "Add"], (where, expanded)

    shots = {Path(p).stem.split("-", 1)[1] for p in seen["screenshots"]}
    assert shots >= {"model-view", "problems-panel", "graph-light", "graph-dark", "text-view", "fixed", "quantized",
                     "quantized-sensitivity", "settings-min-cosine", "quantize-frontier", "quantize-frontier-table",
                     "quantized-report-dark", "quantized-report-light", "quantized-report-high-contrast",
                     "quantize-frontier-verdict",
                     "whole-graph-light", "whole-graph-dark", "whole-graph-high-contrast", "whole-graph-chain-100k",
                     "restart-server"}
    assert {f"matrix-{c['model']}-{c['theme']}-{c['size']}" for c in combinations} <= shots


# PP-OCRv4 det's Constant batch_norm_0.w_2 (the variance OL201 flags, every value above 65504): its size, and its
# edge's shape label.
PPOCR_BN_VARIANCE = (24, "24")


def _luminance(css: str) -> float:
    """Relative brightness (0 black .. 1 white) of a CSS ``rgb(r, g, b)`` colour."""
    r, g, b = (int(x) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255
