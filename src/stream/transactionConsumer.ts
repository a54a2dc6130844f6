// The `transactions` consumer group. Each delivered batch is decoded here (either framing),
// hashed once, and handed to the one scoring queue; bad records go to the DLQ.
// At-least-once (default): a record's offset is committed only after every decision (or dead
// letter) of it is acknowledged and any card-state work deferred for it has been applied
// (OffsetCommitter): nothing lost, nothing silently dropped.
// Exactly-once: a delivery's decisions, dead letters and offsets are one Kafka transaction,
// committed before the next delivery is taken.
import type { Logger } from "pino";
import type { DecodeError } from "../codec/decodeError.js";
import { computeFeatureHashes } from "../ingest/featureHashes.js";
import { decodeTransactionRecord, type RecordTransaction } from "../ingest/decodeTransactionRecord.js";
import { MAX_FRAMES_PER_RECORD, streamPosition } from "../scoring/ports.js";
import type { ScoringItem } from "../scoring/scoreBatch.js";
import type { DeadLetter, DeadLetterPublisher } from "./deadLetter.js";
import type { ConsumedRecord, RecordBatch, RecordSource } from "./kafkaPort.js";
import { OffsetCommitter } from "./offsetCommitter.js";
import type { ScoringQueue } from "./scoringQueue.js";
import type { TransactionScope } from "./transactionScope.js";

export interface TransactionConsumerOptions {
  readonly source: RecordSource;
  readonly maxFrameBytes: number;
  readonly queue: ScoringQueue;
  readonly deadLetters: DeadLetterPublisher;
  /** Present in exactly-once mode: offsets are committed inside its transactions. */
  readonly transactions?: TransactionScope | undefined;
  /** Known Transaction schema ids; grows when an unknown id turns out to be one. */
  readonly transactionSchemaIds: Set<number>;
  /** Asks the registry whether an unseen schema id holds fraud.v1.Transaction. */
  readonly isTransactionSchema: (schemaId: number) => Promise<boolean>;
  readonly logger: Logger;
  readonly onDeadLetter?: (reason: string) => void;
  readonly onDecoded?: (decodeUs: number) => void;
  /** Resolves when the card-state work deferred so far has been applied (or given up). */
  readonly stateSettled?: () => Promise<unknown>;
  /**
   * Exactly-once: resolves when a delivery's transaction may commit as far as the card-state work
   * deferred for it goes (serve: once applied, unless the store stalls while the delivery's
   * decisions still have budget). `newestRecordMs`: the timestamp of its newest record.
   */
  readonly deliveryStateSettled?: (newestRecordMs: number) => Promise<unknown>;
  /**
   * Resolves when the deferred card-state work has room for more: in a backlog the rules decide
   * faster than state is applied, and the consumer waits here rather than let that work pile up
   * (DeferredStateLane.room). Exactly-once waits for all of it per delivery anyway.
   */
  readonly stateRoom?: () => Promise<unknown>;
  /** Shortest time between two offset commits (at-least-once; OffsetCommitter). */
  readonly commitIntervalMs: number;
  /** Transactions queued for scoring beyond which the source waits before handing more. */
  readonly maxQueuedItems: number;
  /**
   * Decisions or dead letters that could not be published even after the producer's retries:
   * their offsets are never committed, and the process should stop (and be restarted) so they
   * are decided again, rather than carry on past them.
   */
  readonly onFatal: (err: unknown) => void;
}

type Decoded = { ok: true; value: RecordTransaction[] } | { ok: false; error: DecodeError };

const EMPTY = Buffer.alloc(0);

/** A Confluent-framed record whose schema id the registry has not been asked about yet. */
const isUnknownSchema = (decoded: Decoded, bytes: Buffer): boolean =>
  !decoded.ok && decoded.error.kind === "unknown_schema_id" && bytes.length >= 5;

const tooManyFrames = (count: number): DecodeError => ({
  kind: "value_out_of_range",
  message: `record holds ${count} transactions; at most ${MAX_FRAMES_PER_RECORD - 1} fit one record`,
});

/**
 * Records waiting for the registry, or transactions behind one that is, before the consumer
 * stops taking deliveries. Far above the scoring queue's bound: they are mostly records nobody
 * waits for (a stream of made-up schema ids, the malformed corpus: 14,000 distinct ids, which a
 * registry on a loaded machine answered at 20-50 a second), and stopping deliveries for them
 * stops every card. Bounded by bytes too: such a record may be near the broker's size limit.
 */
const MAX_WAITING_RECORDS = 50_000;
const MAX_WAITING_BYTES = 64 * 1024 * 1024;

const newestTimestampMs = (batches: readonly RecordBatch[]): number => {
  let newest = -Infinity;
  for (const batch of batches)
    for (const record of batch.records) newest = Math.max(newest, record.timestampMs);
  return newest;
};

