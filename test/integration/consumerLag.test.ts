// A group source reports each owned partition's lag (high watermark − committed offset), the
// figure the scorer's fraud_scorer consumer-lag gauge shows.
import { afterAll, describe, expect, it } from "vitest";
import type { PartitionLag } from "../../src/stream/kafkaPort.js";
import { testEndpoints } from "./endpoints.js";
import { createTestTopics, testKafka } from "./support/kafkaTestTopics.js";

const records = (topic: string, n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({ topic, key: `${tag}${i}`, value: Buffer.from(tag) }));

describe("consumer lag", () => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  });

  it("is what was written past the committed offset", async () => {
    const { kafkaBrokers } = testEndpoints();
    const { transactions: topic } = await createTestTopics(kafkaBrokers, "lag", 1);
    const port = testKafka(kafkaBrokers);
    const sink = port.sink();
    closers.push(() => sink.close());
    await sink.publish(records(topic, 10, "a"));

    let consumed = 0;
    const samples: (readonly PartitionLag[])[] = [];
    const source = port.groupSource({
      topics: [topic],
      groupId: `${topic}-group`,
      lagIntervalMs: 200,
      onLag: (lags) => samples.push(lags),
    });
    closers.push(() => source.close());
    await source.start(async (batches) => {
      for (const batch of batches) consumed += batch.records.length;
      if (consumed < 10) return;
      // Everything read is committed, and nothing more is read: what follows is lag.
      await source.commit([{ topic, partition: 0, offset: 10 }]);
      source.pause();
    });
    await expect.poll(() => consumed, { timeout: 15_000 }).toBe(10);
    await sink.publish(records(topic, 5, "b"));

    await expect
      .poll(() => samples.at(-1), { timeout: 15_000, interval: 100 })
      .toEqual([{ topic, partition: 0, lag: 5 }]);
  });
});
