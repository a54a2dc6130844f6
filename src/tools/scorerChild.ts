// `node bin/fraud-scorer.js serve` as a child process, logging to a file, ready when its /readyz
// says so (model verified and warm, schemas registered, group joined), with the time from spawn
// to each of those. The demo, the benchmarks and the integration tests all run the real scorer
// this way (so SIGTERM and SIGKILL are real), and only this way.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { openSync, closeSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort } from "../ops/freePort.js";

export interface ScorerEnvironmentOptions {
  readonly kafkaBrokers: string;
  readonly schemaRegistryUrl: string;
  readonly redisUrl: string;
  readonly topics: { readonly transactions: string; readonly decisions: string; readonly dlq: string };
  readonly groupId: string;
  /** Card-state key namespace; a fresh one per set of new topics (offsets restart at 0). */
  readonly namespace: string;
  readonly modelDir: string;
  /** Signs card state; ephemeral keys die with the run that made them. */
  readonly hmacKeyHex: string;
  readonly overrides?: Record<string, string>;
}

/** The environment a scorer child runs with: the one place the demo, benchmarks and tests build it. */
export function scorerEnvironment(o: ScorerEnvironmentOptions): Record<string, string> {
  return {
    KAFKA_BROKERS: o.kafkaBrokers,
    SCHEMA_REGISTRY_URL: o.schemaRegistryUrl,
    REDIS_URL: o.redisUrl,
    KAFKA_TRANSACTIONS_TOPIC: o.topics.transactions,
    KAFKA_DECISIONS_TOPIC: o.topics.decisions,
    KAFKA_DLQ_TOPIC: o.topics.dlq,
    // A run's own control topic: a promotion made on the shared stack never switches it.
    KAFKA_CONTROL_TOPIC: `${o.topics.transactions}.control`,
    KAFKA_GROUP_ID: o.groupId,
    REDIS_NAMESPACE: o.namespace,
    MODEL_DIR: o.modelDir,
    MODEL_PROVIDER: "cpu",
    STATE_HMAC_KEY: o.hmacKeyHex,
    LOG_LEVEL: "warn",
    ...o.overrides,
  };
}

export interface ScorerChildOptions {
  /** The repository root (where bin/ is); the current directory by default. */
  readonly root?: string;
  readonly env: Record<string, string>;
  /** A temporary file by default. */
  readonly logFile?: string;
  readonly readyTimeoutMs?: number;
}

/** Milliseconds from spawn to each event of the start. */
export interface StartTimeline {
  readonly healthListeningMs: number;
  /**
   * Each readiness condition /readyz reported (model verified, warm, …), when first met: by the
   * scorer's own clock (ms since its process started) when it says, which a poll answered late
   * by a busy start-up would overstate; else when a poll first saw it.
   */
  readonly conditionsMetMs: Readonly<Record<string, number>>;
  readonly readyMs: number;
}

// Often enough to time a start (the cold-start bench reads the timeline), cheap for a loopback GET.
const READY_POLL_MS = 20;
// What `serve` waits for (src/ops/readiness.ts); other names are picked up as /readyz reports them.
const SERVE_CONDITIONS = ["modelVerified", "modelWarm", "schemasRegistered", "groupJoined"];

export class ScorerChild {
  readonly #child: ChildProcess;
  readonly #logFile: string;
  readonly port: number;
  /** performance.now() at spawn; the timeline counts from here. */
  readonly spawnedAt: number;
  readonly timeline: StartTimeline;

  private constructor(
    child: ChildProcess,
    port: number,
    logFile: string,
    spawnedAt: number,
    timeline: StartTimeline,
  ) {
    this.#child = child;
    this.port = port;
    this.#logFile = logFile;
    this.spawnedAt = spawnedAt;
    this.timeline = timeline;
  }

