// Open-loop load: send i is due at start + i / rate, whatever happened to send i - 1. A closed
// loop (send, wait for the ack, send the next) slows down with the broker and so never sees the
// queueing a slow broker causes; here every record carries its scheduled time as its
// timestamp, so lateness anywhere — our own included — shows up as latency.
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

/**
 * Node starts a timer at its loop clock's last whole millisecond and fires it once that clock
 * has moved on by the delay, so a timer of exactly `ms` can fire up to 1 ms early — before the
 * records it was set for are due, which then wait a whole tick more. Counted from the whole
 * millisecond below now (the loop clock is the same monotonic clock as process.hrtime), it
 * fires at the first whole millisecond at least `ms` from now: never early, under 1 ms late.
 */
export function timerDelayMs(ms: number, monotonicNowMs: number): number {
  if (!(ms > 0)) return 0;
  return Math.ceil(monotonicNowMs + ms) - Math.floor(monotonicNowMs);
}

export const realLoopClock: LoopClock = {
  nowMs: () => performance.timeOrigin + performance.now(),
  // A bare timer, not node:timers/promises (which validates its arguments and handles an
  // AbortSignal on every call): the loop sleeps 100-200 times a second.
  sleep: (ms) =>
    new Promise((resolve) => setTimeout(resolve, timerDelayMs(ms, Number(process.hrtime.bigint()) / 1e6))),
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
   * schedule, not the broker, sets the pace. Waited for only to bound memory (maxInFlight) and
   * at the end.
   */
  readonly send: (records: R[]) => Promise<void>;
  readonly clock?: LoopClock;
  /**
   * The pacing tick: the loop wakes at most once per tick and hands everything due to one send
   * call. Each wake-up (about 100 µs of CPU on the shared 2-core bench machine, for Node's timer
   * alone) and each produce request (about 1 ms) has a fixed cost, so the tick, not the record
   * count, sets the fixed cost; pacingTickMs picks one for a rate. Wake-ups land on records' due
   * times where they can (a packed record's is its linger window's end). Sends leave up to one
   * tick late; their timestamps stay their due times, and the send lag shows it.
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
/** Records planned in one go at low rates (see OpenLoop#refill). */
const BULK_RECORDS = 64;

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

export function runOpenLoop<R extends DueRecord>(run: OpenLoopRun<R>): Promise<OpenLoopResult> {
  return new Promise((resolve, reject) => new OpenLoop(run, resolve, reject).start());
}

/**
 * The loop behind runOpenLoop, driven by one timer callback per wake-up rather than an async
 * function: on the shared 2-core VM a wake-up of Node costs about 100 µs of CPU before any of
 * our code runs, so what the loop itself does per wake (promises, planning a few records with
 * cold caches) is what is left to cut; and a small method called every tick is optimised once
 * and stays so across runs, where the async loop was recompiled in each (28 ms of TurboFan).
 */
class OpenLoop<R extends DueRecord> {
  readonly #plan: RecordPlan<R>;
  readonly #send: (records: R[]) => Promise<void>;
  readonly #clock: LoopClock;
  readonly #tickMs: number;
  readonly #aheadMs: number;
  readonly #maxPerSend: number;
  readonly #maxInFlight: number;
  readonly #lag: SendLag;
  readonly #signal: AbortSignal | undefined;
  readonly #resolve: (result: OpenLoopResult) => void;
  readonly #reject: (err: unknown) => void;
  #queue: R[] = [];
  #head = 0;
  /** Records are planned up to this moment. */
  #plannedUntilMs = 0;
  /** How long planned records may run down before the next chunk is planned. */
  #refillMs = 0;
  /** When this wake-up was meant to happen: the next one is a tick after it, not after now. */
  #wakeAtMs = 0;
  #inFlight = 0;
  #waitingForRoom = false;
  #ending = false;
  #records = 0;
  #transactions = 0;
  #stalls = 0;
  #failures = 0;
  #firstError: Error | undefined;

  constructor(
    {
      plan,
      send,
      clock = realLoopClock,
      tickMs = MIN_TICK_MS,
      aheadMs = 100,
      maxPerSend = 2_000,
      maxInFlight = 256,
      lag = new SendLag(),
      signal,
    }: OpenLoopRun<R>,
    resolve: (result: OpenLoopResult) => void,
    reject: (err: unknown) => void,
  ) {
    this.#plan = plan;
    this.#send = send;
    this.#clock = clock;
    this.#tickMs = tickMs;
    this.#aheadMs = aheadMs;
    this.#maxPerSend = maxPerSend;
    this.#maxInFlight = maxInFlight;
    this.#lag = lag;
    this.#signal = signal;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  start(): void {
    const now = this.#clock.nowMs();
    this.#plannedUntilMs = now + this.#aheadMs;
    this.#wakeAtMs = now;
    try {
      this.#plan.planUntil(this.#plannedUntilMs, this.#queue);
    } catch (err) {
      this.#reject(err);
      return;
    }
    this.#wake();
  }

  readonly #wake = (): void => {
    try {
      this.#step();
    } catch (err) {
      this.#reject(err);
    }
  };

  #step(): void {
    if (this.#signal?.aborted) return this.#end();
    const clock = this.#clock;
    const plan = this.#plan;
    const now = clock.nowMs();
    // Normally planned long ago; after a stall, whatever fell due meanwhile leaves at once.
    if (now > this.#plannedUntilMs) plan.planUntil((this.#plannedUntilMs = now), this.#queue);
    this.#sendDue(now);
    if (this.#head > 4_096 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    if (this.#plannedUntilMs - now < this.#aheadMs - this.#refillMs) this.#refill(now);
    const queue = this.#queue;
    if (this.#head === queue.length && plan.exhausted) return this.#end();
    if (this.#inFlight >= this.#maxInFlight) {
      this.#stalls++;
      this.#waitingForRoom = true;
      return;
    }
    // Next wake: a tick after this one was due, or when the next record falls due if that is
    // later. Counting from the planned wake-up, not from now, keeps wake-ups on the records' due
    // times (a packed record's is its linger window's end) instead of drifting by each timer's
    // lateness. Behind schedule (sending took longer than the tick), the loop only yields —
    // acknowledgements need the event loop — and sends what fell due meanwhile.
    const nextDueMs = this.#head < queue.length ? queue[this.#head]!.dueMs : now + this.#aheadMs / 4;
    this.#wakeAtMs = Math.max(now, this.#wakeAtMs + this.#tickMs, nextDueMs);
    void clock.sleep(Math.max(0, this.#wakeAtMs - clock.nowMs())).then(this.#wake);
  }

  /**
   * Plans up to aheadMs from now, in chunks of about BULK_RECORDS: a few records encoded per
   * wake-up meet cold caches every time, a few dozen in a row run warm; at high rates a wake-up
   * plans that many anyway, and a bigger chunk would only hold up the sends behind it.
   */
  #refill(now: number): void {
    const before = this.#queue.length;
    const fromMs = this.#plannedUntilMs;
    this.#plannedUntilMs = now + this.#aheadMs;
    this.#plan.planUntil(this.#plannedUntilMs, this.#queue);
    const recordsPerMs = (this.#queue.length - before) / Math.max(1, this.#plannedUntilMs - fromMs);
    this.#refillMs = Math.min(this.#aheadMs / 2, BULK_RECORDS / Math.max(recordsPerMs, 1e-3));
  }

  #sendDue(now: number): void {
    const queue = this.#queue;
    const lag = this.#lag;
    let head = this.#head;
    while (head < queue.length && queue[head]!.dueMs <= now) {
      const from = head;
      let count = 0;
      for (; head < queue.length && head - from < this.#maxPerSend; head++) {
        const record = queue[head]!;
        if (record.dueMs > now) break;
        lag.record(now - record.dueMs, record.transactions);
        count += record.transactions;
      }
      const batch = queue.slice(from, head);
      this.#records += batch.length;
      this.#transactions += count;
      this.#inFlight++;
      let sending: Promise<void>;
      try {
        sending = this.#send(batch);
      } catch (err) {
        sending = Promise.reject(err as Error);
      }
      sending.then(this.#sent, (err: Error) => this.#failed(err, count));
    }
    this.#head = head;
  }

  readonly #sent = (): void => this.#settled();

  #failed(err: Error, transactions: number): void {
    this.#failures += transactions;
    this.#firstError ??= err;
    this.#settled();
  }

  #settled(): void {
    this.#inFlight--;
    if (this.#ending) {
      if (this.#inFlight === 0) this.#finish();
    } else if (this.#waitingForRoom && this.#inFlight < this.#maxInFlight) {
      this.#waitingForRoom = false;
      this.#wake();
    }
  }

  #end(): void {
    this.#ending = true;
    if (this.#inFlight === 0) this.#finish();
  }

  #finish(): void {
    this.#resolve({
      records: this.#records,
      transactions: this.#transactions,
      maxIssueLagMs: this.#lag.maxMs,
      stalls: this.#stalls,
      failures: this.#failures,
      ...(this.#firstError ? { firstError: this.#firstError } : {}),
    });
  }
}