/** Where one card's records queue: a topic's records of one key (the card id) in one partition. */
const laneOf = (batch: RecordBatch, key: Buffer): string =>
  `${batch.topic}\u0000${batch.partition}\u0000${key.toString("latin1")}`;

export class TransactionConsumer {
  readonly #options: TransactionConsumerOptions;
  readonly #committer: OffsetCommitter;
  #delivering: Promise<void> = Promise.resolve();
  /**
   * Cards with a record waiting for the registry (a schema id not seen before): each lane's
   * promise resolves once its last record is handed on. A card's later records wait behind it,
   * so its transactions are still scored in offset order; other cards' records do not wait.
   */
  readonly #lanes = new Map<string, Promise<void>>();
  #waiting = 0;
  #waitingBytes = 0;

  constructor(options: TransactionConsumerOptions) {
    this.#options = options;
    this.#committer = new OffsetCommitter({
      commit: (offsets) => options.source.commit(offsets),
      intervalMs: options.commitIntervalMs,
      // A commit lost to a rebalance only means the new owner re-decides a few records.
      onError: (err, offsets) =>
        options.logger.warn(
          { err, partitions: offsets.map((o) => `${o.topic}[${o.partition}]`) },
          "offset commit failed",
        ),
    });
  }

  start(): Promise<void> {
    return this.#options.source.start((batches) => {
      const delivery = this.#deliver(batches);
      this.#delivering = delivery.catch(() => undefined);
      return delivery;
    });
  }

  /**
   * Stops taking batches, finishes the one in hand, waits for its state work, commits its
   * offsets and leaves the group. `drain` waits for the scoring queue and state lane.
   */
  async stop(drain: () => Promise<void> = async () => {}): Promise<void> {
    this.#options.source.pause();
    await this.#delivering;
    await Promise.allSettled(this.#lanes.values());
    await drain();
    await this.#committer.flush();
    await this.#options.source.close();
  }

  async #deliver(batches: readonly RecordBatch[]): Promise<void> {
    const { queue, deadLetters, transactions } = this.#options;
    const handled: Promise<unknown>[] = [];
    /** What this delivery handed on at once (not what waits for the registry). */
    const handedOn: Promise<unknown>[] = [];
    for (const batch of batches) {
      const { items, letters, waiting } = await this.#decodeBatch(batch);
      const now = Promise.all([queue.submit(items), deadLetters.publish(letters)]);
      const batchHandled = Promise.all([now, ...waiting]);
      handedOn.push(now);
      handled.push(batchHandled);
      if (transactions) continue;
      // The batch is handed over, not waited for: waiting for acknowledgements here would put
      // a produce round trip in every transaction's queue time. The commit waits instead: it
      // follows the decisions' and dead letters' acknowledgements (those of records still
      // waiting for the registry too) and any card-state work deferred for them.
      batchHandled.catch((err: unknown) => this.#options.onFatal(err));
      const last = batch.records[batch.records.length - 1]!.offset;
      const settled = batchHandled.then(() => this.#options.stateSettled?.());
      this.#committer.track(batch.topic, batch.partition, last, settled);
    }
    if (transactions) {
      // One delivery, one transaction: its decisions are already written inside it.
      try {
        await Promise.all(handled);
        await this.#options.deliveryStateSettled?.(newestTimestampMs(batches));
        await transactions.commit(batches);
      } catch (err) {
        this.#options.onFatal(err);
        throw err;
      }
      return;
    }
    // Backpressure: past this much queued work, wait for what this delivery queued; past this
    // much waiting for the registry, for that too. Not for the registry on a full queue alone:
    // lookups far behind would then stop every card's deliveries.
    if (this.#waiting > MAX_WAITING_RECORDS || this.#waitingBytes > MAX_WAITING_BYTES)
      await Promise.all(handled).catch(() => undefined);
    else if (queue.depth > this.#options.maxQueuedItems) await Promise.all(handedOn).catch(() => undefined);
    await this.#options.stateRoom?.();
  }

  // Decoding is synchronous and timed once per batch: a clock read, an await and a histogram
  // observation per record cost more than the decode of a small transaction. A record framed
  // with a schema id not yet known waits for the registry, and its card's later transactions
  // behind it, off the batch's path: with hundreds of new ids a second (the malformed corpus),
  // lookups one after another held every card's transactions for minutes. `waiting` resolves
  // when those records' decisions or dead letters are acknowledged.
  async #decodeBatch(
    batch: RecordBatch,
  ): Promise<{ items: ScoringItem[]; letters: DeadLetter[]; waiting: Promise<unknown>[] }> {
    const items: ScoringItem[] = [];
    const letters: DeadLetter[] = [];
    const waiting: Promise<unknown>[] = [];
    const t0 = performance.now();
    for (const record of batch.records) {
      const bytes = record.value ?? EMPTY;
      let decoded = this.#decode(bytes);
      const unknownSchema = isUnknownSchema(decoded, bytes);
      // The lane's name (a string built from the key) only matters while some record waits for
      // the registry: almost never, so the common record builds none and looks nothing up.
      const lane =
        record.key === null || (!unknownSchema && this.#lanes.size === 0)
          ? undefined
          : laneOf(batch, record.key);
      const ahead = lane === undefined ? undefined : this.#lanes.get(lane);
      // A dead letter changes no card state, so it waits for nothing; a transaction of a card
      // with a record waiting ahead of it waits behind that record.
      if (unknownSchema && lane !== undefined) {
        // The lookup starts now, so lookups run in arrival order whatever lane they are in.
        const decoding = this.#decodeAfterLookup(bytes, decoded);
        waiting.push(this.#waitBehind(lane, ahead ?? Promise.resolve(), record, decoding));
        continue;
      }
      if (decoded.ok && ahead !== undefined) {
        waiting.push(this.#waitBehind(lane!, ahead, record, Promise.resolve(decoded)));
        continue;
      }
      // Without a key there is no card to queue behind: the batch waits, in order.
      if (unknownSchema) decoded = await this.#decodeAfterLookup(bytes, decoded);
      this.#route(record, decoded, items, letters);
    }
    // Every item carries the batch's average (decode and hashes together, as before).
    const decodeUs = ((performance.now() - t0) * 1000) / Math.max(1, items.length);
    for (const item of items) (item as { decodeUs: number }).decodeUs = decodeUs;
    if (items.length > 0) this.#options.onDecoded?.(decodeUs);
    return { items, letters, waiting };
  }

  /**
   * Hands `record` on, as `decoding` (which may be waiting for the registry) decides, once the
   * lane's records ahead of it are handed on; resolves when its decisions or dead letter are
   * acknowledged. A failed lookup fails the record and everything behind it.
   */
  #waitBehind(
    lane: string,
    ahead: Promise<void>,
    record: ConsumedRecord,
    decoding: Promise<Decoded>,
  ): Promise<unknown> {
    const { queue, deadLetters } = this.#options;
    const size = record.value?.length ?? 0;
    this.#waiting++;
    this.#waitingBytes += size;
    let acknowledged: Promise<unknown> = Promise.resolve();
    const handedOn = Promise.all([decoding, ahead]).then(([decoded]) => {
      const items: ScoringItem[] = [];
      const letters: DeadLetter[] = [];
      this.#route(record, decoded, items, letters);
      acknowledged = Promise.all([queue.submit(items), deadLetters.publish(letters)]);
    });
    this.#lanes.set(lane, handedOn);
    void handedOn
      .finally(() => {
        this.#waiting--;
        this.#waitingBytes -= size;
        if (this.#lanes.get(lane) === handedOn) this.#lanes.delete(lane);
      })
      .catch(() => undefined);
    return handedOn.then(() => acknowledged);
  }

  #route(record: ConsumedRecord, decoded: Decoded, items: ScoringItem[], letters: DeadLetter[]): void {
    if (!decoded.ok) {
      letters.push({ ...record, error: decoded.error });
      this.#options.onDeadLetter?.(decoded.error.kind);
      return;
    }
    const budgetStartMs = record.timestampMs;
    const frames = decoded.value;
    for (let frameIndex = 0; frameIndex < frames.length; frameIndex++) {
      const { tx, payload } = frames[frameIndex]!;
      items.push({
        tx,
        payload,
        hashes: computeFeatureHashes(tx),
        position: streamPosition(record.offset, frameIndex),
        budgetStartMs,
        decodeUs: 0,
      });
    }
  }

  #decode(bytes: Buffer): Decoded {
    const { transactionSchemaIds, maxFrameBytes } = this.#options;
    const decoded = decodeTransactionRecord(bytes, { transactionSchemaIds, maxFrameBytes });
    if (decoded.ok && decoded.value.length >= MAX_FRAMES_PER_RECORD) {
      return { ok: false, error: tooManyFrames(decoded.value.length) };
    }
    return decoded;
  }

  async #decodeAfterLookup(bytes: Buffer, failed: Decoded): Promise<Decoded> {
    const { transactionSchemaIds, isTransactionSchema, logger } = this.#options;
    const schemaId = bytes.readUInt32BE(1);
    try {
      if (!(await isTransactionSchema(schemaId))) return failed;
    } catch (err) {
      // Registry unreachable: the record cannot be read now; fail the delivery (the process
      // stops uncommitted) rather than dead-letter a record that may be perfectly good.
      logger.error({ err, schemaId }, "schema registry lookup failed");
      throw err;
    }
    transactionSchemaIds.add(schemaId);
    return this.#decode(bytes);
  }
}
