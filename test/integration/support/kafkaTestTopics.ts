// Per-test topics, so integration tests never see each other's records.
import { randomUUID } from "node:crypto";
import { createKafkaPort } from "../../../src/stream/kafka/index.js";
import type { KafkaPort } from "../../../src/stream/kafkaPort.js";
import { ensureTopics, scorerTopicSpecs, type ScorerTopics } from "../../../stack/topics.js";

export type TestTopics = ScorerTopics;

export const testKafka = (brokers: string): KafkaPort =>
  createKafkaPort({ clientId: `test-${randomUUID().slice(0, 8)}`, brokers: brokers.split(",") });

export async function createTestTopics(
  brokers: string,
  label: string,
  partitions = 4,
  { shadow = false }: { shadow?: boolean } = {},
): Promise<TestTopics> {
  const id = `${label}-${randomUUID().slice(0, 8)}`;
  const topics = { transactions: `tx-${id}`, decisions: `dec-${id}`, dlq: `dlq-${id}` };
  await ensureTopics({ kafka: testKafka(brokers), topics: scorerTopicSpecs(topics, { partitions, shadow }) });
  return topics;
}
