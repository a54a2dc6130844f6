// Reads a whole topic, from the beginning to the end it had when asked, with a consumer of its
// own: the suite's independent view of what the scorer wrote. read_committed by default, so a
// transactional writer's aborted records are not counted.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { chaosKafka } from "./runTopics.js";

export interface TopicRecord {
  readonly partition: number;
  readonly offset: number;
  readonly timestampMs: number;
  readonly key: string;
  readonly value: Buffer;
  readonly headers: Readonly<Record<string, string>>;
}

export async function readWholeTopic(
  brokers: string,
  topic: string,
  { idleMs = 5_000, timeoutMs = 300_000 } = {},
): Promise<TopicRecord[]> {
  const kafka = chaosKafka(brokers);
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<number, number>();
  try {
    for (const { partition, high, low } of await admin.fetchTopicOffsets(topic)) {
      if (Number(high) > Number(low)) ends.set(partition, Number(high));
    }
  } finally {
    await admin.disconnect();
  }
  const records: TopicRecord[] = [];
  if (ends.size === 0) return records;
  const consumer = kafka.consumer({
    groupId: `chaos-reader-${randomUUID()}`,
    maxWaitTimeInMs: 200,
    readUncommitted: false,
  });
  const pending = new Set(ends.keys());
  let lastArrival = Date.now();
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(m.headers ?? {})) headers[k] = String(v);
        records.push({
          partition: batch.partition,
          offset: Number(m.offset),
          timestampMs: Number(m.timestamp),
          key: m.key?.toString() ?? "",
          value: m.value ?? Buffer.alloc(0),
          headers,
        });
      }
      lastArrival = Date.now();
      // A transactional topic ends with a commit marker no consumer sees; there the reader
      // stops when nothing has arrived for idleMs.
      if (Number(batch.lastOffset()) >= (ends.get(batch.partition) ?? 0) - 1) pending.delete(batch.partition);
    },
  });
  const deadline = Date.now() + timeoutMs;
  while (pending.size > 0 && Date.now() - lastArrival < idleMs && Date.now() < deadline) await sleep(100);
  await consumer.disconnect();
  return records;
}
