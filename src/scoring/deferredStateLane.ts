// Card-state maintenance off the decision path. When a batch's state call times out or fails,
// its decisions are the rules' (inside the budget), and its transactions are queued here for
// their state work (read, rebuild, model step, compare-and-set write; no decisions). While a
// card has work queued here, its later transactions are decided by the rules and queue behind
// it, so a card's transactions are still applied in order; other cards are scored by the model
// as usual, and a card is the model's again as soon as its queued work is applied. The lane works through its queue in large coalesced
// batches (one set of round trips for up to maxBatchItems transactions), so it catches up
// faster than transactions arrive, and the model path resumes. A slow or stopped Redis therefore
// costs model decisions for a while, never budget and never state (a call waits for it up to
// LANE_CALL_TIMEOUT_MS); a Redis that is down costs the queued updates (counted), since they
// cannot be applied anywhere.
//
// A backlog (a restart, an overload) sends every batch here, and the rules decide far faster
// than state is applied: without a bound on what may wait, the queue filled to maxPendingItems
// and later work was dropped (a drain of 300,000 old transactions decided them all while 33,088
// state updates were dropped and their offsets committed). room() is that bound: the consumer
// waits for it before it takes more, while the lane is applying what it is given. A failing lane
// (Redis down) never holds the consumer: decisions stay inside their budget, and what cannot be
// applied is dropped and counted as before.
import { GuardedCall } from "./guardedCall.js";
import type { ScoringGuards, ScoringItem } from "./scoreBatch.js";

/** Transactions handled in one catch-up batch, unless told otherwise. */
export const LANE_BATCH_ITEMS = 2_048;

/**
 * Transactions that may wait here before the consumer takes more (what it passes to room()):
 * four catch-up batches, so the lane always has the next ones in hand.
 */
export const LANE_HIGH_WATER = 4 * LANE_BATCH_ITEMS;

/**
 * How long a catch-up call waits for Redis: long enough to outlast a pause of the server (a stop,
 * a snapshot's fork, a VM migration). Its work is dropped only when this runs out, and no
 * decision waits on it: the live breakers send decisions to the rules meanwhile, and the consumer
 * waits for the lane (stateRoom) only while the live state calls succeed. At 5 s, Redis stopped
 * for 10 s under 1,000 tx/s (chaos: redis-frozen) cost the updates of the call in flight (19
 * cards each one transaction short); a call that Redis answers when it continues loses nothing.
 * A Redis that is down fails the call at once (the connection is closed), as before.
 */
const LANE_CALL_TIMEOUT_MS = 30_000;

/** A deferral: its transactions, and whether they are a backlog's (see defer). */
interface Deferred {
  readonly items: readonly ScoringItem[];
  readonly backlog: boolean;
}

export interface DeferredStateLaneOptions {
  /** Applies the state work of these transactions (in order); false when it could not. */
  readonly apply: (items: readonly ScoringItem[], guards: ScoringGuards) => Promise<boolean>;
  /** Per call; see LANE_CALL_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  /** Transactions handled in one catch-up batch. */
  readonly maxBatchItems?: number;
  /** Transactions that may wait; beyond this new work is dropped (and counted). */
  readonly maxPendingItems?: number;
  readonly onDropped?: (items: number, reason: "full" | "failed") => void;
  readonly onDeferred?: (items: number) => void;
}

export class DeferredStateLane {
  readonly guards: ScoringGuards;
  readonly #options: Required<Omit<DeferredStateLaneOptions, "onDropped" | "onDeferred">> &
    Pick<DeferredStateLaneOptions, "onDropped" | "onDeferred">;
  #queue: Deferred[] = [];
  #pendingItems = 0;
  /** Of those, deferred as a backlog's (see defer): what room() counts. */
  #backlogItems = 0;
  /** Transactions queued or running, per card. */
  readonly #pendingByCard = new Map<string, number>();
  #running = false;
  #queued = 0; // batches ever queued
  #done = 0; // batches ever finished
  #waiters: Array<{ upTo: number; resolve: () => void }> = [];
  /** False from a failed apply until one succeeds: room() does not wait on a failing lane. */
  #applying = true;
  #roomWaiters: Array<{ highWater: number; resolve: () => void }> = [];

