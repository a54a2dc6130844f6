// Undecodable or invalid records go to the dead-letter topic with their original bytes and
// headers naming the reason and the source, so nothing is lost and each can be replayed once
// fixed. The consumer commits a dead-lettered record only after the DLQ acknowledged it.
import type { Kafka, Producer } from "kafkajs";
import type { DecodeError } from "../codec/decodeError.js";

export interface DeadLetter {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly timestamp: string;
  readonly headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined> | undefined;
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
  readonly #producer: Producer;
  readonly #topic: string;

  constructor({ kafka, topic }: { kafka: Kafka; topic: string }) {
    this.#producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
    });
    this.#topic = topic;
  }

  connect(): Promise<void> {
    return this.#producer.connect();
  }

  disconnect(): Promise<void> {
    return this.#producer.disconnect();
  }

  async publish(letters: readonly DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    await this.#producer.send({
      topic: this.#topic,
      acks: -1,
      messages: letters.map((l) => ({
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
          [DLQ_HEADERS.sourceOffset]: l.offset,
          [DLQ_HEADERS.sourceTimestamp]: l.timestamp,
        },
      })),
    });
  }
}
