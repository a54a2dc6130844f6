// The scoring queue: fed by every owned partition, drained by one loop. A batch is whatever has
// arrived while the previous one ran, capped at maxBatch, except that a batch short of maxBatch
// waits until its oldest transaction is lingerMs old (or maxBatch arrive). Much of a batch's cost
// is per batch (two Redis round trips, a model run, timers): scoreBatch against the real Redis
// took 558, 278 and 159 µs of CPU per transaction in batches of 1, 5 and 10. At low rates, where
// every batch would hold one or two transactions, a few milliseconds of linger share that cost.
// It keeps paying up to the highest rates these two cores sustain: at 5,000–10,000 tx/s the
// scorer is busy only part of the time, and the batches of 100–200 the linger gathers are what
// keep it ahead. A variant that sent any batch of 32 at once (7f58522, reverted) cost 105.8
// against 74.2 µs of CPU per transaction at 5,000 tx/s, and the highest rate with p99 ≤ 200 ms
// and the model deciding ≥ 99 % fell from 8,600–11,000 to 4,700 tx/s. Past the rate the scorer
// sustains, the previous batch's scoring outlasts the linger and nothing waits.
//
// A transaction's age counts from its record's timestamp (where its budget starts), not from
// when it reached the queue: one that already spent the linger upstream (the producer's own
// linger, the broker, the fetch) goes with the next batch, so at a steady rate the linger delays
// transactions that arrive with time to spare rather than the tail (at 5,000 tx/s the larger
// batches did raise p99, 54–110 against 53 ms, inside the budget). The wait after arrival is still
// capped at lingerMs, so a producer whose clock runs ahead cannot hold a batch back longer.
//
// Publishing a batch's decisions, and its state write's round trip, overlap with scoring the
// next; a submission resolves only once every decision of it is acknowledged and every state
// write of it answered, which is when its offsets may be committed.
import type { DecisionInit } from "../codec/messages.js";
import type { DecidedBatch, ScoringItem } from "../scoring/scoreBatch.js";

export interface ScoringQueueOptions {
  readonly maxBatch: number;
  /**
   * How old (from its record's timestamp, and at most this long after it was queued) the oldest
   * queued transaction may get before a batch short of maxBatch goes; 0 = never wait.
   */
  readonly lingerMs?: number;
  readonly score: (items: readonly ScoringItem[]) => Promise<DecidedBatch>;
  readonly publish: (decisions: readonly DecisionInit[]) => Promise<void>;
  /** Batches whose decisions (or state writes) may be in flight at once. */
  readonly maxInFlightPublishes?: number;
  readonly onBatch?: (size: number) => void;
  /** Called once a batch's decisions are handed to `publish` (shadow scoring starts from here). */
  readonly handedOff?: (items: readonly ScoringItem[], decisions: readonly DecisionInit[]) => void;
}

interface Submission {
  remaining: number;
  failed?: Error;
  resolve(): void;
  reject(err: Error): void;
}

interface Queued {
  readonly item: ScoringItem;
  readonly submission: Submission;
  /** performance.now() at submission. */
  readonly queuedAt: number;
}

export class ScoringQueue {
  readonly #options: ScoringQueueOptions;
  #queue: Queued[] = [];
  #draining = false;
  readonly #inFlight = new Set<Promise<void>>();
  #idleWaiters: Array<() => void> = [];
  /** Ends the current linger early (maxBatch has arrived). */
  #wake: (() => void) | undefined;

  constructor(options: ScoringQueueOptions) {
    this.#options = options;
  }

  get depth(): number {
    return this.#queue.length;
  }

  /** Resolves when all these items' decisions are acknowledged; rejects if any failed. */
  submit(items: readonly ScoringItem[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const submission: Submission = { remaining: items.length, resolve, reject };
      const queuedAt = performance.now();
      for (const item of items) this.#queue.push({ item, submission, queuedAt });
      if (this.#queue.length >= this.#options.maxBatch || this.#anyLingeredOut(items)) this.#wake?.();
      void this.#drain();
    });
  }

  /** Resolves once nothing is queued, being scored or in flight. */
  idle(): Promise<void> {
    if (!this.#draining && this.#queue.length === 0 && this.#inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  async #drain(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (this.#queue.length > 0) {
        await this.#linger();
        const batch = this.#queue.splice(0, this.#options.maxBatch);
        this.#options.onBatch?.(batch.length);
        const items = batch.map((q) => q.item);
        let decided: DecidedBatch;
        try {
          decided = await this.#options.score(items);
        } catch (err) {
          this.#settle(batch, err as Error);
          continue;
        }
        const { decisions, stateWritten } = decided;
        while (this.#inFlight.size >= (this.#options.maxInFlightPublishes ?? 4))
          await Promise.race(this.#inFlight);
        const publishing = Promise.all([this.#options.publish(decisions), stateWritten]).then(
          () => this.#settle(batch),
          (err: Error) => this.#settle(batch, err),
        );
        this.#options.handedOff?.(items, decisions);
        this.#inFlight.add(publishing);
        void publishing.finally(() => {
          this.#inFlight.delete(publishing);
          this.#notifyIdle();
        });
      }
    } finally {
      this.#draining = false;
      this.#notifyIdle();
    }
  }

  /** Whether one of these has already spent the linger since its record's timestamp. */
  #anyLingeredOut(items: readonly ScoringItem[]): boolean {
    if (this.#wake === undefined) return false;
    const ripeBefore = Date.now() - (this.#options.lingerMs ?? 0);
    for (const item of items) if (item.budgetStartMs <= ripeBefore) return true;
    return false;
  }

  /** Waits until some queued transaction is lingerMs old (see the top) or maxBatch are queued. */
  async #linger(): Promise<void> {
    const lingerMs = this.#options.lingerMs ?? 0;
    if (lingerMs <= 0 || this.#queue.length >= this.#options.maxBatch) return;
    // The queue is in arrival order, which partitions interleave: the oldest record may be anywhere.
    let oldestRecordMs = Infinity;
    for (const { item } of this.#queue) oldestRecordMs = Math.min(oldestRecordMs, item.budgetStartMs);
    const waitMs = Math.min(
      this.#queue[0]!.queuedAt + lingerMs - performance.now(),
      oldestRecordMs + lingerMs - Date.now(),
    );
    if (waitMs <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.#wake = resolve;
      timer = setTimeout(resolve, waitMs);
    });
    clearTimeout(timer);
    this.#wake = undefined;
  }

  #settle(batch: readonly Queued[], err?: Error) {
    for (const { submission } of batch) {
      if (err && !submission.failed) submission.failed = err;
      if (--submission.remaining === 0) {
        if (submission.failed) submission.reject(submission.failed);
        else submission.resolve();
      }
    }
  }

  #notifyIdle() {
    if (this.#draining || this.#queue.length > 0 || this.#inFlight.size > 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }
}
