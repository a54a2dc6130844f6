// The topics the scorer reads and writes, and the one function that makes sure a broker has
// them. Used by stack.sh (through ensure-topics.ts) and by the integration tests' global setup.
import { setTimeout as sleep } from "node:timers/promises";
import { Kafka, logLevel } from "kafkajs";

const COORDINATOR_WAIT_MS = 60_000;

// Right after the offsets topic is created the broker answers "coordinator loading" or "not
// coordinator" until its partitions are loaded; kafkajs's admin gives up on those too early.
const isCoordinatorStarting = (error: unknown) =>
  error instanceof Error &&
  /coordinator is (loading|not available)|not the correct coordinator/i.test(error.message);

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

export interface TopicSpec {
  readonly topic: string;
  readonly numPartitions: number;
}

// Partitions are the unit of scale-out and of card ownership (key = card_id), so the counts
// are part of the contract: a topic that exists with other counts is an error, not a detail.
export const STACK_TOPICS: readonly TopicSpec[] = [
  { topic: "transactions", numPartitions: 12 },
  { topic: "decisions", numPartitions: 12 },
  { topic: "transactions.dlq", numPartitions: 3 },
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
 * Also touches both coordinators once (a group's offsets, an idempotent producer's id), so a
 * fresh broker creates and loads __consumer_offsets and __transaction_state now rather than
 * during the first test's group join or first idempotent send.
 */
export async function ensureTopics({
  brokers,
  topics = STACK_TOPICS,
  clientId = "fraud-scorer-stack",
}: EnsureTopicsOptions): Promise<EnsureTopicsResult> {
  // Retries stay on: a broker that has just opened its port may still be electing itself.
  // Logging stays off: the retried "coordinator loading" answers are expected, and a real
  // failure surfaces as the thrown error.
  const kafka = new Kafka({
    clientId,
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    retry: { retries: 10, initialRetryTime: 300, maxRetryTime: 5_000 },
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const present = new Set(await admin.listTopics());
    const missing = topics.filter(({ topic }) => !present.has(topic));
    if (missing.length > 0) {
      await admin.createTopics({
        topics: missing.map(({ topic, numPartitions }) => ({ topic, numPartitions })),
        waitForLeaders: true,
      });
    }
    const metadata = await admin.fetchTopicMetadata({ topics: topics.map(({ topic }) => topic) });
    const wrong = topics.flatMap(({ topic, numPartitions }) => {
      const found = metadata.topics.find((t) => t.name === topic)?.partitions.length ?? 0;
      return found === numPartitions ? [] : [`${topic} has ${found} partitions, expected ${numPartitions}`];
    });
    if (wrong.length > 0) {
      throw new Error(`topics on ${brokers.join(",")} do not match the contract: ${wrong.join("; ")}`);
    }
    await untilCoordinatorLoaded(() =>
      admin.fetchOffsets({ groupId: `${clientId}-warmup`, topics: [topics[0]?.topic ?? "transactions"] }),
    );
    await untilCoordinatorLoaded(async () => {
      const producer = kafka.producer({ idempotent: true });
      try {
        await producer.connect();
      } finally {
        await producer.disconnect();
      }
    });
    return {
      created: missing.map(({ topic }) => topic),
      existing: topics.filter(({ topic }) => present.has(topic)).map(({ topic }) => topic),
    };
  } finally {
    await admin.disconnect();
  }
}
