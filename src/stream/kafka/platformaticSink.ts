// RecordSink and TransactionalSink over @platformatic/kafka's producer: idempotent, acks=all,
// Java-compatible key partitioning (murmur2 & 0x7fffffff) so a key lands on the partition
// any other client would pick.
import {
  compatibilityPartitioner,
  ProduceAcks,
  Producer,
  type MessageToProduce,
  type ProducerOptions,
} from "@platformatic/kafka";
import {
  KafkaPortError,
  type OutgoingRecord,
  type RecordBatch,
  type RecordSink,
  type SinkTransaction,
  type TransactionalSink,
} from "../kafkaPort.js";
import { innermostReasons, isStaleLeaderError } from "./clientErrorKind.js";
import { CoalescingSend } from "./coalescingSend.js";
import { sendByPartition } from "./partitionSends.js";
import { lastMessageOf, type PlatformaticSource } from "./platformaticSource.js";
import { estimatedRecordBytes, MAX_SEND_BYTES, produceChunks } from "./produceChunks.js";

type BufferProducer = Producer<Buffer, Buffer, Buffer, Buffer>;
type Transaction = NonNullable<BufferProducer["transaction"]>;

export function toMessage(r: OutgoingRecord): MessageToProduce<Buffer, Buffer, Buffer, Buffer> {
  const message: MessageToProduce<Buffer, Buffer, Buffer, Buffer> = { topic: r.topic };
  if (r.key !== null) message.key = typeof r.key === "string" ? Buffer.from(r.key) : r.key;
  if (r.value !== null) message.value = r.value;
  if (r.partition !== undefined) message.partition = r.partition;
  if (r.timestampMs !== undefined) message.timestamp = BigInt(r.timestampMs);
  if (r.headers !== undefined) {
    const headers = new Map<Buffer, Buffer>();
    for (const [k, v] of Object.entries(r.headers))
      headers.set(Buffer.from(k), typeof v === "string" ? Buffer.from(v) : v);
    message.headers = headers;
  }
  return message;
}

export function producerOptions(base: ProducerOptions<Buffer, Buffer, Buffer, Buffer>) {
  return {
    ...base,
    idempotent: true,
    acks: ProduceAcks.ALL,
    // Ignored while idempotent: @platformatic/kafka 2.12 forces one request in flight per
    // connection (producer.js), which is why a sink pipelines over several producers
    // (coalescingSend.ts). Pinned at Java's cap for idempotence should the client ever honour it:
    // the broker recognises a re-send only among the last five batches per producer and partition.
    maxInflights: 5,
    partitioner: compatibilityPartitioner,
  } satisfies ProducerOptions<Buffer, Buffer, Buffer, Buffer>;
}

/**
 * Per-key order across a sink's producers: a key always lands on one partition, so records of
 * one key leave one after the other; keyless records of a topic keep their order among themselves.
 */
export const orderKeyOf = (r: OutgoingRecord): string =>
  r.key === null
    ? `${r.topic}\u0000-${r.partition ?? ""}`
    : `${r.topic}\u0000+${typeof r.key === "string" ? r.key : r.key.toString("latin1")}`;

export class PlatformaticSink implements RecordSink {
  readonly #producers: readonly BufferProducer[];
  readonly #requests: CoalescingSend<OutgoingRecord>;

  /** One request in flight per producer (the client's limit when idempotent): several producers pipeline. */
  constructor(producers: BufferProducer | readonly BufferProducer[], maxRequestBytes = MAX_SEND_BYTES) {
    this.#producers = Array.isArray(producers) ? producers : [producers as BufferProducer];
    // Requests bounded like a transaction's chunks (produceChunks.ts): the same estimate and limit.
    this.#requests = new CoalescingSend({
      lanes: this.#producers.length,
      orderKeyOf,
      send: async (records, lane) => {
        const producer = this.#producers[lane]!;
        const messages = records.map(toMessage);
        try {
          await producer.send({ messages });
        } catch (err) {
          // After a leader move the client's retries of a multi-partition send go to the wrong
          // broker (partitionSends.ts); one send per partition follows each leader. Only then:
          // per partition costs a round trip per partition (+40 % CPU per record measured), and
          // the client had already given up on the whole send, so partitions it had written are
          // written again (at-least-once; a consumer keeps the first decision per transaction).
          if (!isStaleLeaderError(err)) throw err;
          await sendByPartition(producer, messages);
        }
      },
      maxBytes: Math.min(maxRequestBytes, MAX_SEND_BYTES),
      sizeOf: estimatedRecordBytes,
    });
  }

  async publish(records: readonly OutgoingRecord[]): Promise<void> {
    if (records.length === 0) return;
    try {
      await this.#requests.publish(records);
    } catch (cause) {
      throw new KafkaPortError(
        "publish_failed",
        `could not publish ${records.length} records (${innermostReasons(cause)})`,
        { cause },
      );
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#producers.map((p) => p.close()));
  }
}

export class PlatformaticTransactionalSink implements TransactionalSink {
  readonly #producer: BufferProducer;
  readonly #source: PlatformaticSource;

  constructor(producer: BufferProducer, source: PlatformaticSource) {
    this.#producer = producer;
    this.#source = source;
  }

  async begin(): Promise<SinkTransaction> {
    // The first begin initialises the producer id. @platformatic/kafka 2.12 sends producer id 0
    // and epoch 0 unless told otherwise, which the broker reads as "bump that producer" and
    // answers PRODUCER_FENCED once an earlier instance has used the transactional id (every
    // restart); -1/-1 asks for the id afresh and fences that earlier instance instead.
    const transaction = await this.#producer.beginTransaction({ producerId: -1n, producerEpoch: -1 });
    return new PlatformaticTransaction(transaction, this.#source);
  }

  close(): Promise<void> {
    return this.#producer.close(true);
  }
}

class PlatformaticTransaction implements SinkTransaction {
  readonly #transaction: Transaction;
  readonly #source: PlatformaticSource;

  constructor(transaction: Transaction, source: PlatformaticSource) {
    this.#transaction = transaction;
    this.#source = source;
  }

  async publish(records: readonly OutgoingRecord[]): Promise<void> {
    for (const chunk of produceChunks(records))
      await this.#transaction.send({ messages: chunk.map(toMessage) });
  }

  async commit(consumed: readonly RecordBatch[]): Promise<void> {
    if (consumed.length > 0) {
      await this.#transaction.addConsumer(this.#source.consumer);
      for (const batch of consumed) {
        const last = lastMessageOf.get(batch);
        if (last === undefined)
          throw new KafkaPortError(
            "commit_failed",
            `batch of ${batch.topic}[${batch.partition}] was not consumed here`,
          );
        await this.#transaction.addOffset(last);
      }
    }
    await this.#transaction.commit();
  }

  async abort(): Promise<void> {
    await this.#transaction.abort();
  }
}
