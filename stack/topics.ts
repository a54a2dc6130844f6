// The topics the scorer reads and writes, and the one function that makes sure a broker has
// them. Used by stack.sh (through ensure-topics.ts), the integration tests' global setup, and
// every harness that makes a run's own topics (tests, bench, chaos, the live demo): one path.
import { setTimeout as sleep } from "node:timers/promises";
import { createKafkaPort } from "../src/stream/kafka/index.js";
import type { KafkaPort, TopicAdmin, TopicSpec } from "../src/stream/kafkaPort.js";
import { controlTopicSpec } from "../src/stream/kafkaControlChannel.js";
import { shadowTopicOf } from "../src/ops/config.js";

const COORDINATOR_WAIT_MS = 60_000;
const METADATA_WAIT_MS = 30_000;

// Right after the offsets topic is created the broker answers "coordinator loading" or "not
// coordinator" until its partitions are loaded (or the broker is not up yet): retried here.
const describeError = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error);
  const { cause, errors } = error as Error & { cause?: unknown; errors?: unknown };
  const inner = [cause, ...(Array.isArray(errors) ? errors : [])].filter((e) => e !== undefined);
  return [error.message, ...inner.map(describeError)].join(" / ");
};
const isCoordinatorStarting = (error: unknown) =>
  /coordinator|not available|connect|ECONNREFUSED|timed? ?out/i.test(describeError(error));

async function untilCoordinatorLoaded<T>(call: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + COORDINATOR_WAIT_MS;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!isCoordinatorStarting(error) || Date.now() > deadline) throw error;
      await sleep(250);
    }
  }
}

/**
 * The partition counts of the topics, once metadata lists them all: a topic created a moment
 * ago can be missing from it for a while on a loaded broker, which is not a contract breach.
 */
async function untilListed(admin: TopicAdmin, topics: readonly TopicSpec[]): Promise<Map<string, number>> {
  const deadline = Date.now() + METADATA_WAIT_MS;
  for (;;) {
    const counts = await admin.partitionCounts(topics.map(({ topic }) => topic));
    if (topics.every(({ topic }) => counts.has(topic)) || Date.now() > deadline) return counts;
    await sleep(100);
  }
}

export type { TopicSpec };

/**
 * A dead letter is an input record plus headers naming why and where from, so the DLQ takes
 * larger records than the input topic (broker default 1 MiB): a record near that limit is kept
 * whole there instead of being cut (src/stream/deadLetter.ts) or refused.
 */
export const DLQ_MAX_MESSAGE_BYTES = 2 * 1024 * 1024;
const DLQ_CONFIGS: Readonly<Record<string, string>> = {
  "max.message.bytes": String(DLQ_MAX_MESSAGE_BYTES),
};

// Partitions are the unit of scale-out and of card ownership (key = card_id), so the counts
// are part of the contract: a topic that exists with other counts is an error, not a detail.
export const STACK_TOPICS: readonly TopicSpec[] = [
  { topic: "transactions", numPartitions: 12 },
  { topic: "decisions", numPartitions: 12 },
  { topic: shadowTopicOf("decisions"), numPartitions: 12 },
  { topic: "transactions.dlq", numPartitions: 3, configs: DLQ_CONFIGS },
  controlTopicSpec("fraud-scorer.control"),
];

/** The three topics one scorer reads and writes. */
export interface ScorerTopics {
  readonly transactions: string;
  readonly decisions: string;
  readonly dlq: string;
}

/** Decision records stamped with the broker's append time: when they became visible to
 * consumers, by the broker's clock, not by a busy producer's. Latency harnesses use it. */
export const LOG_APPEND_TIME: Readonly<Record<string, string>> = {
  "message.timestamp.type": "LogAppendTime",
};

export interface ScorerTopicsShape {
  readonly partitions: number;
  readonly dlqPartitions?: number;
  readonly replicationFactor?: number;
  readonly decisionsConfigs?: Readonly<Record<string, string>>;
  /** Also the shadow decisions topic (`<decisions>.shadow`), shaped like the decisions topic. */
  readonly shadow?: boolean;
}

export const scorerTopicSpecs = (
  names: ScorerTopics,
  { partitions, dlqPartitions = 1, replicationFactor, decisionsConfigs, shadow = false }: ScorerTopicsShape,
): TopicSpec[] => [
  { topic: names.transactions, numPartitions: partitions, replicationFactor },
  { topic: names.decisions, numPartitions: partitions, replicationFactor, configs: decisionsConfigs },
  { topic: names.dlq, numPartitions: dlqPartitions, replicationFactor, configs: DLQ_CONFIGS },
  ...(shadow
    ? [
        {
          topic: shadowTopicOf(names.decisions),
          numPartitions: partitions,
          replicationFactor,
          configs: decisionsConfigs,
        },
      ]
    : []),
];

export type EnsureTopicsOptions = (
  | { readonly brokers: readonly string[]; readonly clientId?: string }
  // A caller with a configured port (TLS, SASL) hands it over instead of plain brokers.
  | { readonly kafka: KafkaPort; readonly clientId?: string }
) & { readonly topics?: readonly TopicSpec[] };

export interface EnsureTopicsResult {
  readonly created: readonly string[];
  readonly existing: readonly string[];
}

/**
 * Creates the topics that are missing and checks the partition counts of those that exist.
 * Also touches the group coordinator once, so a fresh broker creates and loads
 * __consumer_offsets now rather than during the first test's group join.
 */
export async function ensureTopics(options: EnsureTopicsOptions): Promise<EnsureTopicsResult> {
  const { topics = STACK_TOPICS, clientId = "fraud-scorer-stack" } = options;
  const kafka = "kafka" in options ? options.kafka : createKafkaPort({ clientId, brokers: options.brokers });
  const where = "brokers" in options ? options.brokers.join(",") : "the broker";
  const admin = kafka.admin();
  try {
    // A broker that has just opened its port may still be electing itself.
    const present = new Set(await untilCoordinatorLoaded(() => admin.listTopics()));
    const missing = topics.filter(({ topic }) => !present.has(topic));
    await admin.createTopics(missing);
    const counts = await untilListed(admin, topics);
    const wrong = topics.flatMap(({ topic, numPartitions }) => {
      const found = counts.get(topic) ?? 0;
      return found === numPartitions ? [] : [`${topic} has ${found} partitions, expected ${numPartitions}`];
    });
    if (wrong.length > 0) {
      throw new Error(`topics on ${where} do not match the contract: ${wrong.join("; ")}`);
    }
    await untilCoordinatorLoaded(() =>
      admin.committedOffsets(`${clientId}-warmup`, topics[0]?.topic ?? "transactions"),
    );
    return {
      created: missing.map(({ topic }) => topic),
      existing: topics.filter(({ topic }) => present.has(topic)).map(({ topic }) => topic),
    };
  } finally {
    await admin.close();
  }
}
