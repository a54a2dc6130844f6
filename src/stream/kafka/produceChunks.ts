// A publish of any size goes out as produce requests the broker accepts. The client puts all
// of one send's records for a partition into one record batch, and the broker refuses a batch
// above its message.max.bytes (1 MiB by default) with MESSAGE_TOO_LARGE, which no retry cures:
// a backlog handed over whole, or a burst of large dead letters, would stop the scorer.
import type { OutgoingRecord } from "../kafkaPort.js";

/**
 * Half the broker's default limit: the estimate below ignores varint and batch-header
 * details, and every partition's batch is at most the whole send.
 */
export const MAX_SEND_BYTES = 512 * 1024;

// Offset and timestamp deltas, lengths, attributes: a record's framing is well under this.
const RECORD_OVERHEAD_BYTES = 32;

const byteLength = (b: Buffer | string | null | undefined) =>
  b == null ? 0 : typeof b === "string" ? Buffer.byteLength(b) : b.length;

export function estimatedRecordBytes(record: OutgoingRecord): number {
  let bytes = RECORD_OVERHEAD_BYTES + byteLength(record.key) + byteLength(record.value);
  if (record.headers !== undefined)
    for (const [k, v] of Object.entries(record.headers)) bytes += byteLength(k) + byteLength(v) + 8;
  return bytes;
}

/**
 * Consecutive runs of `records`, each at most `maxBytes` by estimate (a record larger than
 * that alone is a run of its own: the broker decides). Order is kept, so per-key order is too.
 */
export function produceChunks(
  records: readonly OutgoingRecord[],
  maxBytes = MAX_SEND_BYTES,
): (readonly OutgoingRecord[])[] {
  const chunks: (readonly OutgoingRecord[])[] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < records.length; i++) {
    const size = estimatedRecordBytes(records[i]!);
    if (i > start && bytes + size > maxBytes) {
      chunks.push(records.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += size;
  }
  if (start < records.length) chunks.push(start === 0 ? records : records.slice(start));
  return chunks;
}
