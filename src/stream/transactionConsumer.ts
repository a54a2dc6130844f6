// The `transactions` consumer group. Each owned partition's batches are decoded here (either
// framing), hashed once, and handed to the one scoring queue; bad records go to the DLQ.
// A record's offset is committed only after every decision (or dead letter) of it is
// acknowledged and any card-state work deferred for it has been applied (OffsetCommitter):
// at-least-once for decisions and for state, nothing lost, nothing silently dropped.
import type { Consumer, EachBatchPayload, Kafka } from "kafkajs";
import type { Logger } from "pino";
import type { DecodeError } from "../codec/decodeError.js";
import { computeFeatureHashes } from "../ingest/featureHashes.js";
import { decodeTransactionRecord, type RecordTransaction } from "../ingest/decodeTransactionRecord.js";
import { MAX_FRAMES_PER_RECORD, streamPosition } from "../scoring/ports.js";
import type { ScoringItem } from "../scoring/scoreBatch.js";
import type { DeadLetter, DeadLetterPublisher } from "./deadLetter.js";
import { OffsetCommitter } from "./offsetCommitter.js";
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
  /** Resolves when the card-state work deferred so far has been applied (or given up). */
  readonly stateSettled?: () => Promise<unknown>;
  /** Transactions queued for scoring beyond which a partition waits before fetching more. */
  readonly maxQueuedItems: number;
  /**
   * Decisions or dead letters that could not be published even after the producer's retries:
   * their offsets are never committed, and the process should stop (and be restarted) so they
   * are decided again, rather than carry on past them.
   */
  readonly onFatal?: (err: unknown) => void;
}

const tooManyFrames = (count: number): DecodeError => ({
  kind: "value_out_of_range",
  message: `record holds ${count} transactions; at most ${MAX_FRAMES_PER_RECORD - 1} fit one record`,
});

export class TransactionConsumer {
  readonly #options: TransactionConsumerOptions;
  readonly #consumer: Consumer;
  readonly #committer: OffsetCommitter;
  #joined: Promise<void>;
  #activeBatches = 0;

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
    this.#committer = new OffsetCommitter({
      commit: (topic, partition, offset) => this.#consumer.commitOffsets([{ topic, partition, offset }]),
      // A commit lost to a rebalance only means the new owner re-decides a few records.
      onError: (err, topic, partition) =>
        options.logger.warn({ err, topic, partition }, "offset commit failed"),
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
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: (payload) => this.#eachBatch(payload),
    });
  }

  /**
   * Stops fetching, finishes the batches in hand, waits for their state work, commits their
   * offsets and leaves the group. `drain` waits for the scoring queue and state lane.
   */
  async stop(drain: () => Promise<void> = async () => {}): Promise<void> {
    this.#consumer.pause([{ topic: this.#options.topic }]);
    while (this.#activeBatches > 0) await new Promise((r) => setTimeout(r, 10));
    await drain();
    await this.#committer.flush();
    await this.#consumer.disconnect();
  }

  async #eachBatch(payload: EachBatchPayload) {
    this.#activeBatches++;
    try {
      await this.#scoreBatchOf(payload);
    } finally {
      this.#activeBatches--;
    }
  }

  async #scoreBatchOf({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload) {
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
    // The batch is handed over, not waited for: kafkajs fetches a partition's next batch only
    // when this returns, and waiting for acknowledgements here would put a produce round trip
    // in every transaction's queue time. The commit waits instead: it follows the decisions'
    // and dead letters' acknowledgements and any card-state work deferred for them.
    const handled = Promise.all([queue.submit(items), deadLetters.publish(letters)]);
    handled.catch((err: unknown) => this.#options.onFatal?.(err));
    if (items.length + letters.length > 0 && !isStale()) {
      const last = lastProcessedOffset(batch.messages, items, letters);
      resolveOffset(last);
      const settled = handled.then(() => this.#options.stateSettled?.());
      this.#committer.track(batch.topic, batch.partition, Number(last), settled);
    }
    this.#options.onLag?.(batch.partition, Number(batch.offsetLag()));
    // Backpressure: past this much queued work, wait for this batch before fetching more.
    if (queue.depth > this.#options.maxQueuedItems) await handled.catch(() => undefined);
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
