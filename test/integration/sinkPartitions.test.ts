// Where the sink's records land: a keyed record on the partition any Java client picks
// ((murmur2 & 0x7fffffff) % partitions), a record given a partition there — through the sink's
// one request per publish, and through the one-request-per-partition sends it falls back to
// after a leader moved (src/stream/kafka/partitionSends.ts), which pick partitions themselves.
import { randomUUID } from "node:crypto";
import { Producer } from "@platformatic/kafka";
import { afterAll, expect, it } from "vitest";
import { sendByPartition } from "../../src/stream/kafka/partitionSends.js";
import { producerOptions, toMessage } from "../../src/stream/kafka/platformaticSink.js";
import type { OutgoingRecord } from "../../src/stream/kafkaPort.js";
import { partitionForKey } from "../../src/stream/keyPartition.js";
import { testEndpoints } from "./endpoints.js";
import { testKafka } from "./support/kafkaTestTopics.js";

const PARTITIONS = 12;
const { kafkaBrokers } = testEndpoints();
const port = testKafka(kafkaBrokers);
const admin = port.admin();
const topics: string[] = [];

afterAll(async () => {
  await admin.deleteTopics(topics).catch(() => undefined);
  await admin.close();
});

async function newTopic(): Promise<string> {
  const topic = `sink-partitions-${randomUUID().slice(0, 8)}`;
  topics.push(topic);
  await admin.createTopics([{ topic, numPartitions: PARTITIONS }]);
  return topic;
}

function recordsFor(topic: string) {
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
  return { keyed, pinned, expected };
}

async function landedOn(topic: string): Promise<number[]> {
  const landed = new Array<number>(PARTITIONS).fill(0);
  for (const { partition, high, low } of await admin.watermarks(topic)) landed[partition] = high - low;
  return landed;
}

it("puts keyed records where murmur2 does and pinned records where told, each once", async () => {
  const topic = await newTopic();
  const { keyed, pinned, expected } = recordsFor(topic);
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

  expect(await landedOn(topic)).toEqual(expected);
}, 60_000);

it("sends partition by partition to the same partitions, each record once", async () => {
  const topic = await newTopic();
  const { keyed, pinned, expected } = recordsFor(topic);
  const producer = new Producer(
    producerOptions({ clientId: "sink-partitions-test", bootstrapBrokers: kafkaBrokers.split(",") }),
  );
  try {
    await sendByPartition(producer, [...keyed, ...pinned].map(toMessage));
  } finally {
    await producer.close();
  }
  expect(await landedOn(topic)).toEqual(expected);
}, 60_000);

it("warms before the first publish, which then lands as it would have; a missing topic is not_found", async () => {
  const topic = await newTopic();
  const { keyed, pinned, expected } = recordsFor(topic);
  const sink = port.sink();
  try {
    await sink.warm([topic]);
    await Promise.all([sink.publish(keyed), sink.publish(pinned)]);
    const missing = `sink-partitions-missing-${randomUUID().slice(0, 8)}`;
    await expect(sink.warm([missing])).rejects.toMatchObject({ name: "KafkaPortError", kind: "not_found" });
    expect(await admin.listTopics()).not.toContain(missing);
  } finally {
    await sink.close();
  }

  expect(await landedOn(topic)).toEqual(expected);
}, 60_000);
