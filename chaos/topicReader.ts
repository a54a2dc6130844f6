// Reads a whole topic, from the beginning to the end it had when asked, with a consumer of its
// own: the suite's independent view of what the scorer wrote. read_committed by default, so a
// transactional writer's aborted records are not counted. The reader is the audits' append-time
// reader (bench/support/appendTimeReader.ts), so a decision's timestamp is the broker's append
// time on the LogAppendTime decisions topic, not the CreateTime the scorer's producer set.
import { setTimeout as sleep } from "node:timers/promises";
import { appendTimeReaderPort } from "../bench/support/appendTimeReader.js";
import type { RecordBatch } from "../src/stream/kafkaPort.js";
import { chaosPort } from "./runTopics.js";

export interface TopicRecord {
  readonly partition: number;
  readonly offset: number;
  readonly timestampMs: number;
  readonly key: string;
  readonly value: Buffer;
  readonly headers: Readonly<Record<string, string>>;
}

export interface ReadTopicOptions {
  /** The read ends when nothing has arrived for this long (a transactional topic's last marker). */
  readonly idleMs?: number;
  readonly timeoutMs?: number;
}

/** Every record of the topic, held in memory: for runs of test size. */
export async function readWholeTopic(
  brokers: string,
  topic: string,
  options: ReadTopicOptions = {},
): Promise<TopicRecord[]> {
  const records: TopicRecord[] = [];
  await streamWholeTopic(brokers, topic, (r) => records.push(r), options);
  return records;
}

/**
 * Hands each record of the topic to `onRecord` as it arrives and holds none: a soak's millions of
 * records are reduced on the way.
 */
export async function streamWholeTopic(
  brokers: string,
  topic: string,
  onRecord: (record: TopicRecord) => void,
  { idleMs = 5_000, timeoutMs = 300_000 }: ReadTopicOptions = {},
): Promise<void> {
  const admin = chaosPort(brokers).admin();
  const ends = new Map<number, number>();
  try {
    for (const { partition, high, low } of await admin.watermarks(topic))
      if (high > low) ends.set(partition, high);
  } finally {
    await admin.close();
  }
  if (ends.size === 0) return;
  const pending = new Set(ends.keys());
  // Idle counts from the first arrival: joining the reader's group alone takes several round
  // trips, more than idleMs behind a slow link, and used to end the read with nothing read.
  let lastArrival = Number.POSITIVE_INFINITY;
  // A topic reader never commits: the suite's view must not move anyone's offsets.
  const reader = appendTimeReaderPort(brokers, "chaos-audit").topicReader({
    topic,
    from: "earliest",
    isolation: "read_committed",
    maxWaitMs: 200,
  });
  const deliver = (batches: readonly RecordBatch[]) => {
    for (const batch of batches) {
      for (const r of batch.records) {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(r.headers)) headers[k] = v.toString();
        onRecord({
          partition: r.partition,
          offset: r.offset,
          timestampMs: r.timestampMs,
          key: r.key?.toString() ?? "",
          value: r.value ?? Buffer.alloc(0),
          headers,
        });
      }
      // A transactional topic ends with a commit marker no reader sees; there the reader
      // stops when nothing has arrived for idleMs.
      const last = batch.records.at(-1);
      if (last && last.offset >= (ends.get(batch.partition) ?? 0) - 1) pending.delete(batch.partition);
    }
  };
  // A record the caller rejects ends the read with its error (thrown into the reader, the client
  // would deliver the batch again and again).
  let failure: unknown;
  await reader.start((batches) => {
    if (failure !== undefined) return;
    try {
      deliver(batches);
    } catch (e) {
      failure = e;
    }
    lastArrival = Date.now();
  });
  const deadline = Date.now() + timeoutMs;
  while (
    failure === undefined &&
    pending.size > 0 &&
    Date.now() - lastArrival < idleMs &&
    Date.now() < deadline
  )
    await sleep(100);
  await reader.close();
  if (failure !== undefined) throw failure;
}
