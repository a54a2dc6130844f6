// RecordSink and TransactionalSink over @platformatic/kafka's producer: idempotent, acks=all,
// Java-compatible key partitioning (murmur2 & 0x7fffffff) so a key lands on the partition
// any other client would pick.
import { setTimeout as sleep } from "node:timers/promises";
import { ProduceAcks, Producer, type MessageToProduce, type ProducerOptions } from "@platformatic/kafka";
import {
  KafkaPortError,
  type OutgoingRecord,
  type RecordBatch,
  type RecordSink,
  type SinkTransaction,
  type TransactionalSink,
} from "../kafkaPort.js";
import {
  innermostReasons,
  isRetriableClientError,
  isStaleLeaderError,
  isUnknownTopicError,
} from "./clientErrorKind.js";
import { RETRY_DELAY_MS } from "./clientOptions.js";
import { CoalescingSend } from "./coalescingSend.js";
import { keyPartitioner } from "./keyPartitioner.js";
import { sendByPartition } from "./partitionSends.js";
import { lastMessageOf, type PlatformaticSource } from "./platformaticSource.js";
import { estimatedRecordBytes, MAX_SEND_BYTES, produceChunks } from "./produceChunks.js";

type BufferProducer = Producer<Buffer, Buffer, Buffer, Buffer>;
type Message = MessageToProduce<Buffer, Buffer, Buffer, Buffer>;
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
    partitioner: keyPartitioner,
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

export interface PlatformaticSinkOptions {
  /** How long a request is sent again after the client's own retries failed (SinkOptions.retryForMs). */
  readonly retryForMs?: number | undefined;
  /** Largest produce request (SinkOptions.maxRequestBytes), capped at MAX_SEND_BYTES. */
  readonly maxRequestBytes?: number | undefined;
}

export class PlatformaticSink implements RecordSink {
  readonly #producers: readonly BufferProducer[];
  readonly #requests: CoalescingSend<OutgoingRecord>;

  /** One request in flight per producer (the client's limit when idempotent): several producers pipeline. */
  constructor(
    producers: BufferProducer | readonly BufferProducer[],
    { retryForMs = 0, maxRequestBytes = MAX_SEND_BYTES }: PlatformaticSinkOptions = {},
  ) {
    this.#producers = Array.isArray(producers) ? producers : [producers as BufferProducer];
    // Requests bounded like a transaction's chunks (produceChunks.ts): the same estimate and limit.
    this.#requests = new CoalescingSend({
      lanes: this.#producers.length,
      orderKeyOf,
      send: (records, lane) => sendWithin(this.#producers[lane]!, records.map(toMessage), retryForMs),
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

  async warm(topics: readonly string[]): Promise<void> {
    if (topics.length === 0) return;
    try {
      // One message per partition: getSendConnections connects to each one's leader.
      const { topics: known } = await this.#producers[0]!.metadata({ topics: [...topics] });
      const messages: Message[] = [];
      for (const topic of topics) {
        const partitions = known.get(topic)?.partitionsCount;
        if (partitions === undefined)
          throw new KafkaPortError("not_found", `topic "${topic}" does not exist`);
        for (let partition = 0; partition < partitions; partition++) messages.push({ topic, partition });
      }
      await Promise.all(
        this.#producers.map(async (producer) => {
          await producer.initIdempotentProducer({});
          await producer.getSendConnections({ messages });
        }),
      );
    } catch (cause) {
      if (cause instanceof KafkaPortError) throw cause;
      throw new KafkaPortError(
        isUnknownTopicError(cause) ? "not_found" : "publish_failed",
        `could not prepare to publish to ${topics.join(", ")} (${innermostReasons(cause)})`,
        { cause },
      );
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#producers.map((p) => p.close()));
  }
}

/**
 * Sends one request, again and again while the client's own (short) retries fail in a way it
 * would retry, for up to `retryForMs`. The window is ours, not the client's retry count: the
 * client retries a failed multi-partition request against the leader of its first partition
 * only, so once a dead broker's partitions have new leaders on two brokers each retry is refused
 * (NOT_LEADER_OR_FOLLOWER) until the count runs out; with the count stretched over a long window
 * (the load generator's 120 s) one request held the sink, every partition, that long
 * (three-brokers: p50 latency 137 s). After a stale leader the request goes one send per
 * partition (partitionSends.ts), each following its own leader; only then: per partition costs
 * a round trip per partition (+40 % CPU per record measured).
 * A request sent again after the client gave up goes under a fresh producer id (the client resets
 * it on a failed send), so partitions an earlier attempt had written are written again:
 * at-least-once, and a consumer keeps the first decision per transaction.
 */
async function sendWithin(producer: BufferProducer, messages: Message[], retryForMs: number): Promise<void> {
  const giveUpAt = Date.now() + retryForMs;
  let byPartition = false;
  for (;;) {
    try {
      await (byPartition ? sendByPartition(producer, messages) : producer.send({ messages }));
      return;
    } catch (err) {
      const leaderMoved: boolean = !byPartition && isStaleLeaderError(err);
      byPartition ||= leaderMoved;
      // A send per partition is tried once after a leader moved even without a window.
      if (!isRetriableClientError(err) || (Date.now() >= giveUpAt && !leaderMoved)) throw err;
      if (!leaderMoved) await sleep(RETRY_DELAY_MS);
    }
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
