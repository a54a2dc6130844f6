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
    // The broker recognises a re-sent batch by the last five batches it keeps per producer and
    // partition; a re-send older than those is refused as out of sequence, and the client then
    // re-sends it under a fresh producer id, written twice. Five in flight per connection (the
    // client's default, Java's cap for idempotence) keeps every re-send within that window.
    maxInflights: 5,
    partitioner: compatibilityPartitioner,
  } satisfies ProducerOptions<Buffer, Buffer, Buffer, Buffer>;
}

export class PlatformaticSink implements RecordSink {
  readonly #producer: BufferProducer;
  readonly #requests: CoalescingSend<OutgoingRecord>;

  constructor(producer: BufferProducer) {
    this.#producer = producer;
    // Requests bounded like a transaction's chunks (produceChunks.ts): the same estimate and limit.
    this.#requests = new CoalescingSend({
      send: async (records) => {
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
      maxBytes: MAX_SEND_BYTES,
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

  close(): Promise<void> {
    return this.#producer.close();
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
