// The scoring queue: fed by every owned partition, drained by one loop. A batch is whatever has
// arrived while the previous one ran, capped at maxBatch, except that a batch whose oldest
// transaction is younger than lingerMs waits for it to reach that age (or for maxBatch to
// arrive). Much of a batch's cost is per batch (two Redis round trips, a model run, timers):
// scoreBatch against the real Redis took 558, 278 and 159 µs of CPU per transaction in batches
// of 1, 5 and 10. At low rates, where every batch would hold one or two transactions, a few
// milliseconds of linger share that cost; at high rates the previous batch's scoring outlasts
// the linger and nothing waits. The linger bounds the added latency, far inside the budget.
// Publishing a batch's decisions, and its state write's round trip, overlap with scoring the
// next; a submission resolves only once every decision of it is acknowledged and every state
// write of it answered, which is when its offsets may be committed.
import type { DecisionInit } from "../codec/messages.js";
import type { DecidedBatch, ScoringItem } from "../scoring/scoreBatch.js";

export interface ScoringQueueOptions {
  readonly maxBatch: number;
  /** How old the oldest queued transaction may get before a batch short of maxBatch goes; 0 = never wait. */
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
      if (this.#queue.length >= this.#options.maxBatch) this.#wake?.();
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

  /** Waits until the oldest queued transaction is lingerMs old or maxBatch are queued. */
  async #linger(): Promise<void> {
    const waitMs = this.#queue[0]!.queuedAt + (this.#options.lingerMs ?? 0) - performance.now();
    if (waitMs <= 0 || this.#queue.length >= this.#options.maxBatch) return;
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
