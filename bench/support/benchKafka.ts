// Per-run topics, so a benchmark never reads another run's (or a test's) records, and a quiet
// kafkajs client for the bench process itself. Decisions topics keep the broker's append time
// as record timestamp: that is when a decision became visible to its consumers, measured on
// the broker's clock, not on a busy load generator's.
import { randomUUID } from "node:crypto";
import { Kafka, logLevel, type Admin, type ITopicConfig } from "kafkajs";

export const benchKafka = (brokers: string, label = "bench"): Kafka =>
  new Kafka({
    clientId: `${label}-${randomUUID().slice(0, 8)}`,
    brokers: brokers.split(","),
    logLevel: logLevel.NOTHING,
  });

export interface BenchTopics {
  readonly transactions: string;
  readonly decisions: string;
  readonly dlq: string;
}

export const LOG_APPEND_TIME = [{ name: "message.timestamp.type", value: "LogAppendTime" }];

export class TopicRegistry {
  readonly #admin: Admin;
  #connected: Promise<void> | undefined;
  readonly #created: string[] = [];

  constructor(brokers: string) {
    this.#admin = benchKafka(brokers, "bench-admin").admin();
  }

  /** Creates topics named `<kind>-bench-<label>-<random>`; all are deleted by close(). */
  async scorerTopics(label: string, partitions: number): Promise<BenchTopics> {
    const id = `bench-${label}-${randomUUID().slice(0, 8)}`;
    const topics = { transactions: `tx-${id}`, decisions: `dec-${id}`, dlq: `dlq-${id}` };
    await this.#create([
      { topic: topics.transactions, numPartitions: partitions },
      { topic: topics.decisions, numPartitions: partitions, configEntries: LOG_APPEND_TIME },
      { topic: topics.dlq, numPartitions: 1 },
    ]);
    return topics;
  }

  async topic(label: string, partitions: number, configEntries: ITopicConfig["configEntries"] = []) {
    const topic = `bench-${label}-${randomUUID().slice(0, 8)}`;
    await this.#create([{ topic, numPartitions: partitions, configEntries }]);
    return topic;
  }

  /** Sum of the topic's partitions' high watermarks: how many records it holds. */
  async recordCount(topic: string): Promise<number> {
    await this.#connect();
    const offsets = await this.#admin.fetchTopicOffsets(topic);
    return offsets.reduce((n, p) => n + Number(p.high), 0);
  }

  /** Deletes every topic this registry created. */
  async close(): Promise<void> {
    if (this.#connected === undefined) return;
    try {
      if (this.#created.length > 0)
        await this.#admin.deleteTopics({ topics: this.#created.splice(0), timeout: 30_000 });
    } finally {
      await this.#admin.disconnect();
      this.#connected = undefined;
    }
  }

  #connect(): Promise<void> {
    return (this.#connected ??= this.#admin.connect());
  }

  async #create(topics: ITopicConfig[]) {
    await this.#connect();
    await this.#admin.createTopics({ waitForLeaders: true, topics });
    this.#created.push(...topics.map((t) => t.topic));
  }
}
