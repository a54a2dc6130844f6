// What every section of a run shares: the plan, the stack, a per-run id (topic, group and
// Redis-namespace names carry it), one stream of simulated transactions, a scratch directory
// for scorer logs, and the clean-up of whatever the run created.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import type { Kafka } from "kafkajs";
import { simulatedTraffic, sliceOf, type TrafficSource } from "../../src/tools/traffic/trafficSource.js";
import type { KafkaPort } from "../../src/stream/kafkaPort.js";
import { deleteNamespace } from "../../src/state/namespaceKeys.js";
import type { BenchPlan } from "../benchPlan.js";
import type { RedisCpuSource } from "./drainCpu.js";
import { benchKafka, benchPort, TopicRegistry } from "./benchKafka.js";
import type { ComparedCheckout } from "./comparedCheckout.js";
import type { StackEndpoints } from "./stackEndpoints.js";

export class BenchContext {
  readonly runId = randomUUID().slice(0, 8);
  readonly topics: TopicRegistry;
  /** kafkajs, for the load generator (src/tools/traffic) until it publishes through the port. */
  readonly kafka: Kafka;
  readonly port: KafkaPort;
  readonly workDir = mkdtempSync(join(tmpdir(), "fraud-scorer-bench-"));
  readonly traffic: TrafficCursor;
  readonly #namespaces: string[] = [];
  #redis: Redis | undefined;

  constructor(
    readonly root: string,
    readonly plan: BenchPlan,
    readonly endpoints: StackEndpoints,
    readonly log: (line: string) => void,
    /** Another checkout whose scorer section 6 drains beside this one's (--compare-with). */
    readonly compared?: ComparedCheckout,
  ) {
    this.topics = new TopicRegistry(endpoints.kafkaBrokers);
    this.kafka = benchKafka(endpoints.kafkaBrokers);
    this.port = benchPort(endpoints.kafkaBrokers);
    this.traffic = new TrafficCursor(simulatedTraffic({ ...plan.traffic, idPrefix: `bench-${this.runId}-` }));
  }

  /** A Redis key namespace of this run; its keys are deleted at the end. */
  namespace(label: string): string {
    const ns = `bench-${this.runId}-${label}-${this.#namespaces.length}`;
    this.#namespaces.push(ns);
    return ns;
  }

  /** The bench's own Redis connection (sections that talk to Redis directly). */
  redis(): Redis {
    return (this.#redis ??= new Redis(this.endpoints.redisUrl, { maxRetriesPerRequest: 1 }));
  }

  /** The stack's Redis, for reading its CPU (drainCpu.ts's redisCpuUs). */
  get redisCpuSource(): RedisCpuSource {
    return { url: this.endpoints.redisUrl, client: () => this.redis() };
  }

  logFile(label: string): string {
    return join(this.workDir, `${label}.log`);
  }

  /** Deletes the run's Redis keys, topics and (unless asked to keep them) scorer logs. */
  async close({ keepLogs = false }: { keepLogs?: boolean } = {}): Promise<void> {
    const redis = this.redis();
    try {
      for (const ns of this.#namespaces) await deleteNamespace(redis, ns);
    } finally {
      redis.disconnect();
      await this.topics.close();
      if (!keepLogs) rmSync(this.workDir, { recursive: true, force: true });
    }
  }
}

/**
 * One forward-running stream of transactions for the whole run: each step takes the next n, so
 * every card's history keeps moving forward in time from one step to the next.
 */
export class TrafficCursor {
  #offset = 0;

  constructor(readonly source: TrafficSource) {}

  take(n: number): TrafficSource {
    const base = this.source;
    const offset = this.#offset;
    this.#offset += n;
    return sliceOf(base, offset, n);
  }
}
