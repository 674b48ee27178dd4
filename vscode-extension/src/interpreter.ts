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

function quoted(interpreter: string): string {
  return /[\s"'$`\\]/.test(interpreter) ? `"${interpreter.replace(/(["\\$`])/g, "\\$1")}"` : interpreter;
}

/** The exact command that installs what the extension needs into that interpreter's environment. */
export function installCommand(interpreter: string): string {
  return `${quoted(interpreter)} -m pip install 'onnx-lint[server,runtime]'`;
}

/** Whether an interpreter lives in a virtual environment (venv, virtualenv, conda, pipx), where pip may install. */
export function inVirtualEnvironment(interpreter: string): boolean {
  return /[\\/](\.?venv[^\\/]*|virtualenvs|envs|pipx[\\/]venvs)[\\/]/.test(interpreter);
}

export interface InstallAdvice {
  message: string;
  command: string;
}

/**
 * What to tell a user whose interpreter lacks onnx-lint. A system Python refuses `pip install` (PEP 668,
 * "externally managed"), so there the advice is a virtual environment of its own, then that interpreter.
 */
export function installAdvice(interpreter: string): InstallAdvice {
  if (inVirtualEnvironment(interpreter)) {
    const command = installCommand(interpreter);
    return { command, message: `Install it there with: ${command}` };
  }
  const command = "python3 -m venv .venv && .venv/bin/python -m pip install 'onnx-lint[server,runtime]'";
  return {
    command,
    message: `Install it in a virtual environment (${command}) and choose .venv/bin/python as onnxLint.interpreter ` +
      "(or select it in the Python extension); or with pipx (pipx install 'onnx-lint[server,runtime]') and choose " +
      "its interpreter (~/.local/share/pipx/venvs/onnx-lint/bin/python).",
  };
}

/** The probe run before starting: exits 0 only when the server can be imported. */
export const PROBE_ARGUMENTS = ["-c", "import onnx_lint.server.server"];
