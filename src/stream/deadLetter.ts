// Undecodable or invalid records go to the dead-letter topic with their original bytes and
// headers naming the reason and the source, so nothing is lost and each can be replayed once
// fixed. The consumer commits a dead-lettered record only after the DLQ acknowledged it.
import type { DecodeError } from "../codec/decodeError.js";
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
} as const;

export class DeadLetterPublisher {
  readonly #publish: PublishRecords;
  readonly #topic: string;

  constructor({ publish, topic }: { publish: PublishRecords; topic: string }) {
    this.#publish = publish;
    this.#topic = topic;
  }

  async publish(letters: readonly DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    await this.#publish(
      letters.map((l) => ({
        topic: this.#topic,
        key: l.key,
        value: l.value,
        headers: {
          ...(l.headers ?? {}),
          [DLQ_HEADERS.reason]: l.error.kind,
          [DLQ_HEADERS.message]: l.error.message,
          ...(l.error.field !== undefined ? { [DLQ_HEADERS.field]: l.error.field } : {}),
          ...(l.error.frameIndex !== undefined
            ? { [DLQ_HEADERS.frameIndex]: String(l.error.frameIndex) }
            : {}),
          ...(l.error.byteOffset !== undefined
            ? { [DLQ_HEADERS.byteOffset]: String(l.error.byteOffset) }
            : {}),
          [DLQ_HEADERS.sourceTopic]: l.topic,
          [DLQ_HEADERS.sourcePartition]: String(l.partition),
          [DLQ_HEADERS.sourceOffset]: String(l.offset),
          [DLQ_HEADERS.sourceTimestamp]: String(l.timestampMs),
        },
      })),
    );
  }
}
