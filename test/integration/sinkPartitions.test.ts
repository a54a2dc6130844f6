// The sink sends one request per partition (src/stream/kafka/partitionSends.ts), so it picks
// each keyed record's partition itself: it must be the one any Java client picks
// ((murmur2 & 0x7fffffff) % partitions), and a record given a partition must land there.
import { randomUUID } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import type { OutgoingRecord } from "../../src/stream/kafkaPort.js";
import { partitionForKey } from "../../src/tools/traffic/cardRouting.js";
import { testEndpoints } from "./endpoints.js";
import { testKafka } from "./support/kafkaTestTopics.js";

const PARTITIONS = 12;
const { kafkaBrokers } = testEndpoints();
const port = testKafka(kafkaBrokers);
const admin = port.admin();
const topic = `sink-partitions-${randomUUID().slice(0, 8)}`;

afterAll(async () => {
  await admin.deleteTopics([topic]).catch(() => undefined);
  await admin.close();
});

it("puts keyed records where murmur2 does and pinned records where told, each once", async () => {
  await admin.createTopics([{ topic, numPartitions: PARTITIONS }]);
  const keyed: OutgoingRecord[] = Array.from({ length: 3_000 }, (_, i) => ({
    topic,
    key: `card-${i % 701}`,
    value: Buffer.from(String(i)),
  }));
  const pinned: OutgoingRecord[] = Array.from({ length: 60 }, (_, i) => ({
    topic,
    key: null,
    value: Buffer.from(`pinned-${i}`),
    partition: i % 3,
  }));
  const expected = new Array<number>(PARTITIONS).fill(0);
  for (const r of keyed) expected[partitionForKey(Buffer.from(r.key as string), PARTITIONS)]!++;
  for (const r of pinned) expected[r.partition!]!++;

  const sink = port.sink();
  try {
    await Promise.all([
      sink.publish(keyed.slice(0, 1_500)),
      sink.publish(pinned),
      sink.publish(keyed.slice(1_500)),
    ]);
  } finally {
    await sink.close();
  }

  const landed = new Array<number>(PARTITIONS).fill(0);
  for (const { partition, high, low } of await admin.watermarks(topic)) landed[partition] = high - low;
  expect(landed).toEqual(expected);
}, 60_000);
