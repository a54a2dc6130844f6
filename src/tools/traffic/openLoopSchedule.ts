// Open-loop load: send i is due at start + i / rate, whatever happened to send i - 1. A closed
// loop (send, wait for the ack, send the next) slows down with the broker and so never sees the
// queueing a slow broker causes; here every record carries its scheduled time as its
// timestamp, so lateness anywhere — our own included — shows up as latency.
import { setTimeout as sleep } from "node:timers/promises";
import { SendLag } from "./sendLag.js";

export interface OpenLoopPlan {
  /** Epoch ms of send 0. */
  readonly startMs: number;
  readonly ratePerSecond: number;
  /** How many sends; or durationMs × rate when absent. */
  readonly count?: number;
  readonly durationMs?: number;
}

export class OpenLoopSchedule {
  readonly startMs: number;
  readonly ratePerSecond: number;
  readonly total: number;
  readonly #intervalMs: number;

  constructor({ startMs, ratePerSecond, count, durationMs }: OpenLoopPlan) {
    if (!(ratePerSecond > 0) || !Number.isFinite(ratePerSecond))
      throw new RangeError(`rate must be a positive number of sends per second, got ${ratePerSecond}`);
    if (count === undefined && durationMs === undefined) throw new RangeError("give a count or a duration");
    const total = count ?? Math.floor(((durationMs ?? 0) * ratePerSecond) / 1000);
    if (!Number.isSafeInteger(total) || total < 0) throw new RangeError(`cannot plan ${total} sends`);
    this.startMs = startMs;
    this.ratePerSecond = ratePerSecond;
    this.total = total;
    this.#intervalMs = 1000 / ratePerSecond;
  }

  /** When send i is due (epoch ms, fractional). */
  dueAtMs(i: number): number {
    return this.startMs + i * this.#intervalMs;
  }

  /** The record timestamp of send i: its due time, never later (Kafka timestamps are whole ms). */
  timestampMs(i: number): number {
    return Math.floor(this.dueAtMs(i));
  }

  /** How many sends are due at nowMs (the indexes below this number). */
  dueBy(nowMs: number): number {
    if (nowMs < this.startMs) return 0;
    return Math.min(this.total, Math.floor(((nowMs - this.startMs) * this.ratePerSecond) / 1000) + 1);
  }

  get endMs(): number {
    return this.total === 0 ? this.startMs : this.dueAtMs(this.total - 1);
  }
}

export interface LoopClock {
  nowMs(): number;
  sleep(ms: number): Promise<void>;
}

export const realLoopClock: LoopClock = {
  nowMs: () => performance.timeOrigin + performance.now(),
  sleep: (ms) => sleep(ms),
};

/** What the loop sends: anything with a due time and a transaction count. */
export interface DueRecord {
  readonly dueMs: number;
  readonly transactions: number;
}

/** Plans records ahead of the schedule (RecordPlanner is one). */
export interface RecordPlan<R extends DueRecord> {
  /** Appends, in due order, every record that falls due before untilMs. */
  planUntil(untilMs: number, out: R[]): void;
  readonly exhausted: boolean;
}

export interface OpenLoopRun<R extends DueRecord> {
  readonly plan: RecordPlan<R>;
  /**
   * Sends records that have fallen due. Not awaited before the next sends are issued: the
   * schedule, not the broker, sets the pace. Awaited only to bound memory (maxInFlight) and at
   * the end.
   */
  readonly send: (records: R[]) => Promise<void>;
  readonly clock?: LoopClock;
  /**
   * The pacing tick: the loop wakes at most once per tick and hands everything due to one send
   * call. Each wake-up (about 100 µs of CPU on the shared 2-core bench machine) and each produce
   * request (about 1 ms) has a fixed cost, so the tick, not the record count, sets the fixed
   * cost; pacingTickMs picks one for a rate. Sends leave up to one tick late; their timestamps
   * stay their due times, and the send lag shows it.
   */
  readonly tickMs?: number;
  /** How far ahead of the clock records are planned (encoded): the slack that absorbs planning. */
  readonly aheadMs?: number;
  /** Most records handed to one send call. */
  readonly maxPerSend?: number;
  /** Send calls pending at once before the loop waits (a safety net, counted as stalls). */
  readonly maxInFlight?: number;
  readonly lag?: SendLag;
  readonly signal?: AbortSignal;
}

