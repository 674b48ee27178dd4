import { ChildProcess, execFile } from "child_process";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification, ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions, State,
} from "vscode-languageclient/node";
import * as names from "./commandNames";
import { ServerCommand } from "./commandNames";
import { chooseInterpreter, installAdvice, Interpreter, PROBE_ARGUMENTS, serverArguments } from "./interpreter";
import { withoutShownMessages } from "./hoverText";
import { progressInNotifications } from "./progress";
import { OneServer, ServerHandle } from "./serverLifecycle";
import { serverSettings } from "./settings";

/** Server commands that write files: refused in an untrusted workspace (VS Code workspace trust). */
export const WRITING_COMMANDS: ReadonlySet<string> = new Set<string>(names.WRITING_COMMANDS);
const CHANGING_MODEL: ReadonlySet<string> = new Set<string>(names.CHANGING_MODEL);
export const VIEW_SCHEME = "onnx-lint";

/** A started language client, as the lifecycle stops or kills it. */
class RunningServer implements ServerHandle {
  private process: ChildProcess | undefined;

  constructor(readonly client: LanguageClient) {}

  async stop(timeoutMs: number): Promise<void> {
    if (this.client.state === State.Starting) {
      // Restarting a server that crashed (the client's own restart): stop() refuses a starting client, and the
      // server it was starting would run on unseen.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, timeoutMs);
        const watch = this.client.onDidChangeState((event) => event.newState !== State.Starting && done());
        function done() {
          clearTimeout(timer);
          watch.dispose();
          resolve();
        }
      });
    }
    this.process = this.client.serverProcess;  // the client forgets its process once stop() settles
    await this.client.stop(timeoutMs);
  }

  kill(): void {
    // A server that did not answer `shutdown` in time must not outlive the restart (its workers die with it).
    const process = this.process ?? this.client.serverProcess;
    if (process && process.exitCode === null && process.signalCode === null) {
      process.kill("SIGKILL");
    }
  }
}

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

/** The language client and how it was started; `restart` picks up a changed interpreter. Starts, stops and
 * restarts run one at a time, and a restart always ends with one server (`OneServer`). */
export class ServerConnection implements vscode.Disposable {
  interpreter: Interpreter | undefined;
  private readonly servers: OneServer<RunningServer>;
  private warnedMissing = false;
  private progress: vscode.Disposable | undefined;
  private readonly started = new vscode.EventEmitter<void>();
  readonly onDidStart = this.started.event;
  // A fix the server wrote (from the model view, a lightbulb or a command): every open view of that model
  // refreshes at once, without waiting for the file watcher (which can lag by seconds).
  private readonly wrote = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidWriteModel = this.wrote.event;

  constructor(private readonly output: vscode.LogOutputChannel) {
    this.servers = new OneServer(() => this.launch(), (message) => this.output.warn(message));
  }

  /** The running language client (undefined while none runs, or while a restart is under way). */
  get client(): LanguageClient | undefined {
    return this.servers.server?.client;
  }

  async start(): Promise<boolean> {
    return (await this.servers.start()) !== undefined;
  }

  /** Stop the server and start it again (a changed interpreter or server arguments are picked up). */
  async restart(): Promise<boolean> {
    this.warnedMissing = false;
    return (await this.servers.restart()) !== undefined;
  }

  async stop(): Promise<void> {
    await this.servers.stop();
  }

  /** A new server: undefined when onnx-lint is missing from the interpreter (the user is told what to do). */
  private async launch(): Promise<RunningServer | undefined> {
    const config = vscode.workspace.getConfiguration("onnxLint");
    this.interpreter = chooseInterpreter(config.get<string>("interpreter"), await pythonExtensionInterpreter());
    this.output.info(`using ${this.interpreter.command} (${this.interpreter.source})`);
    const problem = await probe(this.interpreter.command);
    if (problem !== undefined) {
      this.output.error(`cannot start the server: ${problem}`);
      if (!this.warnedMissing) {
        this.warnedMissing = true;
        // Not awaited: a notification left open must not hold up the next restart, nor the commands waiting on it.
        void this.adviseInstall(this.interpreter);
      }
      return undefined;
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
    const client = new LanguageClient("onnx-lint", "onnx-lint", serverOptions, clientOptions);
    const running = new RunningServer(client);
    try {
      await client.start();
    } catch (error) {
      running.kill();  // a server that failed to initialize is not left behind
      throw error;
    }
    this.progress?.dispose();
    this.progress = progressInNotifications(client);
    // Fired once the lifecycle holds the new client, so that a view re-rendering on it finds it.
    void this.servers.ready().then((server) => server === running && this.started.fire());
    return running;
  }

  private async adviseInstall(interpreter: Interpreter): Promise<void> {
    const advice = installAdvice(interpreter.command);
    const choice = await vscode.window.showErrorMessage(
      `onnx-lint is not installed in ${interpreter.command} (${interpreter.source}). ${advice.message}`,
      "Copy command", "Open settings");
    if (choice === "Copy command") {
      await vscode.env.clipboard.writeText(advice.command);
    } else if (choice === "Open settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "onnxLint.interpreter");
    }
  }

  /** Tell the server the workspace became trusted: it then runs models again (runtime probe, checks). */
  async grantTrust(): Promise<void> {
    const client = (await this.servers.ready())?.client;
    await client?.sendNotification(DidChangeConfigurationNotification.type, { settings: { workspaceTrusted: true } });
  }

  /** Run a server command (`workspace/executeCommand`); rejects with the server's message. A command asked
   * during a restart goes to the new server. */
  async command<T>(command: ServerCommand, ...args: unknown[]): Promise<T> {
    if (WRITING_COMMANDS.has(command) && !vscode.workspace.isTrusted) {
      throw new Error("onnx-lint does not change files in an untrusted workspace");
    }
    const client = (await this.servers.ready())?.client;
    if (!client) {
      throw new Error("the onnx-lint server is not running (see the onnx-lint output channel)");
    }
    try {
      return await (client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }) as Promise<T>);
    } finally {
      this.written(command, args);
    }
  }

  private written(command: string, args: unknown[]): void {
    if (CHANGING_MODEL.has(command) && typeof args[0] === "string") {
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