  constructor({
    apply,
    timeoutMs = LANE_CALL_TIMEOUT_MS,
    maxBatchItems = LANE_BATCH_ITEMS,
    maxPendingItems = 100_000,
    onDropped,
    onDeferred,
  }: DeferredStateLaneOptions) {
    // Breakers that never open: the lane is already the slow path, and each unit runs once.
    const guard = (name: string) =>
      new GuardedCall({
        name: `${name}_deferred`,
        timeoutMs,
        errorThresholdPercentage: 100,
        volumeThreshold: 1e9,
      });
    this.guards = { stateRead: guard("state_read"), model: guard("model"), stateWrite: guard("state_write") };
    this.#options = { apply, timeoutMs, maxBatchItems, maxPendingItems, onDropped, onDeferred };
  }

  /** True while any state work is queued or running. */
  get busy(): boolean {
    return this.#pendingItems > 0;
  }

  get pendingItems(): number {
    return this.#pendingItems;
  }

  /** True while this card has state work queued or running here. */
  holds(cardId: string): boolean {
    return this.#pendingByCard.has(cardId);
  }

  /**
   * Queues these transactions' state work. `backlog`: the consumer's own backlog, late through
   * and through, sent here in bulk; only such work is what room() holds the consumer for.
   */
  defer(items: readonly ScoringItem[], { backlog = false }: { backlog?: boolean } = {}): void {
    if (items.length === 0) return;
    if (this.#pendingItems + items.length > this.#options.maxPendingItems) {
      this.#options.onDropped?.(items.length, "full");
      return;
    }
    this.#queue.push({ items, backlog });
    this.#queued++;
    this.#pendingItems += items.length;
    if (backlog) this.#backlogItems += items.length;
    for (const { tx } of items)
      this.#pendingByCard.set(tx.cardId, (this.#pendingByCard.get(tx.cardId) ?? 0) + 1);
    this.#options.onDeferred?.(items.length);
    void this.#run();
  }

  /** Resolves when the state work queued so far has been applied (or given up). */
  drained(): Promise<void> {
    if (this.#done >= this.#queued) return Promise.resolve();
    const upTo = this.#queued;
    return new Promise((resolve) => this.#waiters.push({ upTo, resolve }));
  }

  /**
   * Resolves once at most `highWater` of a backlog's transactions wait here, or at once while the
   * lane is failing; a wait also ends when an apply fails. Work deferred by failed or late state
   * calls of a live stream does not count: holding the consumer for it made fresh records wait.
   * After Redis was stopped for 10 s under 1,000 tx/s (chaos: redis-frozen), the lane held the
   * ~10,000 transactions of the stop, and the consumer stopped taking records until it was back
   * under the mark: records sent just after Redis continued were picked 186–188 ms later.
   */
  room(highWater: number): Promise<void> {
    if (this.#backlogItems <= highWater || !this.#applying) return Promise.resolve();
    return new Promise((resolve) => this.#roomWaiters.push({ highWater, resolve }));
  }

  shutdown(): void {
    for (const g of Object.values(this.guards)) g.shutdown();
  }

  async #run(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      while (this.#queue.length > 0) {
        const taken: Deferred[] = [];
        let count = 0;
        while (
          this.#queue.length > 0 &&
          (taken.length === 0 || count + this.#queue[0]!.items.length <= this.#options.maxBatchItems)
        ) {
          const next = this.#queue.shift()!;
          taken.push(next);
          count += next.items.length;
        }
        let applied = false;
        try {
          applied = await this.#options.apply(
            taken.flatMap((t) => t.items),
            this.guards,
          );
        } catch {
          applied = false;
        }
        if (!applied) this.#options.onDropped?.(count, "failed");
        this.#applying = applied;
        this.#pendingItems -= count;
        for (const { items, backlog } of taken) {
          if (backlog) this.#backlogItems -= items.length;
          for (const { tx } of items) this.#release(tx.cardId);
        }
        this.#done += taken.length;
        this.#wake();
      }
    } finally {
      this.#running = false;
    }
  }

  #release(cardId: string): void {
    const left = (this.#pendingByCard.get(cardId) ?? 1) - 1;
    if (left > 0) this.#pendingByCard.set(cardId, left);
    else this.#pendingByCard.delete(cardId);
  }

  #wake(): void {
    const ready = this.#waiters.filter((w) => w.upTo <= this.#done);
    this.#waiters = this.#waiters.filter((w) => w.upTo > this.#done);
    for (const w of ready) w.resolve();
    const hasRoom = (w: { highWater: number }) => !this.#applying || this.#backlogItems <= w.highWater;
    const roomy = this.#roomWaiters.filter(hasRoom);
    this.#roomWaiters = this.#roomWaiters.filter((w) => !hasRoom(w));
    for (const w of roomy) w.resolve();
  }
}
