// `fraud-scorer serve` as the product runs: a child process configured through its environment,
// logging to a file. Unlike src/demo/scorerChild.ts (which only waits for ready), its start is
// timed, /readyz polled every 20 ms, from spawn to each readiness condition it reports met
// (model verified, model warm, schemas registered, group joined) and to ready: the cold-start
// section is made of these timelines.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { closeSync, openSync, readFileSync } from "node:fs";
import { scorerEnvironment } from "../../src/demo/scorerChild.js";
import { freePort } from "../../src/ops/freePort.js";
import type { StackEndpoints } from "./stackEndpoints.js";
import type { BenchTopics } from "./benchKafka.js";

export const MODEL_DIR = "models/fraud-lstm/1.0.0";

export interface ScorerEnvOptions {
  readonly endpoints: StackEndpoints;
  readonly topics: BenchTopics;
  /** Card-state key namespace: one per scorer whose topics are new (offsets restart at 0). */
  readonly namespace: string;
  readonly overrides?: Record<string, string>;
}

export function scorerEnv({ endpoints, topics, namespace, overrides = {} }: ScorerEnvOptions) {
  return scorerEnvironment({
    kafkaBrokers: endpoints.kafkaBrokers,
    schemaRegistryUrl: endpoints.schemaRegistryUrl,
    redisUrl: endpoints.redisUrl,
    topics,
    groupId: `scorer-${topics.transactions}`,
    namespace,
    modelDir: MODEL_DIR,
    hmacKeyHex: randomBytes(32).toString("hex"),
    // Short-lived: whatever a crashed run leaves behind expires on its own.
    overrides: { KAFKA_CLIENT_ID: "fraud-scorer-bench", STATE_TTL_MS: "900000", ...overrides },
  });
}

/** Milliseconds from spawn to each event of the start. */
export interface StartTimeline {
  readonly healthListeningMs: number;
  readonly conditionsMetMs: Readonly<Record<string, number>>;
  readonly readyMs: number;
}

const READY_POLL_MS = 20;

export class ScorerProcess {
  readonly #child: ChildProcess;
  readonly port: number;
  readonly timeline: StartTimeline;
  /** performance.now() at spawn; the timeline counts from here. */
  readonly spawnedAt: number;

  private constructor(child: ChildProcess, port: number, spawnedAt: number, timeline: StartTimeline) {
    this.#child = child;
    this.port = port;
    this.spawnedAt = spawnedAt;
    this.timeline = timeline;
  }

  static async start({
    root,
    env,
    logFile,
    readyTimeoutMs = 120_000,
  }: {
    root: string;
    env: Record<string, string>;
    logFile: string;
    readyTimeoutMs?: number;
  }): Promise<ScorerProcess> {
    const port = await freePort();
    const log = openSync(logFile, "a");
    const spawnedAt = performance.now();
    const child = spawn(process.execPath, ["bin/fraud-scorer.js", "serve"], {
      cwd: root,
      env: { ...process.env, ...env, HTTP_PORT: String(port), HTTP_HOST: "127.0.0.1" },
      stdio: ["ignore", log, log],
    });
    closeSync(log);
    try {
      const timeline = await waitReady(child, port, spawnedAt, readyTimeoutMs, logFile);
      return new ScorerProcess(child, port, spawnedAt, timeline);
    } catch (err) {
      child.kill("SIGKILL");
      throw err;
    }
  }

  /** SIGTERM (drain, commit, leave the group); SIGKILL when it takes longer than graceMs. */
  async stop(graceMs = 20_000): Promise<void> {
    const child = this.#child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  }
}

async function waitReady(
  child: ChildProcess,
  port: number,
  spawnedAt: number,
  timeoutMs: number,
  logFile: string,
): Promise<StartTimeline> {
  const since = () => Math.round((performance.now() - spawnedAt) * 10) / 10;
  const conditionsMetMs: Record<string, number> = {};
  // What `serve` waits for (src/ops/readiness.ts); other names are picked up as reported.
  const pending = new Set(["modelVerified", "modelWarm", "schemasRegistered", "groupJoined"]);
  let healthListeningMs: number | undefined;
  const deadline = spawnedAt + timeoutMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(
        `scorer exited (${child.exitCode ?? child.signalCode}) before ready:\n${tail(logFile)}`,
      );
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) });
      const at = since();
      healthListeningMs ??= at;
      const { reasons = [] } = (await res.json()) as { reasons?: string[] };
      const unmet = new Set(reasons.map((r) => r.split(":", 1)[0]!));
      for (const name of pending) if (!unmet.has(name)) conditionsMetMs[name] ??= at;
      for (const name of unmet) pending.add(name);
      if (res.status === 200)
        return { healthListeningMs, conditionsMetMs: { ...conditionsMetMs }, readyMs: at };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, READY_POLL_MS));
  }
  throw new Error(`scorer not ready after ${timeoutMs} ms:\n${tail(logFile)}`);
}

const tail = (file: string) => {
  try {
    return readFileSync(file, "utf8").slice(-3000);
  } catch {
    return "(no log)";
  }
};
