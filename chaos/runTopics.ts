// Each scenario's own topics, so no run sees another's records. The decisions topic stamps
// records with the broker's append time: a decision's latency is then measured from its
// transaction's scheduled send time to the moment the broker had it, by the broker's clock.
import { randomUUID } from "node:crypto";
import { createKafkaPort } from "../src/stream/kafka/index.js";
import type { KafkaPort, OutgoingRecord } from "../src/stream/kafkaPort.js";
import { ensureTopics, LOG_APPEND_TIME, scorerTopicSpecs, type ScorerTopics } from "../stack/topics.js";

export type RunTopics = ScorerTopics;

export const chaosPort = (brokers: string): KafkaPort =>
  createKafkaPort({ clientId: `chaos-${randomUUID().slice(0, 8)}`, brokers: brokers.split(",") });

/**
 * Publishes records through the port's sink (idempotent, acks=all) and waits for every
 * acknowledgement: transactions and malformed records alike are only keys and bytes here.
 */
export async function publishRecords(brokers: string, records: readonly OutgoingRecord[]): Promise<void> {
  const sink = chaosPort(brokers).sink();
  try {
    await sink.publish(records);
  } finally {
    await sink.close();
  }
}

export async function createRunTopics(
  brokers: string,
  label: string,
  { partitions = 12, replicationFactor = 1 } = {},
): Promise<RunTopics> {
  const id = `${label}-${randomUUID().slice(0, 8)}`;
  const topics = { transactions: `chaos-tx-${id}`, decisions: `chaos-dec-${id}`, dlq: `chaos-dlq-${id}` };
  await ensureTopics({
    kafka: chaosPort(brokers),
    topics: scorerTopicSpecs(topics, {
      partitions,
      dlqPartitions: 3,
      replicationFactor,
      decisionsConfigs: LOG_APPEND_TIME,
    }),
  });
  return topics;
}

export async function deleteRunTopics(brokers: string, topics: RunTopics): Promise<void> {
  const admin = chaosPort(brokers).admin();
  try {
    await admin.deleteTopics([topics.transactions, topics.decisions, topics.dlq]);
  } catch {
    // best effort: a scenario's topics are small and named chaos-*
  } finally {
    await admin.close().catch(() => {});
  }
}
