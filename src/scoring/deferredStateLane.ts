// Card-state maintenance off the decision path. When a batch's state call times out or fails,
// its decisions are the rules' (inside the budget), and the state work for its transactions is
// queued here, to run once, in arrival order, with a patient timeout. While work is queued,
// later batches are decided by the rules and queue their state work behind it, so a card's
// transactions are still applied in order. A slow Redis therefore costs model decisions for a
// while, never budget and never lost state; a Redis that is down costs the queued updates
// (counted), since they cannot be applied anywhere.
import { GuardedCall } from "./guardedCall.js";
import type { ScoringGuards } from "./scoreBatch.js";

export interface DeferredStateLaneOptions {
  /** Per call, while catching up: generous, since no decision waits on it. */
  readonly timeoutMs?: number;
  /** Transactions that may wait; beyond this new work is dropped (and counted). */
  readonly maxPendingItems?: number;
  readonly onDropped?: (items: number, reason: "full" | "failed") => void;
  readonly onDeferred?: (items: number) => void;
}

export class DeferredStateLane {
  readonly guards: ScoringGuards;
  readonly #maxPendingItems: number;
  readonly #onDropped: DeferredStateLaneOptions["onDropped"];
  readonly #onDeferred: DeferredStateLaneOptions["onDeferred"];
  #pendingItems = 0;
  #tail: Promise<void> = Promise.resolve();

  constructor({
    timeoutMs = 5_000,
    maxPendingItems = 50_000,
    onDropped,
    onDeferred,
  }: DeferredStateLaneOptions = {}) {
    // Breakers that never open: the lane is already the slow path, and each unit runs once.
    const guard = (name: string) =>
      new GuardedCall({
        name: `${name}_deferred`,
        timeoutMs,
        errorThresholdPercentage: 100,
        volumeThreshold: 1e9,
      });
    this.guards = { stateRead: guard("state_read"), model: guard("model"), stateWrite: guard("state_write") };
    this.#maxPendingItems = maxPendingItems;
    this.#onDropped = onDropped;
    this.#onDeferred = onDeferred;
  }

  get busy(): boolean {
    return this.#pendingItems > 0;
  }

  get pendingItems(): number {
    return this.#pendingItems;
  }

  /** Queues `work` (which reports whether it succeeded) for `items` transactions. */
  defer(items: number, work: () => Promise<boolean>): void {
    if (this.#pendingItems + items > this.#maxPendingItems) {
      this.#onDropped?.(items, "full");
      return;
    }
    this.#pendingItems += items;
    this.#onDeferred?.(items);
    this.#tail = this.#tail.then(async () => {
      try {
        if (!(await work())) this.#onDropped?.(items, "failed");
      } catch {
        this.#onDropped?.(items, "failed");
      } finally {
        this.#pendingItems -= items;
      }
    });
  }

  /** Resolves when everything queued so far has run. */
  drained(): Promise<void> {
    return this.#tail;
  }

  shutdown(): void {
    for (const g of Object.values(this.guards)) g.shutdown();
  }
}
