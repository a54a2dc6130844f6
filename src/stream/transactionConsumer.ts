// The `transactions` consumer group. Each owned partition's batches are decoded here (either
// framing), hashed once, and handed to the one scoring queue; bad records go to the DLQ.
// Offsets are resolved only after every decision (or dead letter) of a record is acknowledged,
// and kafkajs commits resolved offsets: at-least-once, nothing lost, nothing silently dropped.
import type { Consumer, EachBatchPayload, Kafka } from "kafkajs";
import type { Logger } from "pino";
import type { DecodeError } from "../codec/decodeError.js";
import { computeFeatureHashes } from "../ingest/featureHashes.js";
import { decodeTransactionRecord, type RecordTransaction } from "../ingest/decodeTransactionRecord.js";
import { MAX_FRAMES_PER_RECORD, streamPosition } from "../scoring/ports.js";
import type { ScoringItem } from "../scoring/scoreBatch.js";
import type { DeadLetter, DeadLetterPublisher } from "./deadLetter.js";
import type { ScoringQueue } from "./scoringQueue.js";

export interface TransactionConsumerOptions {
  readonly kafka: Kafka;
  readonly groupId: string;
  readonly topic: string;
  readonly partitionsConsumedConcurrently: number;
  readonly maxFrameBytes: number;
  readonly queue: ScoringQueue;
  readonly deadLetters: DeadLetterPublisher;
  /** Known Transaction schema ids; grows when an unknown id turns out to be one. */
  readonly transactionSchemaIds: Set<number>;
  /** Asks the registry whether an unseen schema id holds fraud.v1.Transaction. */
  readonly isTransactionSchema: (schemaId: number) => Promise<boolean>;
  readonly logger: Logger;
  readonly onDeadLetter?: (reason: string) => void;
  readonly onLag?: (partition: number, lag: number) => void;
  readonly onDecoded?: (decodeUs: number) => void;
}

const tooManyFrames = (count: number): DecodeError => ({
  kind: "value_out_of_range",
  message: `record holds ${count} transactions; at most ${MAX_FRAMES_PER_RECORD - 1} fit one record`,
});

export class TransactionConsumer {
  readonly #options: TransactionConsumerOptions;
  readonly #consumer: Consumer;
  #joined: Promise<void>;

  constructor(options: TransactionConsumerOptions) {
    this.#options = options;
    this.#consumer = options.kafka.consumer({
      groupId: options.groupId,
      allowAutoTopicCreation: false,
      // The broker answers as soon as one byte is there; this only bounds an idle poll.
      maxWaitTimeInMs: 250,
      sessionTimeout: 30_000,
      heartbeatInterval: 3_000,
    });
    this.#joined = new Promise((resolve) => {
      this.#consumer.on(this.#consumer.events.GROUP_JOIN, () => resolve());
    });
  }

  /** Resolves once this member has joined the group (readiness waits on it). */
  joined(): Promise<void> {
    return this.#joined;
  }

  async start(): Promise<void> {
    const { topic, partitionsConsumedConcurrently } = this.#options;
    await this.#consumer.connect();
    await this.#consumer.subscribe({ topics: [topic], fromBeginning: true });
    await this.#consumer.run({
      partitionsConsumedConcurrently,
      autoCommit: true,
      eachBatchAutoResolve: false,
      eachBatch: (payload) => this.#eachBatch(payload),
    });
  }

  /** Finishes the batches in hand, commits their offsets and leaves the group. */
  stop(): Promise<void> {
    return this.#consumer.disconnect();
  }

  async #eachBatch({
    batch,
    resolveOffset,
    heartbeat,
    commitOffsetsIfNecessary,
    isRunning,
    isStale,
  }: EachBatchPayload) {
    const { queue, deadLetters } = this.#options;
    const items: ScoringItem[] = [];
    const letters: DeadLetter[] = [];
    for (const message of batch.messages) {
      if (!isRunning() || isStale()) break;
      const t0 = performance.now();
      const decoded = await this.#decode(message.value);
      const decodeUs = ((performance.now() - t0) * 1000) / Math.max(1, decoded.ok ? decoded.value.length : 1);
      if (!decoded.ok) {
        letters.push({ ...message, topic: batch.topic, partition: batch.partition, error: decoded.error });
        this.#options.onDeadLetter?.(decoded.error.kind);
        continue;
      }
      this.#options.onDecoded?.(decodeUs);
      const offset = Number(message.offset);
      const budgetStartMs = Number(message.timestamp);
      decoded.value.forEach(({ tx, payload }, frameIndex) =>
        items.push({
          tx,
          payload,
          hashes: computeFeatureHashes(tx),
          position: streamPosition(offset, frameIndex),
          budgetStartMs,
          decodeUs,
        }),
      );
    }
    await Promise.all([queue.submit(items), deadLetters.publish(letters)]);
    if (isStale()) return; // the partition moved during a rebalance; its new owner decides
    const last = batch.messages.at(-1);
    if (last && items.length + letters.length > 0)
      resolveOffset(lastProcessedOffset(batch.messages, items, letters));
    this.#options.onLag?.(batch.partition, Number(batch.offsetLag()));
    await commitOffsetsIfNecessary();
    await heartbeat();
  }

  async #decode(value: Buffer | null) {
    const { transactionSchemaIds, maxFrameBytes, isTransactionSchema, logger } = this.#options;
    const bytes = value ?? Buffer.alloc(0);
    let decoded = decodeTransactionRecord(bytes, { transactionSchemaIds, maxFrameBytes });
    if (!decoded.ok && decoded.error.kind === "unknown_schema_id" && bytes.length >= 5) {
      const schemaId = bytes.readUInt32BE(1);
      try {
        if (await isTransactionSchema(schemaId)) {
          transactionSchemaIds.add(schemaId);
          decoded = decodeTransactionRecord(bytes, { transactionSchemaIds, maxFrameBytes });
        }
      } catch (err) {
        // Registry unreachable: the record cannot be read now; fail the batch so it is retried
        // rather than dead-lettering a record that may be perfectly good.
        logger.error({ err, schemaId }, "schema registry lookup failed");
        throw err;
      }
    }
    if (decoded.ok && decoded.value.length >= MAX_FRAMES_PER_RECORD) {
      return { ok: false as const, error: tooManyFrames(decoded.value.length) };
    }
    return decoded as { ok: true; value: RecordTransaction[] } | { ok: false; error: DecodeError };
  }
}

/** The batch was processed in order up to where it stopped (a stop or a rebalance). */
function lastProcessedOffset(
  messages: EachBatchPayload["batch"]["messages"],
  items: readonly ScoringItem[],
  letters: readonly DeadLetter[],
): string {
  let last = -1;
  for (const item of items) last = Math.max(last, Math.floor(item.position / MAX_FRAMES_PER_RECORD));
  for (const letter of letters) last = Math.max(last, Number(letter.offset));
  return String(last >= 0 ? last : Number(messages[0]!.offset) - 1);
}
