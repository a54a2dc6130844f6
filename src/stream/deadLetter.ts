// Undecodable or invalid records go to the dead-letter topic with their original bytes and
// headers naming the reason and the source, so nothing is lost and each can be replayed once
// fixed. The consumer commits a dead-lettered record only after the DLQ acknowledged it.
//
// A dead letter is its record plus headers, so one near the input topic's size limit can pass
// the DLQ's: the broker refuses it (MESSAGE_TOO_LARGE, which no retry cures) and the scorer
// stopped on every restart at the same record. The stack creates the DLQ with room to spare
// (stack/topics.ts); for a DLQ made elsewhere, a letter over its limit goes with its value cut
// short and headers saying so, the whole record staying in the input topic until retention.
import { createHash } from "node:crypto";
import type { DecodeError } from "../codec/decodeError.js";
import type { OutgoingRecord } from "./kafkaPort.js";
import type { PublishRecords } from "./decisionProducer.js";

export interface DeadLetter {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly timestampMs: number;
  readonly headers?: Readonly<Record<string, Buffer | string>> | undefined;
  readonly error: DecodeError;
}

export const DLQ_HEADERS = {
  reason: "dlq.reason",
  message: "dlq.message",
  field: "dlq.field",
  frameIndex: "dlq.frame-index",
  byteOffset: "dlq.byte-offset",
  sourceTopic: "dlq.source.topic",
  sourcePartition: "dlq.source.partition",
  sourceOffset: "dlq.source.offset",
  sourceTimestamp: "dlq.source.timestamp",
  /** Present (= "true") only on a letter whose value was cut to fit the DLQ's size limit. */
  truncated: "dlq.truncated",
  originalLength: "dlq.original.length",
  originalSha256: "dlq.original.sha256",
} as const;

/**
 * Room left for what the size estimate below does not count: the record batch's header (61
 * bytes), each record's varints and attributes. Generous, since a letter cut is rare.
 */
const BATCH_OVERHEAD_BYTES = 1024;

const byteLength = (b: Buffer | string | null | undefined) =>
  b == null ? 0 : typeof b === "string" ? Buffer.byteLength(b) : b.length;

const sizeWithoutValue = (record: OutgoingRecord) => {
  let bytes = BATCH_OVERHEAD_BYTES + byteLength(record.key);
  for (const [k, v] of Object.entries(record.headers ?? {})) bytes += byteLength(k) + byteLength(v) + 8;
  return bytes;
};

export interface DeadLetterPublisherOptions {
  readonly publish: PublishRecords;
  readonly topic: string;
  /** The DLQ's max.message.bytes; a letter that would pass it is cut to fit. */
  readonly maxRecordBytes?: number | undefined;
  readonly onTruncated?: ((letter: DeadLetter) => void) | undefined;
}

export class DeadLetterPublisher {
  readonly #publish: PublishRecords;
  readonly #topic: string;
  readonly #maxRecordBytes: number;
  readonly #onTruncated: (letter: DeadLetter) => void;

  constructor({
    publish,
    topic,
    maxRecordBytes = Number.POSITIVE_INFINITY,
    onTruncated = () => {},
  }: DeadLetterPublisherOptions) {
    this.#publish = publish;
    this.#topic = topic;
    this.#maxRecordBytes = maxRecordBytes;
    this.#onTruncated = onTruncated;
  }

  async publish(letters: readonly DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    await this.#publish(letters.map((l) => this.#fitted(l, this.#record(l))));
  }

  #fitted(letter: DeadLetter, record: OutgoingRecord): OutgoingRecord {
    const value = letter.value;
    if (value === null || sizeWithoutValue(record) + value.length <= this.#maxRecordBytes) return record;
    const headers = {
      ...record.headers,
      [DLQ_HEADERS.truncated]: "true",
      [DLQ_HEADERS.originalLength]: String(value.length),
      [DLQ_HEADERS.originalSha256]: createHash("sha256").update(value).digest("hex"),
    };
    const room = this.#maxRecordBytes - sizeWithoutValue({ ...record, headers });
    this.#onTruncated(letter);
    return { ...record, headers, value: value.subarray(0, Math.max(0, room)) };
  }

  #record(l: DeadLetter): OutgoingRecord {
    return {
      topic: this.#topic,
      key: l.key,
      value: l.value,
      headers: {
        ...(l.headers ?? {}),
        [DLQ_HEADERS.reason]: l.error.kind,
        [DLQ_HEADERS.message]: l.error.message,
        ...(l.error.field !== undefined ? { [DLQ_HEADERS.field]: l.error.field } : {}),
        ...(l.error.frameIndex !== undefined ? { [DLQ_HEADERS.frameIndex]: String(l.error.frameIndex) } : {}),
        ...(l.error.byteOffset !== undefined ? { [DLQ_HEADERS.byteOffset]: String(l.error.byteOffset) } : {}),
        [DLQ_HEADERS.sourceTopic]: l.topic,
        [DLQ_HEADERS.sourcePartition]: String(l.partition),
        [DLQ_HEADERS.sourceOffset]: String(l.offset),
        [DLQ_HEADERS.sourceTimestamp]: String(l.timestampMs),
      },
    };
  }
}
