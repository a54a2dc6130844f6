// `node bin/fraud-scorer.js serve` as a child process, logging to a file, ready when its /readyz
// says so (model verified and warm, schemas registered, group joined). The demo, the benchmarks
// and the integration tests all run the real scorer this way (so SIGTERM and SIGKILL are real).
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { openSync, closeSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

export class ScorerChild {
  readonly #child: ChildProcess;
  readonly #logFile: string;
  readonly port: number;

  private constructor(child: ChildProcess, port: number, logFile: string) {
    this.#child = child;
    this.port = port;
    this.#logFile = logFile;
  }

  static async start({
    root = process.cwd(),
    env,
    logFile = join(tmpdir(), `fraud-scorer-${process.pid}-${Date.now()}.log`),
    readyTimeoutMs = 120_000,
  }: ScorerChildOptions): Promise<ScorerChild> {
    const port = await freePort();
    const log = openSync(logFile, "a");
    const child = spawn(process.execPath, ["bin/fraud-scorer.js", "serve"], {
      cwd: root,
      env: { ...process.env, ...env, HTTP_PORT: String(port), HTTP_HOST: "127.0.0.1" },
      stdio: ["ignore", log, log],
    });
    closeSync(log);
    const scorer = new ScorerChild(child, port, logFile);
    await scorer.#waitReady(readyTimeoutMs);
    return scorer;
  }

  logTail(lines = 20): string {
    try {
      return readFileSync(this.#logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
    } catch {
      return "";
    }
  }

  async #waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.#child.exitCode !== null)
        throw new Error(
          `the scorer exited with ${this.#child.exitCode} before it was ready:\n${this.logTail()}`,
        );
      try {
        if ((await fetch(`http://127.0.0.1:${this.port}/readyz`)).status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    await this.stop();
    throw new Error(`the scorer was not ready after ${timeoutMs / 1000} s:\n${this.logTail()}`);
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

  /** SIGTERM (the default): it drains, commits and leaves the group. SIGKILL: a crash. */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return this.#child.exitCode;
    this.#child.kill(signal);
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), 30_000);
    const [code] = (await once(this.#child, "exit")) as [number | null];
    clearTimeout(timer);
    return code;
  }
}
