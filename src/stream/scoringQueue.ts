// The scoring queue: fed by every owned partition, drained by one loop with no timers. A batch
// is whatever has arrived while the previous one ran, capped at maxBatch: it never waits to
// fill (that trades tail latency for throughput, the wrong trade here). Publishing a batch's
// decisions overlaps with scoring the next; a submission resolves only once every decision of
// it is acknowledged, which is when its offsets may be committed.
import type { DecisionInit } from "../codec/messages.js";
import type { ScoringItem } from "../scoring/scoreBatch.js";

export interface ScoringQueueOptions {
  readonly maxBatch: number;
  readonly score: (items: readonly ScoringItem[]) => Promise<DecisionInit[]>;
  readonly publish: (decisions: readonly DecisionInit[]) => Promise<void>;
  /** Batches whose decisions may be in flight to the broker at once. */
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
}

export class ScoringQueue {
  readonly #options: ScoringQueueOptions;
  #queue: Queued[] = [];
  #draining = false;
  readonly #inFlight = new Set<Promise<void>>();
  #idleWaiters: Array<() => void> = [];

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
      for (const item of items) this.#queue.push({ item, submission });
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
        const batch = this.#queue.splice(0, this.#options.maxBatch);
        this.#options.onBatch?.(batch.length);
        const items = batch.map((q) => q.item);
        let decisions: DecisionInit[];
        try {
          decisions = await this.#options.score(items);
        } catch (err) {
          this.#settle(batch, err as Error);
          continue;
        }
        while (this.#inFlight.size >= (this.#options.maxInFlightPublishes ?? 4))
          await Promise.race(this.#inFlight);
        const publishing = this.#options.publish(decisions).then(
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
