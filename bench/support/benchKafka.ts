// Per-run topics, so a benchmark never reads another run's (or a test's) records, and a quiet
// kafkajs client for the load generator until it moves onto the port. Decisions topics keep
// the broker's append time as record timestamp: that is when a decision became visible to its
// consumers, measured on the broker's clock, not on a busy load generator's.
import { randomUUID } from "node:crypto";
import { Kafka, logLevel } from "kafkajs";
import { createKafkaPort } from "../../src/stream/kafka/index.js";
import type { KafkaPort, TopicAdmin, TopicSpec } from "../../src/stream/kafkaPort.js";
import { ensureTopics, LOG_APPEND_TIME, scorerTopicSpecs, type ScorerTopics } from "../../stack/topics.js";

export { LOG_APPEND_TIME };

export const benchKafka = (brokers: string, label = "bench"): Kafka =>
  new Kafka({
    clientId: `${label}-${randomUUID().slice(0, 8)}`,
    brokers: brokers.split(","),
    logLevel: logLevel.NOTHING,
  });

export const benchPort = (brokers: string, label = "bench"): KafkaPort =>
  createKafkaPort({ clientId: `${label}-${randomUUID().slice(0, 8)}`, brokers: brokers.split(",") });

export type BenchTopics = ScorerTopics;

export class TopicRegistry {
  readonly #kafka: KafkaPort;
  readonly #admin: TopicAdmin;
  readonly #created: string[] = [];

  constructor(brokers: string) {
    this.#kafka = benchPort(brokers, "bench-admin");
    this.#admin = this.#kafka.admin();
  }

  /** Creates topics named `<kind>-bench-<label>-<random>`; all are deleted by close(). */
  async scorerTopics(label: string, partitions: number): Promise<BenchTopics> {
    const id = `bench-${label}-${randomUUID().slice(0, 8)}`;
    const topics = { transactions: `tx-${id}`, decisions: `dec-${id}`, dlq: `dlq-${id}` };
    await this.#create(scorerTopicSpecs(topics, { partitions, decisionsConfigs: LOG_APPEND_TIME }));
    return topics;
  }

  async topic(label: string, partitions: number, configs?: Readonly<Record<string, string>>) {
    const topic = `bench-${label}-${randomUUID().slice(0, 8)}`;
    await this.#create([{ topic, numPartitions: partitions, configs }]);
    return topic;
  }

  /**
   * Sum of the topic's partitions' high watermarks: how many records it holds when written
   * without transactions. Each committed or aborted transaction also leaves one marker per
   * partition it touched, which takes an offset (10 transactions over 12 partitions: +120).
   */
  async recordCount(topic: string): Promise<number> {
    const watermarks = await this.#admin.watermarks(topic);
    return watermarks.reduce((n, p) => n + p.high, 0);
  }

  /**
   * Records of `topic` a consumer group has committed past: exact whether or not its output was
   * written in transactions (an exactly-once scorer commits its input offsets inside them).
   */
  async committedCount(groupId: string, topic: string): Promise<number> {
    let n = 0;
    for (const offset of (await this.#admin.committedOffsets(groupId, topic)).values())
      n += Math.max(0, offset);
    return n;
  }

  /** Deletes every topic this registry created. */
  async close(): Promise<void> {
    try {
      await this.#admin.deleteTopics(this.#created.splice(0));
    } finally {
      await this.#admin.close();
    }
  }

  async #create(topics: TopicSpec[]) {
    await ensureTopics({ kafka: this.#kafka, topics });
    this.#created.push(...topics.map((t) => t.topic));
  }
}
