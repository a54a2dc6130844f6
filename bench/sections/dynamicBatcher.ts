// The foil of the batching benchmark, in bench/ only: classic dynamic batching ("wait until N
// arrive or T ms pass since the oldest waiting item", as model servers do it), one batch scored
// at a time. The product's ScoringQueue never waits: DESIGN.md, "Batching".
import type { DecisionInit } from "../../src/codec/messages.js";
import type { ScoringItem } from "../../src/scoring/scoreBatch.js";

export interface DynamicBatcherOptions {
  readonly maxBatch: number;
  readonly maxWaitMs: number;
  readonly score: (items: readonly ScoringItem[]) => Promise<DecisionInit[]>;
  readonly publish: (decisions: readonly DecisionInit[]) => void;
  readonly onBatch?: (size: number) => void;
}

interface Waiting {
  readonly item: ScoringItem;
  readonly arrivedAt: number;
}

export class DynamicBatcher {
  readonly #options: DynamicBatcherOptions;
  #queue: Waiting[] = [];
  #scoring = false;
  #timer: NodeJS.Timeout | undefined;
  #idle: Array<() => void> = [];

  constructor(options: DynamicBatcherOptions) {
    this.#options = options;
  }

  submit(items: readonly ScoringItem[]): void {
    const now = performance.now();
    for (const item of items) this.#queue.push({ item, arrivedAt: now });
    this.#schedule();
  }

  idle(): Promise<void> {
    if (!this.#scoring && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #schedule() {
    if (this.#scoring || this.#queue.length === 0) return;
    const { maxBatch, maxWaitMs } = this.#options;
    const waitedMs = performance.now() - this.#queue[0]!.arrivedAt;
    if (this.#queue.length >= maxBatch || waitedMs >= maxWaitMs) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      void this.#scoreNext();
    } else {
      this.#timer ??= setTimeout(() => {
        this.#timer = undefined;
        this.#schedule();
      }, maxWaitMs - waitedMs);
    }
  }

  async #scoreNext() {
    this.#scoring = true;
    const batch = this.#queue.splice(0, this.#options.maxBatch);
    this.#options.onBatch?.(batch.length);
    try {
      this.#options.publish(await this.#options.score(batch.map((w) => w.item)));
    } finally {
      this.#scoring = false;
      this.#schedule();
      if (!this.#scoring && this.#queue.length === 0) for (const done of this.#idle.splice(0)) done();
    }
  }
}
