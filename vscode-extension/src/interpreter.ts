// Pure logic (no `vscode` import) so that it runs under the unit tests.

/** Where the interpreter came from, for the log and the "not installed" message. */
export type InterpreterSource = "setting onnxLint.interpreter" | "Python extension" | "default";

export interface Interpreter {
  command: string;
  source: InterpreterSource;
}

/** The setting wins, then the Python extension's active environment, then `python3`. */
export function chooseInterpreter(setting: string | undefined, pythonExtension: string | undefined): Interpreter {
  if (setting && setting.trim()) {
    return { command: setting.trim(), source: "setting onnxLint.interpreter" };
  }
  if (pythonExtension && pythonExtension.trim()) {
    return { command: pythonExtension.trim(), source: "Python extension" };
  }
  return { command: "python3", source: "default" };
}

/** The arguments that start the server. */
export function serverArguments(extra: readonly string[]): string[] {
  return ["-m", "onnx_lint", "server", ...extra];
}

/** The exact command that installs what the extension needs into that interpreter. */
export function installCommand(interpreter: string): string {
  const quoted = /[\s"'$`\\]/.test(interpreter) ? `"${interpreter.replace(/(["\\$`])/g, "\\$1")}"` : interpreter;
  return `${quoted} -m pip install 'onnx-lint[server,runtime]'`;
}

/** The probe run before starting: exits 0 only when the server can be imported. */
export const PROBE_ARGUMENTS = ["-c", "import onnx_lint.server.server"];
