// Each scenario's own topics, so no run sees another's records. The decisions topic stamps
// records with the broker's append time: a decision's latency is then measured from its
// transaction's scheduled send time to the moment the broker had it, by the broker's clock.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Kafka, logLevel, type Admin } from "kafkajs";

export interface RunTopics {
  readonly transactions: string;
  readonly decisions: string;
  readonly dlq: string;
}

export const chaosKafka = (brokers: string): Kafka =>
  new Kafka({
    clientId: `chaos-${randomUUID().slice(0, 8)}`,
    brokers: brokers.split(","),
    logLevel: logLevel.NOTHING,
    // Metadata of a topic created a moment ago can lag on a loaded machine ("does not host
    // this topic-partition"); the suite's own clients wait it out rather than fail the run.
    retry: { retries: 10 },
  });

export async function createRunTopics(
  brokers: string,
  label: string,
  { partitions = 12, replicationFactor = 1 } = {},
): Promise<RunTopics> {
  const id = `${label}-${randomUUID().slice(0, 8)}`;
  const topics = { transactions: `chaos-tx-${id}`, decisions: `chaos-dec-${id}`, dlq: `chaos-dlq-${id}` };
  const admin = chaosKafka(brokers).admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: false,
      topics: [
        { topic: topics.transactions, numPartitions: partitions, replicationFactor },
        {
          topic: topics.decisions,
          numPartitions: partitions,
          replicationFactor,
          configEntries: [{ name: "message.timestamp.type", value: "LogAppendTime" }],
        },
        { topic: topics.dlq, numPartitions: 3, replicationFactor },
      ],
    });
    await untilLed(admin, [topics.transactions, topics.decisions, topics.dlq]);
  } finally {
    await admin.disconnect();
  }
  return topics;
}

/**
 * Until every partition of the new topics has a leader. kafkajs's own waitForLeaders gives up
 * with "does not host this topic-partition" when the metadata lags on a loaded broker.
 */
async function untilLed(admin: Admin, names: readonly string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const led = await admin
      .fetchTopicMetadata({ topics: [...names] })
      .then(
        ({ topics }) =>
          topics.length === names.length && topics.every((t) => t.partitions.every((p) => p.leader >= 0)),
      )
      .catch(() => false);
    if (led) return;
    if (Date.now() > deadline)
      throw new Error(`topics ${names.join(", ")} have no leaders after ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

export async function deleteRunTopics(brokers: string, topics: RunTopics): Promise<void> {
  const admin = chaosKafka(brokers).admin();
  await admin.connect();
  try {
    await admin.deleteTopics({ topics: [topics.transactions, topics.decisions, topics.dlq] });
  } catch {
    // best effort: a scenario's topics are small and named chaos-*
  } finally {
    await admin.disconnect();
  }
}
