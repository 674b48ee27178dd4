import * as path from "path";
import * as vscode from "vscode";
import { ServerConnection } from "./client";

interface QuantizeResult {
  output: string;
  summary: string;
  warnings: string[];
}

const RANDOM = "Calibrate on random inputs (the accuracy figures then say nothing about real data)";
const CHOOSE = "Choose calibration data (.npz or .npy)…";

/** Ask (or read from settings) the calibration data and the output, run the server's quantize, show the table. */
export async function quantize(server: ServerConnection, model: vscode.Uri): Promise<void> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage("onnx-lint does not write files in an untrusted workspace.");
    return;
  }
  const config = vscode.workspace.getConfiguration("onnxLint.quantize");
  let calibrationData = config.get<string>("calibrationData") || undefined;
  if (!calibrationData) {
    const choice = await vscode.window.showQuickPick([CHOOSE, RANDOM], { title: "Quantize INT8+FP16: calibration data" });
    if (!choice) {
      return;
    }
    if (choice === CHOOSE) {
      const picked = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { "Calibration data": ["npz", "npy"] } });
      if (!picked?.length) {
        return;
      }
      calibrationData = picked[0].fsPath;
    }
  }
  let output = config.get<string>("output") || undefined;
  if (!output) {
    const proposed = vscode.Uri.file(path.join(path.dirname(model.fsPath), `${path.basename(model.fsPath, ".onnx")}.int8-fp16.onnx`));
    const picked = await vscode.window.showSaveDialog({ defaultUri: proposed, filters: { "ONNX model": ["onnx"] } });
    if (!picked) {
      return;
    }
    output = picked.fsPath;
  }
  const options: Record<string, unknown> = { output };
  if (calibrationData) {
    options.calibrationData = calibrationData;
  }
  let result: QuantizeResult;
  try {
    // The server reports work-done progress, which VS Code shows as a cancellable notification.
    result = await server.command<QuantizeResult>("onnx-lint.quantize", model.toString(), options);
  } catch (error) {
    void vscode.window.showErrorMessage(`onnx-lint: ${(error as Error).message}`);
    return;
  }
  const report = [result.summary, "", ...result.warnings].join("\n");
  const document = await vscode.workspace.openTextDocument({ content: report, language: "plaintext" });
  await vscode.window.showTextDocument(document, { preview: false, viewColumn: vscode.ViewColumn.Beside });
  await vscode.commands.executeCommand("vscode.openWith", vscode.Uri.file(result.output), "onnxLint.model");
}
