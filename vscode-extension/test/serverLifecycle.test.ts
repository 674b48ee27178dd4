// "onnx-lint: Restart server" always ends with one running server (`npm test`): the lifecycle the extension's
// client uses, driven with fake servers that stop slowly, fail to stop, or fail to start.
import assert from "node:assert/strict";
import { test } from "node:test";
import { OneServer, ServerHandle } from "../src/serverLifecycle";

/** A fake server process: running from creation until it is stopped or killed. */
class FakeServer implements ServerHandle {
  running = true;
  killed = false;

  constructor(readonly id: number, private readonly stopMs: number, private readonly answersShutdown = true) {}

  async stop(timeoutMs: number): Promise<void> {
    if (!this.answersShutdown || this.stopMs > timeoutMs) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(this.stopMs, timeoutMs)));
      throw new Error("Stopping the server timed out");  // as vscode-languageclient says it
    }
    await new Promise((resolve) => setTimeout(resolve, this.stopMs));
    this.running = false;
  }

  kill(): void {
    this.running = false;
    this.killed = true;
  }
}

function servers(options: { stopMs?: number; answersShutdown?: boolean; failStarts?: number[] } = {}) {
  const made: FakeServer[] = [];
  const logged: string[] = [];
  const lifecycle = new OneServer<FakeServer>(async () => {
    const id = made.length + 1;
    await new Promise((resolve) => setTimeout(resolve, 5));  // starting takes a while: restarts can overlap it
    if (options.failStarts?.includes(id)) {
      made.push(new FakeServer(id, 0));
      made[id - 1].running = false;
      throw new Error("initialize failed");
    }
    const server = new FakeServer(id, options.stopMs ?? 5, options.answersShutdown ?? true);
    made.push(server);
    return server;
  }, (message) => logged.push(message), 50);
  const running = () => made.filter((s) => s.running).map((s) => s.id);
  return { lifecycle, made, logged, running };
}

test("a restart stops the running server before the new one starts", async () => {
  const { lifecycle, running } = servers();
  await lifecycle.start();
  assert.deepEqual(running(), [1]);
  const server = await lifecycle.restart();
  assert.equal(server?.id, 2);
  assert.deepEqual(running(), [2]);
  assert.equal(lifecycle.server?.id, 2);
});

test("restarts asked while another runs (the user clicks twice, a setting changes) leave one server", async () => {
  const { lifecycle, running, made } = servers({ stopMs: 20 });
  await lifecycle.start();
  await Promise.all([lifecycle.restart(), lifecycle.restart(), lifecycle.restart(), lifecycle.start()]);
  assert.deepEqual(running(), [4], `servers still running: ${running()}`);
  assert.equal(made.length, 4);  // each restart replaced the one before it; the start found one running
  assert.equal(lifecycle.server?.id, 4);
});

test("a server that does not answer shutdown in time is killed and the restart still starts one", async () => {
  const { lifecycle, running, made, logged } = servers({ answersShutdown: false });
  await lifecycle.start();
  const server = await lifecycle.restart();
  assert.equal(server?.id, 2);
  assert.ok(made[0].killed, "the old server was left running");
  assert.deepEqual(running(), [2]);
  assert.match(logged.join("\n"), /did not stop cleanly \(Stopping the server timed out\); ending its process/);
});

test("a failed start leaves no server, and the next restart starts one", async () => {
  const { lifecycle, running, logged } = servers({ failStarts: [2] });
  await lifecycle.start();
  assert.equal(await lifecycle.restart(), undefined);
  assert.deepEqual(running(), []);
  assert.match(logged.join("\n"), /cannot start the server: initialize failed/);
  assert.equal((await lifecycle.restart())?.id, 3);
  assert.deepEqual(running(), [3]);
});

test("a request waiting for the server during a restart gets the new one", async () => {
  const { lifecycle } = servers({ stopMs: 20 });
  await lifecycle.start();
  const restarted = lifecycle.restart();
  await new Promise((resolve) => setTimeout(resolve, 1));
  assert.equal(lifecycle.server, undefined);  // the old one is being stopped: nobody may use it now
  const ready = await lifecycle.ready();
  assert.equal(ready?.id, 2);
  assert.equal((await restarted)?.id, 2);
});
