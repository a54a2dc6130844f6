// Private redis-server child processes for tests that stop Redis, flush its scripts or need a
// Cluster: things a test must never do to the shared server.
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort } from "../../../src/ops/freePort.js";

const run = promisify(execFile);

export interface ThrowawayRedis {
  readonly port: number;
  stop(): Promise<void>;
}

export interface ThrowawayCluster {
  readonly ports: readonly number[];
  stop(): Promise<void>;
}

/** A port whose cluster-bus companion (port + 10000) is free too. */
async function freeClusterPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10_000 > 65_535) continue;
    const bus = createServer();
    const free = await new Promise<boolean>((resolve) => {
      bus.once("error", () => resolve(false));
      bus.listen(port + 10_000, "127.0.0.1", () => resolve(true));
    });
    if (free) {
      bus.close();
      await once(bus, "close");
      return port;
    }
  }
}

async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run("redis-cli", ["-p", String(port), ...args]);
  return stdout;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function spawnServer(port: number, dir: string, extra: string[] = []): ChildProcess {
  return spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
      ...extra,
    ],
    { stdio: "ignore" },
  );
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGKILL");
  await once(child, "exit");
}

/** On `port` when given (to restart a stopped one where its clients expect it). */
export async function startThrowawayRedis({ port: wanted }: { port?: number } = {}): Promise<ThrowawayRedis> {
  const dir = await mkdtemp(join(tmpdir(), "redis-"));
  const port = wanted ?? (await freePort());
  const child = spawnServer(port, dir);
  await waitFor(`redis-server on ${port}`, async () => (await redisCli(port, "ping")).trim() === "PONG");
  return {
    port,
    stop: async () => {
      await stopServer(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Three masters, no replicas, all slots assigned. */
export async function startThrowawayCluster(): Promise<ThrowawayCluster> {
  const dir = await mkdtemp(join(tmpdir(), "redis-cluster-"));
  const ports: number[] = [];
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(children.map(stopServer));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freeClusterPort();
      ports.push(port);
      children.push(
        spawnServer(port, dir, ["--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`]),
      );
    }
    for (const port of ports) {
      await waitFor(`cluster node on ${port}`, async () => (await redisCli(port, "ping")).trim() === "PONG");
    }
    await run("redis-cli", [
      "--cluster",
      "create",
      ...ports.map((p) => `127.0.0.1:${p}`),
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    ]);
    for (const port of ports) {
      await waitFor(`cluster_state:ok on ${port}`, async () =>
        (await redisCli(port, "cluster", "info")).includes("cluster_state:ok"),
      );
    }
    return { ports, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