  /** The process's id: serve starts itself again with its Node flags in place (execve), same pid. */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  static async start({
    root = process.cwd(),
    env,
    logFile = join(tmpdir(), `fraud-scorer-${process.pid}-${Date.now()}.log`),
    readyTimeoutMs = 120_000,
  }: ScorerChildOptions): Promise<ScorerChild> {
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
      const timeline = await waitReady(child, port, spawnedAt, readyTimeoutMs, () => logTail(logFile));
      return new ScorerChild(child, port, logFile, spawnedAt, timeline);
    } catch (err) {
      child.kill("SIGKILL");
      throw err;
    }
  }

  logTail(lines = 20): string {
    return logTail(this.#logFile, lines);
  }

  async metricsText(): Promise<string> {
    return (await fetch(`http://127.0.0.1:${this.port}/metrics`)).text();
  }

  /** The sum of a metric's series whose labels include `labels`. */
  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    let total = 0;
    for (const line of (await this.metricsText()).split("\n")) {
      const m = /^(\w+)(\{[^}]*\})?\s+(\S+)$/.exec(line);
      if (!m || m[1] !== name) continue;
      const labelText = m[2] ?? "";
      if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) total += Number(m[3]);
    }
    return total;
  }

  /** Resolves once the metric (summed as `metric` sums it) reaches `atLeast`; throws after `timeoutMs`. */
  async waitForMetric(
    name: string,
    labels: Record<string, string>,
    atLeast: number,
    timeoutMs = 60_000,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((await this.metric(name, labels)) < atLeast) {
      if (Date.now() > deadline) throw new Error(`${name}${JSON.stringify(labels)} never reached ${atLeast}`);
      await sleep(100);
    }
  }

  /** Runs `body`; a failure carries the log's tail, which is where the scorer says why. */
  async withLogTail<T>(body: () => Promise<T>, lines = 60): Promise<T> {
    try {
      return await body();
    } catch (err) {
      (err as Error).message += `\n--- scorer log (tail) ---\n${this.logTail(lines)}`;
      throw err;
    }
  }

  /** Resolves with the exit code once the process has ended, by itself or stopped. */
  exited(): Promise<number | null> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null)
      return Promise.resolve(this.#child.exitCode);
    return once(this.#child, "exit").then(([code]) => code as number | null);
  }

  /**
   * SIGTERM (the default): it drains, commits and leaves the group; SIGKILL after `graceMs`.
   * SIGKILL: a crash.
   */
  async stop(signal: NodeJS.Signals = "SIGTERM", { graceMs = 30_000 } = {}): Promise<number | null> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return this.#child.exitCode;
    const exited = once(this.#child, "exit");
    this.#child.kill(signal);
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), graceMs);
    const [code] = (await exited) as [number | null];
    clearTimeout(timer);
    return code;
  }
}

async function waitReady(
  child: ChildProcess,
  port: number,
  spawnedAt: number,
  timeoutMs: number,
  logTail: () => string,
): Promise<StartTimeline> {
  const since = () => Math.round((performance.now() - spawnedAt) * 10) / 10;
  const conditionsMetMs: Record<string, number> = {};
  const pending = new Set(SERVE_CONDITIONS);
  let healthListeningMs: number | undefined;
  const deadline = spawnedAt + timeoutMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(
        `the scorer exited with ${child.exitCode ?? child.signalCode} before it was ready:\n${logTail()}`,
      );
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) });
      const at = since();
      healthListeningMs ??= at;
      const { reasons = [], firstMetMs = {} } = (await res.json()) as {
        reasons?: string[];
        firstMetMs?: Record<string, number>;
      };
      const unmet = new Set(reasons.map((r) => r.split(":", 1)[0]!));
      for (const name of pending) if (!unmet.has(name)) conditionsMetMs[name] ??= firstMetMs[name] ?? at;
      for (const name of unmet) pending.add(name);
      if (res.status === 200)
        return { healthListeningMs, conditionsMetMs: { ...conditionsMetMs }, readyMs: at };
    } catch {
      // not listening yet
    }
    await sleep(READY_POLL_MS);
  }
  throw new Error(`the scorer was not ready after ${timeoutMs / 1000} s:\n${logTail()}`);
}

function logTail(file: string, lines = 20): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
