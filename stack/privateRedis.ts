// redis-server child processes of a test's or a chaos scenario's own, on spare ports: whatever
// stops Redis, flushes its scripts, locks it behind TLS or a password, or needs a Cluster,
// never does it to the shared server on 6379.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { freePort } from "../src/ops/freePort.js";

const run = promisify(execFile);

export interface PrivateRedis {
  readonly port: number;
  readonly url: string;
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: no persistence). */
  restart(): Promise<void>;
  /** SIGSTOP: the kernel still accepts connections on its port, nothing answers them. */
  freeze(): void;
  /** SIGCONT after freeze(). */
  thaw(): void;
  stop(): Promise<void>;
}

const redisCli = async (port: number, ...args: string[]) =>
  (await run("redis-cli", ["-p", String(port), ...args])).stdout;

async function until(what: string, ok: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await ok().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function spawnServer(port: number, dir: string, extra: readonly string[] = []): ChildProcess {
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

async function kill(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGKILL");
  await once(child, "exit");
}

export interface PrivateRedisOptions {
  /** TLS only (no plaintext port), clients not asked for certificates. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string; readonly caFile: string };
  /** An ACL user with every right; the default user is switched off. */
  readonly user?: { readonly name: string; readonly password: string };
}

export async function startPrivateRedis(o: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const dir = await mkdtemp(join(tmpdir(), "private-redis-"));
  const port = await freePort();
  const extra = [
    ...(o.tls
      ? [
          "--port",
          "0",
          "--tls-port",
          String(port),
          "--tls-cert-file",
          o.tls.certFile,
          "--tls-key-file",
          o.tls.keyFile,
        ]
      : []),
    ...(o.tls ? ["--tls-ca-cert-file", o.tls.caFile, "--tls-auth-clients", "no"] : []),
  ];
  if (o.user) {
    // ACL rules go in a file: a password on the command line would be visible in ps.
    await writeFile(
      join(dir, "users.acl"),
      `user default off\nuser ${o.user.name} on >${o.user.password} ~* &* +@all\n`,
    );
    extra.push("--aclfile", join(dir, "users.acl"));
  }
  const cliArgs = [
    ...(o.tls ? ["--tls", "--cacert", o.tls.caFile] : []),
    ...(o.user ? ["--user", o.user.name, "--pass", o.user.password, "--no-auth-warning"] : []),
  ];
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawnServer(port, dir, extra);
    await until(
      `redis-server on ${port}`,
      async () => (await redisCli(port, ...cliArgs, "ping")).trim() === "PONG",
    );
  };
  await start();
  return {
    port,
    url: `${o.tls ? "rediss" : "redis"}://${o.user ? `${o.user.name}@` : ""}127.0.0.1:${port}`,
    kill: () => kill(child),
    restart: start,
    freeze: () => child?.kill("SIGSTOP"),
    thaw: () => child?.kill("SIGCONT"),
    stop: async () => {
      await kill(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface PrivateRedisCluster {
  readonly ports: readonly number[];
  readonly url: string;
  /** Per slot (0..16383), the index in `ports` of the master serving it, as CLUSTER NODES says. */
  slotMasters(): Promise<Uint8Array>;
  killNode(index: number): Promise<void>;
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

/**
 * Three masters, no replicas, every slot assigned (`redis-cli --cluster create`), with
 * cluster-require-full-coverage off: the masters left keep serving their slots when one dies,
 * as a deployment that wants one node's failure to cost only that node's keys must run them
 * (with the default, every master refuses every command once the dead one is marked failed).
 */
export async function startPrivateRedisCluster(): Promise<PrivateRedisCluster> {
  const dir = await mkdtemp(join(tmpdir(), "private-redis-cluster-"));
  const ports: number[] = [];
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(children.map(kill));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freeClusterPort();
      ports.push(port);
      children.push(
        spawnServer(port, dir, [
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          `nodes-${port}.conf`,
          "--cluster-require-full-coverage",
          "no",
        ]),
      );
    }
    for (const port of ports)
      await until(`cluster node ${port}`, async () => (await redisCli(port, "ping")).trim() === "PONG");
    await run("redis-cli", [
      "--cluster",
      "create",
      ...ports.map((p) => `127.0.0.1:${p}`),
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    ]);
    for (const port of ports) {
      await until(`cluster_state:ok on ${port}`, async () =>
        (await redisCli(port, "cluster", "info")).includes("cluster_state:ok"),
      );
    }
    const slotMasters = async () => {
      const owners = new Uint8Array(16384).fill(255);
      // `<id> <ip:port@bus> <flags> <master> <ping> <pong> <epoch> <link> <slot ranges…>`
      for (const line of (await redisCli(ports[0]!, "cluster", "nodes")).split("\n")) {
        const fields = line.trim().split(" ");
        const index = ports.indexOf(Number(fields[1]?.split("@")[0]?.split(":")[1]));
        if (index < 0 || !fields[2]?.includes("master")) continue;
        for (const range of fields.slice(8)) {
          const [from, to = from] = range.split("-").map(Number);
          if (Number.isInteger(from) && Number.isInteger(to)) owners.fill(index, from, to! + 1);
        }
      }
      return owners;
    };
    return {
      ports,
      url: `redis://127.0.0.1:${ports[0]}`,
      slotMasters,
      killNode: (i) => kill(children[i]),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
