import { execFile } from "child_process";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification, ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions,
} from "vscode-languageclient/node";
import { chooseInterpreter, installAdvice, Interpreter, PROBE_ARGUMENTS, serverArguments } from "./interpreter";
import { withoutShownMessages } from "./hoverText";
import { progressInNotifications } from "./progress";
import { serverSettings } from "./settings";

/** Server commands that write files: refused in an untrusted workspace (VS Code workspace trust). */
export const WRITING_COMMANDS = new Set(["onnx-lint.fixAll", "onnx-lint.fix", "onnx-lint.fixRule", "onnx-lint.ignoreRule",
  "onnx-lint.quantize"]);
export const VIEW_SCHEME = "onnx-lint";

async function pythonExtensionInterpreter(): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension("ms-python.python");
  if (!extension) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    const active = api?.environments?.getActiveEnvironmentPath?.();
    if (active?.path) {
      return active.path as string;
    }
    const details = api?.settings?.getExecutionDetails?.();
    return details?.execCommand?.[0];
  } catch {
    return undefined;
  }
}

function probe(interpreter: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(interpreter, PROBE_ARGUMENTS, { timeout: 60_000 }, (error, _stdout, stderr) => {
      resolve(error ? (stderr.trim().split("\n").pop() || error.message) : undefined);
    });
  });
}

/** The language client and how it was started; `restart` picks up a changed interpreter. */
export class ServerConnection implements vscode.Disposable {
  client: LanguageClient | undefined;
  interpreter: Interpreter | undefined;
  private warnedMissing = false;
  private progress: vscode.Disposable | undefined;
  private readonly started = new vscode.EventEmitter<void>();
  readonly onDidStart = this.started.event;
  // A fix the server wrote (from the model view, a lightbulb or a command): every open view of that model
  // refreshes at once, without waiting for the file watcher (which can lag by seconds).
  private readonly wrote = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidWriteModel = this.wrote.event;

  constructor(private readonly output: vscode.LogOutputChannel) {}

  async start(): Promise<boolean> {
    const config = vscode.workspace.getConfiguration("onnxLint");
    this.interpreter = chooseInterpreter(config.get<string>("interpreter"), await pythonExtensionInterpreter());
    this.output.info(`using ${this.interpreter.command} (${this.interpreter.source})`);
    const problem = await probe(this.interpreter.command);
    if (problem !== undefined) {
      this.output.error(`cannot start the server: ${problem}`);
      if (!this.warnedMissing) {
        this.warnedMissing = true;
        const advice = installAdvice(this.interpreter.command);
        const choice = await vscode.window.showErrorMessage(
          `onnx-lint is not installed in ${this.interpreter.command} (${this.interpreter.source}). ${advice.message}`,
          "Copy command", "Open settings");
        if (choice === "Copy command") {
          await vscode.env.clipboard.writeText(advice.command);
        } else if (choice === "Open settings") {
          await vscode.commands.executeCommand("workbench.action.openSettings", "onnxLint.interpreter");
        }
      }
      return false;
    }
    const serverOptions: ServerOptions = {
      command: this.interpreter.command,
      args: serverArguments(config.get<string[]>("serverArgs") ?? []),
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file", pattern: "**/*.onnx" }, { scheme: VIEW_SCHEME }],
      outputChannel: this.output,
      // Trust travels beside the settings, never inside the onnxLint section a workspace's settings file fills.
      initializationOptions: { settings: serverSettings(config), workspaceTrusted: vscode.workspace.isTrusted },
      synchronize: { configurationSection: "onnxLint" },
      // The client pulls for the textual views; the model view fills the Problems panel for models.
      diagnosticPullOptions: {
        onTabs: true,
        onChange: false,
        onSave: false,
        match: (_selector, resource) => resource.scheme === VIEW_SCHEME,
      },
      middleware: {
        executeCommand: async (command, args, next) => {
          if (WRITING_COMMANDS.has(command) && !vscode.workspace.isTrusted) {
            void vscode.window.showWarningMessage("onnx-lint does not change files in an untrusted workspace.");
            return undefined;
          }
          try {
            return await next(command, args);
          } finally {
            this.written(command, args);
          }
        },
        provideHover: async (document, position, token, next) => {
          const hover = await next(document, position, token);
          const shown = vscode.languages.getDiagnostics(document.uri)
            .filter((d) => d.source === "onnx-lint" && d.range.contains(position)).map((d) => d.message.split("\n")[0]);
          if (!hover || shown.length === 0) {
            return hover;
          }
          const contents = hover.contents.map((part) => part instanceof vscode.MarkdownString
            ? new vscode.MarkdownString(withoutShownMessages(part.value, shown)) : part);
          return new vscode.Hover(contents, hover.range);
        },
        provideCodeActions: async (document, range, context, token, next) =>
          vscode.workspace.isTrusted ? next(document, range, context, token) : [],
      },
    };
    this.client = new LanguageClient("onnx-lint", "onnx-lint", serverOptions, clientOptions);
    await this.client.start();
    this.progress?.dispose();
    this.progress = progressInNotifications(this.client);
    this.started.fire();
    return true;
  }

  /** Tell the server the workspace became trusted: it then runs models again (runtime probe, checks). */
  async grantTrust(): Promise<void> {
    await this.client?.sendNotification(DidChangeConfigurationNotification.type, { settings: { workspaceTrusted: true } });
  }

  async restart(): Promise<void> {
    await this.stop();
    this.warnedMissing = false;
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      await client.stop();
    }
  }

  /** Run a server command (`workspace/executeCommand`); rejects with the server's message. */
  async command<T>(command: string, ...args: unknown[]): Promise<T> {
    if (!this.client) {
      throw new Error("the onnx-lint server is not running (see the onnx-lint output channel)");
    }
    if (WRITING_COMMANDS.has(command) && !vscode.workspace.isTrusted) {
      throw new Error("onnx-lint does not change files in an untrusted workspace");
    }
    try {
      return await (this.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }) as Promise<T>);
    } finally {
      this.written(command, args);
    }
  }

  private written(command: string, args: unknown[]): void {
    if (["onnx-lint.fix", "onnx-lint.fixAll", "onnx-lint.fixRule", "onnx-lint.ignoreRule"].includes(command) &&
        typeof args[0] === "string") {
      const uri = vscode.Uri.parse(args[0]);
      // A textual view's URI names its model with ".txt" appended.
      this.wrote.fire(uri.scheme === VIEW_SCHEME ? vscode.Uri.file(uri.path.replace(/\.txt$/, "")) : uri);
    }
  }

  dispose(): void {
    void this.stop();
    this.started.dispose();
    this.wrote.dispose();
  }
}
