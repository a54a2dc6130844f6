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
  // Kept forever: many tests write records stamped in the past (T0 in 2025), which the broker's
  // time retention (24 h on the stack) deletes at its next check, every 5 minutes; a replay that
  // ran just after one found its range empty and printed nothing.
  const specs = scorerTopicSpecs(topics, { partitions, shadow }).map((spec) => ({
    ...spec,
    configs: { ...spec.configs, "retention.ms": "-1" },
  }));
  await ensureTopics({ kafka: testKafka(brokers), topics: specs });
  return topics;
}
