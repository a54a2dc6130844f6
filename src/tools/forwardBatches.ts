// The passthrough that benches and tests measure the Kafka port with: what `serve` does with a
// handover, minus the scoring.
import type { OutgoingRecord, PartitionOffset, RecordBatch, RecordSink } from "../stream/kafkaPort.js";

/**
 * Publishes every record's key and value to `topic`, then hands the batches' offsets to `commit`:
 * the outputs acknowledged first, as `serve` does, so a crash in between repeats and never
 * loses. `commit` is the source's own (awaited per hand-over) or, to commit as `serve` does,
 * an OffsetCommitter's. Returns how many records went out.
 */
export async function forwardBatches(
  batches: readonly RecordBatch[],
  topic: string,
  sink: RecordSink,
  commit: (offsets: readonly PartitionOffset[]) => Promise<void> | void,
): Promise<number> {
  // A plain loop: the benches count this process's CPU per record.
  const out: OutgoingRecord[] = [];
  for (const b of batches) for (const r of b.records) out.push({ topic, key: r.key, value: r.value });
  await sink.publish(out);
  await commit(
    batches.map((b) => ({ topic: b.topic, partition: b.partition, offset: b.records.at(-1)!.offset + 1 })),
  );
  return out.length;
}
