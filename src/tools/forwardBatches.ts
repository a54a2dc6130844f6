// The passthrough that benches and tests measure the Kafka port with: what `serve` does with a
// handover, minus the scoring.
import type { OutgoingRecord, RecordBatch, RecordSink, RecordSource } from "../stream/kafkaPort.js";

/**
 * Publishes every record's key and value to `topic`, then commits the batches' offsets: the
 * outputs acknowledged first, as `serve` does, so a crash in between repeats and never loses.
 * Returns how many records went out.
 */
export async function forwardBatches(
  batches: readonly RecordBatch[],
  topic: string,
  sink: RecordSink,
  source: Pick<RecordSource, "commit">,
): Promise<number> {
  // A plain loop: the benches count this process's CPU per record.
  const out: OutgoingRecord[] = [];
  for (const b of batches) for (const r of b.records) out.push({ topic, key: r.key, value: r.value });
  await sink.publish(out);
  await source.commit(
    batches.map((b) => ({ topic: b.topic, partition: b.partition, offset: b.records.at(-1)!.offset + 1 })),
  );
  return out.length;
}
