// Per-test topics, so integration tests never see each other's records.
import { randomUUID } from "node:crypto";
import { createKafkaPort } from "../../../src/stream/kafka/index.js";
import type { KafkaPort } from "../../../src/stream/kafkaPort.js";

export interface TestTopics {
  readonly transactions: string;
  readonly decisions: string;
  readonly dlq: string;
}

export const testKafka = (brokers: string): KafkaPort =>
  createKafkaPort({ clientId: `test-${randomUUID().slice(0, 8)}`, brokers: brokers.split(",") });

export async function createTestTopics(brokers: string, label: string, partitions = 4): Promise<TestTopics> {
  const id = `${label}-${randomUUID().slice(0, 8)}`;
  const topics = { transactions: `tx-${id}`, decisions: `dec-${id}`, dlq: `dlq-${id}` };
  const admin = testKafka(brokers).admin();
  try {
    await admin.createTopics([
      { topic: topics.transactions, numPartitions: partitions },
      { topic: topics.decisions, numPartitions: partitions },
      { topic: topics.dlq, numPartitions: 1 },
    ]);
  } finally {
    await admin.close();
  }
  return topics;
}
