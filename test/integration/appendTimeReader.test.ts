// The audits' reader (bench/support/appendTimeReader.ts, under chaos/topicReader.ts and the
// bench's DecisionLatencyCollector) must report a LogAppendTime topic's records at the broker's
// append time. Records are written with a CreateTime an hour old: a reader that takes the
// record's own timestamp on such a topic (as @platformatic/kafka 2.12 does) reports that hour.
import { randomUUID } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import { appendTimeReaderPort } from "../../bench/support/appendTimeReader.js";
import { readWholeTopic } from "../../chaos/topicReader.js";
import { followDecisions } from "../../src/decisions/followDecisions.js";
import { LOG_APPEND_TIME } from "../../stack/topics.js";
import { testEndpoints } from "./endpoints.js";
import { testKafka } from "./support/kafkaTestTopics.js";

const HOUR_MS = 3_600_000;
/** The broker and this test share the machine's clock; a loaded machine still takes a while. */
const SLACK_MS = 30_000;

const { kafkaBrokers } = testEndpoints();
const port = testKafka(kafkaBrokers);
const admin = port.admin();
const topics: string[] = [];

afterAll(async () => {
  await admin.deleteTopics(topics).catch(() => undefined);
  await admin.close();
});

async function topicWith(configs?: Readonly<Record<string, string>>) {
  const topic = `append-time-${randomUUID().slice(0, 8)}`;
  topics.push(topic);
  await admin.createTopics([{ topic, numPartitions: 3, configs }]);
  return topic;
}

/** Writes six records stamped an hour ago; returns the stamp and when the writing happened. */
async function writeHourOld(topic: string) {
  const createTimeMs = Date.now() - HOUR_MS;
  const sink = port.sink();
  const writtenFromMs = Date.now();
  try {
    await sink.publish(
      Array.from({ length: 6 }, (_, i) => ({
        topic,
        key: `k${i}`,
        value: Buffer.from(`v${i}`),
        headers: { probe: `p${i}` },
        timestampMs: createTimeMs,
      })),
    );
  } finally {
    await sink.close();
  }
  return { createTimeMs, writtenFromMs, writtenToMs: Date.now() };
}

it("reads a LogAppendTime topic's records at the broker's append time, not their CreateTime", async () => {
  const topic = await topicWith(LOG_APPEND_TIME);
  const { writtenFromMs, writtenToMs } = await writeHourOld(topic);

  const records = await readWholeTopic(kafkaBrokers, topic, { idleMs: 2_000 });

  expect(records).toHaveLength(6);
  for (const r of records) {
    expect(r.timestampMs).toBeGreaterThanOrEqual(writtenFromMs - SLACK_MS);
    expect(r.timestampMs).toBeLessThanOrEqual(writtenToMs + SLACK_MS);
  }
  // The rest of the record comes through as the port's reader gave it.
  expect(records.map((r) => `${r.key}=${r.value.toString()}:${r.headers.probe}`).sort()).toEqual(
    Array.from({ length: 6 }, (_, i) => `k${i}=v${i}:p${i}`),
  );
});

it("reads a CreateTime topic's records at the CreateTime their writer set", async () => {
  const topic = await topicWith();
  const { createTimeMs } = await writeHourOld(topic);

  const records = await readWholeTopic(kafkaBrokers, topic, { idleMs: 2_000 });

  expect(records.map((r) => r.timestampMs)).toEqual(new Array(6).fill(createTimeMs));
});

it("hands the decisions follower the append time, as the bench's latency collector reads it", async () => {
  const topic = await topicWith(LOG_APPEND_TIME);
  const { writtenFromMs, writtenToMs } = await writeHourOld(topic);
  // Not Decisions: the follower reports each as undecodable, with the same metadata.
  const seen: number[] = [];
  const following = await followDecisions({
    kafka: appendTimeReaderPort(kafkaBrokers),
    topic,
    fromBeginning: true,
    maxWaitMs: 50,
    onDecision: () => {},
    onUndecodable: (meta) => seen.push(meta.timestampMs),
  });
  try {
    await following.joined;
    await expect.poll(() => seen.length, { timeout: 30_000 }).toBe(6);
  } finally {
    await following.stop();
  }
  for (const t of seen) {
    expect(t).toBeGreaterThanOrEqual(writtenFromMs - SLACK_MS);
    expect(t).toBeLessThanOrEqual(writtenToMs + SLACK_MS);
  }
});
