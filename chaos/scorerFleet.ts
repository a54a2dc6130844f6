// The scorers of one scenario: `fraud-scorer serve` child processes sharing one environment
// (topics, group, state namespace, HMAC key), each logging to its own file in the run's log
// folder so the suite can read every line any of them wrote.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ScorerChild, scorerEnvironment } from "../src/tools/scorerChild.js";
import type { RunTopics } from "./runTopics.js";

export interface FleetOptions {
  readonly root: string;
  readonly logDir: string;
  readonly kafkaBrokers: string;
  readonly schemaRegistryUrl: string;
  readonly redisUrl: string;
  readonly topics: RunTopics;
  readonly modelDir: string;
  readonly overrides?: Record<string, string>;
}

export class ScorerFleet {
  readonly hmacKeyHex = randomBytes(32).toString("hex");
  readonly namespace: string;
  readonly env: Record<string, string>;
  readonly logFiles: string[] = [];
  readonly #options: FleetOptions;
  readonly #running = new Map<string, ScorerChild>();
  #starts = 0;
  #unplannedRestarts = 0;

  constructor(options: FleetOptions) {
    this.#options = options;
    this.namespace = `chaos-${options.topics.transactions.slice("chaos-tx-".length)}`;
    this.env = scorerEnvironment({
      kafkaBrokers: options.kafkaBrokers,
      schemaRegistryUrl: options.schemaRegistryUrl,
      redisUrl: options.redisUrl,
      topics: options.topics,
      groupId: `chaos-${options.topics.transactions}`,
      namespace: this.namespace,
      modelDir: options.modelDir,
      hmacKeyHex: this.hmacKeyHex,
      overrides: { LOG_LEVEL: "info", ...options.overrides },
    });
  }

  /**
   * Starts instance `name` (again, after a kill: same static-membership id, so with the Kafka
   * port's static membership it takes its partitions straight back).
   */
  async start(name: string, extraEnv: Record<string, string> = {}): Promise<ScorerChild> {
    const logFile = join(this.#options.logDir, `${name}-${++this.#starts}.log`);
    this.logFiles.push(logFile);
    const child = await ScorerChild.start({
      root: this.#options.root,
      logFile,
      env: { ...this.env, KAFKA_GROUP_INSTANCE_ID: `${this.namespace}-${name}`, ...extraEnv },
    });
    this.#running.set(name, child);
    return child;
  }

  /**
   * Restarts an instance whose health endpoint stops answering, as an orchestrator would (a
   * scorer exits on purpose when Kafka stays unreachable). Returns the function that ends it.
   */
  supervise(intervalMs = 1_000): () => Promise<void> {
    let stopped = false;
    const loop = (async () => {
      const failures = new Map<string, number>();
      while (!stopped) {
        await sleep(intervalMs);
        for (const name of await this.dead()) {
          if (stopped || !this.#running.has(name)) continue;
          const count = (failures.get(name) ?? 0) + 1;
          failures.set(name, count);
          if (count < 2) continue;
          failures.delete(name);
          await this.stop(name, "SIGKILL");
          this.#unplannedRestarts++;
          // Like an orchestrator's restart policy: a start that fails (Kafka still coming back)
          // is tried again, with a growing pause, rather than leaving the instance down for good.
          for (let pauseMs = 1_000; !stopped; pauseMs = Math.min(pauseMs * 2, 10_000)) {
            if (
              await this.start(name).then(
                () => true,
                () => false,
              )
            )
              break;
            await sleep(pauseMs);
          }
        }
      }
    })();
    return async () => {
      stopped = true;
      await loop;
    };
  }

  /** Restarts the supervisor made because an instance had died or hung. */
  get unplannedRestarts(): number {
    return this.#unplannedRestarts;
  }

  instance(name: string): ScorerChild | undefined {
    return this.#running.get(name);
  }

  /** Instances whose health endpoint no longer answers: crashed, since the suite stopped none of them. */
  async dead(): Promise<string[]> {
    const dead: string[] = [];
    for (const [name, child] of this.#running) {
      const ok = await fetch(`http://127.0.0.1:${child.port}/healthz`, { signal: AbortSignal.timeout(5_000) })
        .then((r) => r.status < 500)
        .catch(() => false);
      if (!ok) dead.push(name);
    }
    return dead;
  }

  running(): string[] {
    return [...this.#running.keys()];
  }

  async stop(name: string, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const child = this.#running.get(name);
    this.#running.delete(name);
    await child?.stop(signal);
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.running().map((name) => this.stop(name)));
  }
}
