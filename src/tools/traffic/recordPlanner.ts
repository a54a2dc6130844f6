// Turns the transaction schedule into the records a gateway would send, ahead of their send
// time: each transaction is routed to its card's partition, encoded straight into its
// partition's open record, and the record is closed when it holds perRecord transactions or
// when its linger window ends (a gateway batching per partition never waits longer than that).
// Records come out in the order they fall due; a card's transactions stay in schedule order in
// its one partition. A record's Kafka timestamp is its first transaction's scheduled time, so
// the wait in the gateway counts as latency downstream, as it would for a real payment.
import { encodeConfluentFrame } from "../../codec/confluent.js";
import { Transaction, type TransactionInit } from "../../codec/messages.js";
import type { CardRoute, CardRouter } from "./cardRouting.js";
import type { OpenLoopSchedule } from "./openLoopSchedule.js";
import type { TrafficSource } from "./trafficSource.js";
import type { TrafficRecord } from "./trafficSink.js";
import { RecordBytes, TransactionFrameWriter, type FrameFacts } from "./transactionFrames.js";

export type TrafficFraming = "delimited" | "confluent";

export interface ScheduledSend {
  readonly index: number;
  readonly transactionId: string;
  readonly cardId: string;
  /** When the transaction was due (whole epoch ms): where its latency starts. */
  readonly scheduledMs: number;
  readonly isFraud?: boolean;
}

export interface PlannedRecord extends TrafficRecord {
  /** When the record may leave: its last transaction's due time, or its linger window's end. */
  readonly dueMs: number;
  readonly transactions: number;
}

export interface RecordPlanOptions {
  readonly schedule: OpenLoopSchedule;
  readonly source: TrafficSource;
  readonly router: CardRouter;
  readonly framing?: TrafficFraming;
  /** Required for Confluent framing: the registered fraud.v1.Transaction schema id. */
  readonly transactionSchemaId?: number;
  /** Most transactions per record (delimited framing only; Confluent frames hold one). */
  readonly perRecord?: number;
  /** A record holding fewer than perRecord leaves when its window of this many ms ends. */
  readonly lingerMs?: number;
  /** Called for each transaction as it is planned, before its record is sent. */
  readonly onScheduled?: (send: ScheduledSend) => void;
}

export class RecordPlanError extends Error {
  override readonly name = "RecordPlanError";

  constructor(
    readonly kind: "bad_packing" | "missing_schema_id",
    message: string,
  ) {
    super(message);
  }
}

interface RouteMemo {
  readonly partitions: number;
  readonly route: CardRoute;
}

interface OpenRecord {
  readonly bytes: RecordBytes;
  key: Buffer;
  timestampMs: number;
  count: number;
}

export class RecordPlanner {
  readonly #schedule: OpenLoopSchedule;
  readonly #source: TrafficSource;
  readonly #router: CardRouter;
  readonly #perRecord: number;
  readonly #lingerMs: number;
  readonly #onScheduled: ((send: ScheduledSend) => void) | undefined;
  readonly #frames: TransactionFrameWriter;
  /** Confluent framing: one frame per record, encoded whole. */
  readonly #confluent: ((tx: TransactionInit) => Buffer) | undefined;
  readonly #open: OpenRecord[];
  /** Partitions with an open record, in the order their records were opened. */
  readonly #opened: number[] = [];
  readonly #scratch = new RecordBytes();
  #next = 0;
  #window = 0;

