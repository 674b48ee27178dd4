// How the extension starts, stops and restarts its language server, kept apart from VS Code so that the node
// unit tests drive it: exactly one server after any sequence of restarts, whatever the old server does.

/** A running server as the lifecycle sees it. */
export interface ServerHandle {
  /** Shut the server down (`shutdown`, `exit`); rejects when it has not answered within `timeoutMs`. */
  stop(timeoutMs: number): Promise<void>;
  /** End its process at once: a server that did not stop in time must not outlive the restart. */
  kill(): void;
}

/** How long a server may take to answer `shutdown` (vscode-languageclient's own default is 2 s: a server
 * busy converting a 100k-node model's findings could miss it, and the restart then started nothing). */
export const STOP_TIMEOUT_MS = 10_000;

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Starts, stops and restarts run one at a time, in the order asked: a restart asked while another runs
 * waits for it (two interleaved restarts each started a server, and the one not kept kept running), and a
 * restart always ends by starting a server, even when the old one failed to stop (it is killed instead).
 */
export class OneServer<S extends ServerHandle> {
  private current: S | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly create: () => Promise<S | undefined>,
    private readonly log: (message: string) => void,
    private readonly stopTimeoutMs = STOP_TIMEOUT_MS,
  ) {}

  /** The running server, if any (undefined while a start or a restart is under way). */
  get server(): S | undefined {
    return this.current;
  }

  /** The server once every start, stop and restart asked so far has finished. */
  async ready(): Promise<S | undefined> {
    await this.queue;
    return this.current;
  }

  /** Start a server unless one runs. */
  start(): Promise<S | undefined> {
    return this.serially(async () => this.current ?? await this.startNow());
  }

  stop(): Promise<void> {
    return this.serially(() => this.stopNow());
  }

  /** Stop the running server (killing it if it does not stop in time), then start a new one. */
  restart(): Promise<S | undefined> {
    return this.serially(async () => {
      await this.stopNow();
      return this.startNow();
    });
  }

  private serially<T>(step: () => Promise<T>): Promise<T> {
    const run = this.queue.then(step);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async stopNow(): Promise<void> {
    const server = this.current;
    this.current = undefined;
    if (!server) {
      return;
    }
    try {
      await server.stop(this.stopTimeoutMs);
    } catch (error) {
      this.log(`the server did not stop cleanly (${reason(error)}); ending its process`);
      server.kill();
    }
  }

  private async startNow(): Promise<S | undefined> {
    try {
      this.current = await this.create();
    } catch (error) {
      this.log(`cannot start the server: ${reason(error)}`);
      this.current = undefined;
    }
    return this.current;
  }
}
