import * as path from "path";
import * as vscode from "vscode";
import { ServerConnection } from "./client";

/** The server's answer to `onnx-lint.quantize`; `report` is the JSON of `--report` (fields grow over time). */
export interface QuantizeResult {
  output: string;
  summary: string;
  warnings: string[];
  report?: Record<string, unknown>;
  /** The accuracy/coverage frontier of an `--min-cosine` search as a self-contained SVG (theme colours); null without one. */
  frontierSvg?: string | null;
}

const RANDOM = "Calibrate on random inputs (the accuracy figures then say nothing about real data)";
const TARGETS = [
  { label: "ONNX Runtime", target: "onnxruntime", detail: "Asymmetric INT8 activations: every ReLU output keeps all 256 levels." },
  { label: "TensorRT", target: "tensorrt", detail: "Every zero-point 0 and float biases: what TensorRT's explicit quantization builds." },
];
/** Where the answer to "which runtime is this for?" is kept: once per workspace. */
export const TARGET_KEY = "onnxLint.quantize.target";

/** The runtime the model is quantized for: the setting, else this workspace's earlier answer, else ask once. */
async function chooseTarget(memory: vscode.Memento, configured: string | undefined): Promise<string | undefined> {
  const known = configured || memory.get<string>(TARGET_KEY);
  if (known && TARGETS.some((t) => t.target === known)) {
    return known;
  }
  const choice = await vscode.window.showQuickPick(TARGETS, {
    title: "Quantize INT8+FP16: which runtime will run the model? (asked once for this workspace)",
  });
  if (choice) {
    await memory.update(TARGET_KEY, choice.target);
  }
  return choice?.target;
}
const CHOOSE = "Choose calibration data (.npz or .npy)…";

/** Ask (or read from settings) the calibration data and the output, run the server's quantize; its result. */
export async function quantize(server: ServerConnection, model: vscode.Uri,
  memory: vscode.Memento): Promise<QuantizeResult | undefined> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage("onnx-lint does not write files in an untrusted workspace.");
    return undefined;
  }
  const config = vscode.workspace.getConfiguration("onnxLint.quantize");
  let calibrationData = config.get<string>("calibrationData") || undefined;
  if (!calibrationData) {
    const choice = await vscode.window.showQuickPick([CHOOSE, RANDOM], { title: "Quantize INT8+FP16: calibration data" });
    if (!choice) {
      return undefined;
    }
    if (choice === CHOOSE) {
      const picked = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { "Calibration data": ["npz", "npy"] } });
      if (!picked?.length) {
        return undefined;
      }
      calibrationData = picked[0].fsPath;
    }
  }
  const target = await chooseTarget(memory, config.get<string>("target") || undefined);
  if (!target) {
    return undefined;
  }
  let output = config.get<string>("output") || undefined;
  let confirmed = false;  // the save dialog asks before it returns an existing file; a setting never replaces one
  if (!output) {
    const proposed = vscode.Uri.file(path.join(path.dirname(model.fsPath), `${path.basename(model.fsPath, ".onnx")}.int8-fp16.onnx`));
    const picked = await vscode.window.showSaveDialog({ defaultUri: proposed, filters: { "ONNX model": ["onnx"] } });
    if (!picked) {
      return undefined;
    }
    output = picked.fsPath;
    confirmed = true;
  }
  const options: Record<string, unknown> = { output, force: confirmed, target };
  if (calibrationData) {
    options.calibrationData = calibrationData;
  }
  // The accuracy target, read when the command runs as the paths are (the settings the server was last sent
  // may be older); a value out of range or not a number is the server's to refuse, with a message naming it.
  const minCosine = config.get<unknown>("minCosine");
  if (minCosine !== undefined && minCosine !== null) {
    options.minCosine = minCosine;
  }
  try {
    // The server reports work-done progress: a notification with its steps and Cancel (src/progress.ts).
    return await server.command<QuantizeResult>("onnx-lint.quantize", model.toString(), options);
  } catch (error) {
    void vscode.window.showErrorMessage(`onnx-lint: ${(error as Error).message}`);
    return undefined;
  }
}
