// Reads [start, end) of some partitions of a topic with a topic reader (its own throwaway
// group, never committed: reading history leaves no trace on the cluster) and stops once
// every range is read. Shared by topic replay and the recorded-decisions comparison.
import type { ConsumedRecord, KafkaPort, PartitionWatermarks } from "../stream/kafkaPort.js";
import { ReplayInputError } from "./replayRecord.js";

export interface PartitionRange {
  readonly partition: number;
  readonly start: number;
  readonly end: number;
}

export interface ReadRangesOptions {
  readonly kafka: KafkaPort;
  readonly topic: string;
  readonly ranges: readonly PartitionRange[];
  /** Every partition's watermarks: partitions outside `ranges` are started at their end. */
  readonly watermarks: readonly PartitionWatermarks[];
  /** Called with each arriving record inside its range. */
  readonly onRecord: (record: ConsumedRecord) => void;
  /** Called after each delivery: records inside the ranges so far. */
  readonly onProgress?: ((read: number) => void) | undefined;
  /** Give up when no record arrives for this long while some are still expected. */
  readonly idleTimeoutMs?: number | undefined;
}

export async function readPartitionRanges({
  kafka,
  topic,
  ranges,
  watermarks,
  onRecord,
  onProgress,
  idleTimeoutMs = 30_000,
}: ReadRangesOptions): Promise<void> {
  const pending = new Map(ranges.filter((r) => r.end > r.start).map((r) => [r.partition, r]));
  if (pending.size === 0) return;
  const from = new Map(watermarks.map((w) => [w.partition, pending.get(w.partition)?.start ?? w.high]));
  let read = 0;
  let lastProgress = Date.now();
  let finish: () => void = () => {};
  let fail: (err: Error) => void = () => {};
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const reader = kafka.topicReader({
    topic,
    from,
    maxWaitMs: 200,
    onEvent: (event) => {
      if (event.type === "crashed")
        fail(event.error instanceof Error ? event.error : new Error(String(event.error)));
    },
  });
  const idle = setInterval(() => {
    if (Date.now() - lastProgress < idleTimeoutMs) return;
    const where = [...pending.values()].map((r) => `partition ${r.partition} before offset ${r.end}`);
    fail(
      new ReplayInputError(
        `no records arrived for ${idleTimeoutMs / 1000} s; still expecting ${where.join(", ")}`,
      ),
    );
  }, 500);
  try {
    await reader.start((batches) => {
      for (const batch of batches) {
        const range = pending.get(batch.partition);
        if (range === undefined) continue;
        for (const r of batch.records) {
          if (r.offset < range.start || r.offset >= range.end) continue;
          onRecord(r);
          read++;
        }
        lastProgress = Date.now();
        if (batch.records[batch.records.length - 1]!.offset + 1 >= range.end) pending.delete(batch.partition);
      }
      onProgress?.(read);
      if (pending.size === 0) finish();
    });
    await done;
  } finally {
    clearInterval(idle);
    await reader.close();
  }
}