/** Shortest and longest pacing tick, ms, and the transactions one tick aims to carry. */
const MIN_TICK_MS = 5;
const MAX_TICK_MS = 10;
const TRANSACTIONS_PER_TICK = 200;

/**
 * The tick for a rate. A tick with a Kafka produce request costs about 1 ms of CPU on the
 * shared 2-core bench machine (1,000 tx/s: 123, 58 and 23 µs per transaction at 10, 20 and 50
 * ms ticks; 10,000 tx/s: 14.4, 9.6 and 6.6), a record about 5 µs; so a tick should carry about
 * 200 transactions to keep the fixed part near 5 µs each. It never adds more than 10 ms of send
 * lag: latency is measured from each record's due time, so the generator's lag counts against
 * the scorer's p99 (50 ms at 1,000 tx/s), and a gateway's linger is rarely longer. Below about
 * 20,000 tx/s the fixed cost per transaction therefore grows. Never under 5 ms, where batches
 * are big anyway.
 */
export function pacingTickMs(ratePerSecond: number): number {
  return Math.min(MAX_TICK_MS, Math.max(MIN_TICK_MS, (1000 * TRANSACTIONS_PER_TICK) / ratePerSecond));
}

export interface OpenLoopResult {
  readonly records: number;
  readonly transactions: number;
  /** Largest delay between a record's due time and the moment it was handed to send(). */
  readonly maxIssueLagMs: number;
  /** Times the loop had to wait for in-flight sends (the sink could not keep up). */
  readonly stalls: number;
  /** Transactions whose send() call failed. */
  readonly failures: number;
  readonly firstError?: Error;
}

export async function runOpenLoop<R extends DueRecord>({
  plan,
  send,
  clock = realLoopClock,
  tickMs = MIN_TICK_MS,
  aheadMs = 100,
  maxPerSend = 2_000,
  maxInFlight = 256,
  lag = new SendLag(),
  signal,
}: OpenLoopRun<R>): Promise<OpenLoopResult> {
  const inFlight = new Set<Promise<void>>();
  let queue: R[] = [];
  let head = 0;
  let records = 0;
  let transactions = 0;
  let stalls = 0;
  let failures = 0;
  let firstError: Error | undefined;
  plan.planUntil(clock.nowMs() + aheadMs, queue);
  while (!signal?.aborted) {
    const now = clock.nowMs();
    // Normally planned long ago; after a stall, whatever fell due meanwhile leaves at once.
    plan.planUntil(now, queue);
    while (head < queue.length && queue[head]!.dueMs <= now) {
      const from = head;
      let count = 0;
      for (; head < queue.length && head - from < maxPerSend; head++) {
        const record = queue[head]!;
        if (record.dueMs > now) break;
        lag.record(now - record.dueMs, record.transactions);
        count += record.transactions;
      }
      const batch = queue.slice(from, head);
      const sending: Promise<void> = send(batch).catch((err: Error) => {
        failures += count;
        firstError ??= err;
      });
      const counted = sending.finally(() => inFlight.delete(counted));
      inFlight.add(counted);
      records += batch.length;
      transactions += count;
    }
    if (head > 4_096 && head * 2 > queue.length) {
      queue = queue.slice(head);
      head = 0;
    }
    plan.planUntil(now + aheadMs, queue);
    if (head === queue.length && plan.exhausted) break;
    if (inFlight.size >= maxInFlight) {
      stalls++;
      await Promise.race(inFlight);
      continue;
    }
    // Next wake: one tick after this one, or when the next record falls due if that is later.
    // Sending may have taken longer than the tick; then the loop only yields (acknowledgements
    // need the event loop) and sends what fell due meanwhile, so it never falls behind for good.
    const nextDueMs = head < queue.length ? queue[head]!.dueMs : now + aheadMs / 4;
    await clock.sleep(Math.max(0, Math.max(now + tickMs, nextDueMs) - clock.nowMs()));
  }
  await Promise.all(inFlight);
  return {
    records,
    transactions,
    maxIssueLagMs: lag.maxMs,
    stalls,
    failures,
    ...(firstError ? { firstError } : {}),
  };
}
