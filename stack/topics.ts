// The topics the scorer reads and writes, and the one function that makes sure a broker has
// them. Used by stack.sh (through ensure-topics.ts) and by the integration tests' global setup.
import { setTimeout as sleep } from "node:timers/promises";
import { createKafkaPort } from "../src/stream/kafka/index.js";
import type { TopicSpec } from "../src/stream/kafkaPort.js";
import { controlTopicSpec } from "../src/stream/kafkaControlChannel.js";

const COORDINATOR_WAIT_MS = 60_000;

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

export type { TopicSpec };

// Partitions are the unit of scale-out and of card ownership (key = card_id), so the counts
// are part of the contract: a topic that exists with other counts is an error, not a detail.
export const STACK_TOPICS: readonly TopicSpec[] = [
  { topic: "transactions", numPartitions: 12 },
  { topic: "decisions", numPartitions: 12 },
  { topic: "transactions.dlq", numPartitions: 3 },
  controlTopicSpec("fraud-scorer.control"),
];

export interface EnsureTopicsOptions {
  readonly brokers: readonly string[];
  readonly topics?: readonly TopicSpec[];
  readonly clientId?: string;
}

export interface EnsureTopicsResult {
  readonly created: readonly string[];
  readonly existing: readonly string[];
}

/**
 * Creates the topics that are missing and checks the partition counts of those that exist.
 * Also touches the group coordinator once, so a fresh broker creates and loads
 * __consumer_offsets now rather than during the first test's group join.
 */
export async function ensureTopics({
  brokers,
  topics = STACK_TOPICS,
  clientId = "fraud-scorer-stack",
}: EnsureTopicsOptions): Promise<EnsureTopicsResult> {
  const admin = createKafkaPort({ clientId, brokers }).admin();
  try {
    // A broker that has just opened its port may still be electing itself.
    const present = new Set(await untilCoordinatorLoaded(() => admin.listTopics()));
    const missing = topics.filter(({ topic }) => !present.has(topic));
    await admin.createTopics(missing);
    const counts = await admin.partitionCounts(topics.map(({ topic }) => topic));
    const wrong = topics.flatMap(({ topic, numPartitions }) => {
      const found = counts.get(topic) ?? 0;
      return found === numPartitions ? [] : [`${topic} has ${found} partitions, expected ${numPartitions}`];
    });
    if (wrong.length > 0) {
      throw new Error(`topics on ${brokers.join(",")} do not match the contract: ${wrong.join("; ")}`);
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
