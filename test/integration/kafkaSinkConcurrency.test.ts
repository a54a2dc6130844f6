// An idempotent producer writes each record once, however many publishes are in flight on it
// and however often the client retries a produce request whose answer it did not get. The
// scorer keeps several publishes in flight on its one producer (decisions and dead letters),
// and an ad-hoc bench once reported more records on a topic than were sent. These pin that
// every record lands exactly once: under concurrency alone, and with requests timing out so
// that the client re-sends what the broker may already have written.
import { randomUUID } from "node:crypto";
import { Producer } from "@platformatic/kafka";
import { afterAll, describe, expect, it } from "vitest";
import { baseClientOptions } from "../../src/stream/kafka/clientOptions.js";
import { PlatformaticSink, producerOptions } from "../../src/stream/kafka/platformaticSink.js";
import type { KafkaPort, RecordSink } from "../../src/stream/kafkaPort.js";
import { testEndpoints } from "./endpoints.js";
import { testKafka } from "./support/kafkaTestTopics.js";

const PARTITIONS = 12;
const RECORDS = 40_000;
const PER_PUBLISH = 250;
const CONCURRENT_PUBLISHES = 32;
const VALUE = Buffer.alloc(100, 7);

interface Outcome {
  /** Keys of the publishes that resolved: acknowledged, so each must be on the topic. */
  readonly acknowledged: Set<string>;
  readonly failedPublishes: number;
}

/** RECORDS records with distinct keys, in publishes of PER_PUBLISH, CONCURRENT_PUBLISHES at a time. */
async function publishConcurrently(sink: RecordSink, topic: string): Promise<Outcome> {
  const acknowledged = new Set<string>();
  let failedPublishes = 0;
  let next = 0;
  const worker = async () => {
    while (next < RECORDS) {
      const start = next;
      next = Math.min(RECORDS, next + PER_PUBLISH);
      const keys = Array.from({ length: next - start }, (_, i) => `k-${start + i}`);
      try {
        await sink.publish(keys.map((key) => ({ topic, key, value: VALUE })));
        for (const key of keys) acknowledged.add(key);
      } catch {
        failedPublishes++;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENT_PUBLISHES }, worker));
  return { acknowledged, failedPublishes };
}

/** How often each key occurs on the topic, read from the start up to its end offsets. */
async function keyCounts(port: KafkaPort, topic: string, onTopic: number): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let read = 0;
  const reader = port.topicReader({ topic, from: "earliest" });
  try {
    await reader.start(async (batches) => {
      for (const batch of batches)
        for (const record of batch.records) {
          read++;
          const key = String(record.key);
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
    });
    await expect.poll(() => read, { timeout: 30_000, interval: 100 }).toBe(onTopic);
  } finally {
    await reader.close();
  }
  return counts;
}

describe("the Kafka port's sink with many publishes in flight", () => {
  const { kafkaBrokers } = testEndpoints();
  const settings = {
    clientId: `sink-concurrency-${randomUUID().slice(0, 8)}`,
    brokers: kafkaBrokers.split(","),
  };
  const port = testKafka(kafkaBrokers);
  const admin = port.admin();
  const created: string[] = [];
  const closers: (() => Promise<void>)[] = [];
  const topic = async (label: string) => {
    const name = `sink-concurrency-${label}-${randomUUID().slice(0, 8)}`;
    await admin.createTopics([{ topic: name, numPartitions: PARTITIONS }]);
    created.push(name);
    return name;
  };
  const onTopic = async (name: string) =>
    (await admin.watermarks(name)).reduce((n, p) => n + p.high - p.low, 0);
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await admin.deleteTopics(created).catch(() => undefined);
    await admin.close();
  });

  it("writes every record of concurrent publishes exactly once", async () => {
    const name = await topic("plain");
    const sink = port.sink();
    closers.push(() => sink.close());

    const { acknowledged, failedPublishes } = await publishConcurrently(sink, name);

    expect(failedPublishes).toBe(0);
    expect(acknowledged.size).toBe(RECORDS);
    expect(await onTopic(name)).toBe(RECORDS);
    const counts = await keyCounts(port, name, RECORDS);
    expect(counts.size).toBe(RECORDS);
  });

  it("writes no record twice when produce requests time out and the client re-sends them", async () => {
    const name = await topic("retried");
    // The product's producer settings, with a request timeout short enough that answers come
    // too late on a loaded machine: the client re-sends requests the broker may have written.
    // Five producers, as the port's sink has: requests in flight on several at once.
    const producers = Array.from(
      { length: 5 },
      () =>
        new Producer<Buffer, Buffer, Buffer, Buffer>({
          ...producerOptions(baseClientOptions(settings, "producer")),
          requestTimeout: 5,
        }),
    );
    let produceRetries = 0;
    for (const producer of producers)
      producer.on("client:performWithRetry:retry", (operation: string) => {
        if (operation === "produce") produceRetries++;
      });
    const sink = new PlatformaticSink(producers);
    closers.push(() => sink.close());

    const { acknowledged } = await publishConcurrently(sink, name);

    expect(produceRetries).toBeGreaterThan(0);
    const total = await onTopic(name);
    const counts = await keyCounts(port, name, total);
    const twice = [...counts].filter(([, n]) => n > 1).map(([key]) => key);
    expect(twice).toEqual([]);
    expect(counts.size).toBe(total);
    // A publish that failed may still have been written (its answer was what timed out); one
    // that resolved must be there whole.
    expect([...acknowledged].filter((key) => !counts.has(key))).toEqual([]);
  });
});