  constructor({
    schedule,
    source,
    router,
    framing = "delimited",
    transactionSchemaId,
    perRecord = 1,
    lingerMs = 5,
    onScheduled,
  }: RecordPlanOptions) {
    if (!Number.isSafeInteger(perRecord) || perRecord < 1)
      throw new RecordPlanError(
        "bad_packing",
        `transactions per record must be a positive integer, got ${perRecord}`,
      );
    if (perRecord > 1 && framing !== "delimited")
      throw new RecordPlanError("bad_packing", "only delimited records hold more than one transaction");
    if (perRecord > 1 && !(lingerMs > 0))
      throw new RecordPlanError("bad_packing", `packing needs a linger window above 0 ms, got ${lingerMs}`);
    if (framing === "confluent" && transactionSchemaId === undefined)
      throw new RecordPlanError(
        "missing_schema_id",
        "Confluent framing needs the registered Transaction schema id",
      );
    this.#schedule = schedule;
    this.#source = source;
    this.#router = router;
    this.#perRecord = perRecord;
    this.#lingerMs = lingerMs;
    this.#onScheduled = onScheduled;
    this.#frames = new TransactionFrameWriter(source);
    this.#confluent =
      framing === "confluent"
        ? (tx) =>
            encodeConfluentFrame({
              schemaId: transactionSchemaId!,
              messageIndexes: [0],
              payload: Transaction.encode(tx).finish(),
            })
        : undefined;
    this.#open = Array.from({ length: router.partitions }, () => ({
      bytes: new RecordBytes(),
      key: Buffer.alloc(0),
      timestampMs: 0,
      count: 0,
    }));
  }

  /** Transactions planned so far. */
  get planned(): number {
    return this.#next;
  }

  /** Every transaction is planned and every record closed. */
  get exhausted(): boolean {
    return this.#next >= this.#schedule.total && this.#opened.length === 0;
  }

  /**
   * Appends to `out`, in the order they fall due, the records of every transaction due before
   * untilMs, and closes the records whose linger window has ended by then.
   */
  planUntil(untilMs: number, out: PlannedRecord[]): void {
    const end = this.#schedule.dueBy(untilMs);
    if (this.#perRecord === 1) this.#planSingles(end, out);
    else this.#planPacked(end, out);
    if (this.#opened.length === 0) return;
    const windowEndMs = this.#windowEndMs(this.#window);
    if (this.#next >= this.#schedule.total || untilMs >= windowEndMs) this.#closeAll(windowEndMs, out);
  }

  #planSingles(end: number, out: PlannedRecord[]): void {
    const schedule = this.#schedule;
    const bytes = this.#scratch;
    for (; this.#next < end; this.#next++) {
      const i = this.#next;
      const dueMs = schedule.dueAtMs(i);
      const timestampMs = Math.floor(dueMs);
      let facts: FrameFacts;
      let value: Buffer;
      if (this.#confluent) {
        const { tx, isFraud } = this.#source.at(i);
        facts = { cardId: tx.cardId ?? "", ...(isFraud !== undefined ? { isFraud } : {}) };
        value = this.#confluent(tx);
      } else {
        facts = this.#frames.write(i, bytes);
        value = bytes.take();
      }
      this.#announce(i, facts, timestampMs);
      const { partition, key } = this.#routeOf(facts);
      out.push({ partition, key, value, timestampMs, dueMs, transactions: 1 });
    }
  }

  #planPacked(end: number, out: PlannedRecord[]): void {
    const schedule = this.#schedule;
    const scratch = this.#scratch;
    for (; this.#next < end; this.#next++) {
      const i = this.#next;
      const dueMs = schedule.dueAtMs(i);
      const window = Math.floor((dueMs - schedule.startMs) / this.#lingerMs);
      if (window !== this.#window) {
        this.#closeAll(this.#windowEndMs(this.#window), out);
        this.#window = window;
      }
      // The card decides the partition, so the frame is written before its record is known:
      // into a scratch buffer, then appended to the partition's open record.
      const facts = this.#frames.write(i, scratch);
      const timestampMs = Math.floor(dueMs);
      this.#announce(i, facts, timestampMs);
      const { partition, key } = this.#routeOf(facts);
      const open = this.#open[partition]!;
      if (open.count === 0) {
        open.key = key;
        open.timestampMs = timestampMs;
        this.#opened.push(partition);
      }
      open.bytes.bytes(scratch.view());
      scratch.clear();
      if (++open.count === this.#perRecord) {
        out.push(this.#close(partition, dueMs));
        this.#opened.splice(this.#opened.indexOf(partition), 1);
      }
    }
  }

  /**
   * The card's route, kept on the distinct transaction's facts for the next round: a route is
   * a function of card and partition count only, and a Map lookup per transaction by card id
   * missed the cache at low rates.
   */
  #routeOf(facts: FrameFacts): CardRoute {
    const memo = facts.memo as RouteMemo | undefined;
    if (memo !== undefined && memo.partitions === this.#router.partitions) return memo.route;
    const route = this.#router.route(facts.cardId);
    if ("memo" in facts) facts.memo = { partitions: this.#router.partitions, route } satisfies RouteMemo;
    return route;
  }

  #announce(index: number, facts: FrameFacts, scheduledMs: number): void {
    if (this.#onScheduled === undefined) return;
    this.#onScheduled({
      index,
      transactionId: this.#confluent
        ? (this.#source.at(index).tx.transactionId ?? "")
        : this.#frames.transactionId(index),
      cardId: facts.cardId,
      scheduledMs,
      ...(facts.isFraud !== undefined ? { isFraud: facts.isFraud } : {}),
    });
  }

  #windowEndMs(window: number): number {
    return this.#schedule.startMs + (window + 1) * this.#lingerMs;
  }

  #close(partition: number, dueMs: number): PlannedRecord {
    const open = this.#open[partition]!;
    const record = {
      partition,
      key: open.key,
      value: open.bytes.take(),
      timestampMs: open.timestampMs,
      dueMs,
      transactions: open.count,
    };
    open.count = 0;
    return record;
  }

  #closeAll(dueMs: number, out: PlannedRecord[]): void {
    for (const partition of this.#opened) out.push(this.#close(partition, dueMs));
    this.#opened.length = 0;
  }
}
