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
//
// Exactly-once commits a delivery only once its deferred work is applied (drained), so that a
// crash cannot commit offsets whose state was never written. A store that stops answering would
// then hold every decision behind that commit: Redis stopped for 10 s under 1,000 tx/s with
// --exactly-once (chaos: redis-frozen-exactly-once) held decisions 10-13 s. drainedUnlessStalled
// ends such a wait once the call in flight has gone unanswered as long as a live state call may
// wait; the lane is then behind, and no commit waits for it until it has drained.
import { GuardedCall } from "./guardedCall.js";
import type { ScoringGuards, ScoringItem } from "./scoreBatch.js";

/** Transactions handled in one catch-up batch, unless told otherwise. */
export const LANE_BATCH_ITEMS = 2_048;

/**
 * Transactions handled in one call while the lane catches up after the store failed live calls
 * (see defer's storeFailed), unless the work at the head of the queue is a backlog's: fresh
 * decisions are being made beside the lane then, and a call's synchronous stretches (decoding,
 * features, encoding and signing for every card) and its Redis scripts hold them up. After Redis
 * was stopped 10 s at 1,000 tx/s (chaos: redis-frozen-exactly-once), catching up on the ~10,000
 * transactions of the stop in calls of 2,048 put decisions sent just after Redis continued at up
 * to 204-262 ms (2 of 5 runs over 200 ms); in calls of 256, the slowest after it were under 100
 * ms (p99 74-98 ms in that second, 3 runs), and at-least-once's p99 there went from 89 to 40 ms.
 * Not for a restart's late batches (their reads cut short by the budget, not failed by the
 * store): no fresh decision is made beside that catch-up, and an exactly-once consumer waits for
 * it, so it is applied in the large calls that drain it soonest.
 */
export const LANE_LIVE_BATCH_ITEMS = 256;

/**
 * Transactions handled in one call of a backlog's work while more than twice as many of a
 * backlog's wait here and no batch has been decided live for LANE_LIVE_QUIET_MS: a deep backlog
 * (a long restart's, an overload's) drained with nothing fresh beside it, whose decisions are all
 * the rules' (late) and wait for no call. A card seen several times in a call is read and written
 * once, so larger calls cost Redis less per transaction. Against calls of 2,048 (and a high-water
 * mark of 8,192), in runs of bench section 6 with both in each run, two alternating rounds each
 * (2026-12-05): as here, three runs: Redis spent 1.1–1.4 µs less CPU per transaction, and serve
 * drained the backlog 9 % faster, 5 % slower and 7 % faster; with large calls whatever the depth,
 * five runs: Redis 1.3–1.8 µs less, serve's drain -1 to +16 % faster (median +8). Serve's own CPU
 * per transaction did not fall beyond the noise (-1.1 to +3.5 µs over the eight).
 * Not for a short backlog: a call releases its cards only when it is done, and until then their
 * fresh transactions are the rules'. In chaos sigkill-loop (a restart's backlog of a few seconds,
 * one run each, 2026-12-05) the rules decided 6.7 % of the transactions with such a backlog taken
 * in one call, 5.6 % as here and 5.2 % in calls of 2,048. Nor while decisions are made live: each
 * call holds the event loop for stretches (decoding, features and the model step, encoding and
 * signing, for every card) about four times as long, and a fresh batch waits behind them.
 */
export const LANE_BACKLOG_BATCH_ITEMS = 8_192;

/** After a batch decided live, this long before the lane's calls grow to LANE_BACKLOG_BATCH_ITEMS. */
export const LANE_LIVE_QUIET_MS = 1_000;

/**
 * Transactions that may wait here before the consumer takes more (what it passes to room()):
 * four of a backlog's calls, so the lane always has the next ones in hand.
 */
export const LANE_HIGH_WATER = 4 * LANE_BACKLOG_BATCH_ITEMS;

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
  /**
   * Exactly-once only: how long a call may go unanswered before the store counts as stalled
   * (drainedUnlessStalled, storeStalled); serve passes what a live state call may wait. Without
   * it the lane is never behind: drainedUnlessStalled is drained().
   */
  readonly stallMs?: number;
  /** Transactions handled in one catch-up batch. */
  readonly maxBatchItems?: number;
  /** Transactions that may wait; beyond this new work is dropped (and counted). */
  readonly maxPendingItems?: number;
  readonly onDropped?: (items: number, reason: "full" | "failed") => void;
  readonly onDeferred?: (items: number) => void;
  /**
   * The lane fell behind (a wait gave up on a stalled call; `items`: the work queued then), or
   * caught up again (drained). While behind, work deferred is reported with `items` as it comes:
   * commits do not wait for it, and a crash before it is applied loses it.
   */
  readonly onBehind?: (event: "behind" | "deferred_behind" | "caught_up", items: number) => void;
}

export class DeferredStateLane {
  readonly guards: ScoringGuards;
  readonly #options: Required<Omit<DeferredStateLaneOptions, "onDropped" | "onDeferred" | "onBehind">> &
    Pick<DeferredStateLaneOptions, "onDropped" | "onDeferred" | "onBehind">;
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
  /** When the apply call in flight started (performance.now()): what a stall is measured from. */
  #callStartedMs = 0;
  /** A wait gave up on a stalled call, and the lane has not drained since (drainedUnlessStalled). */
  #behind = false;
  /** A live store call failed since the lane last drained: calls are kept short (LANE_LIVE_BATCH_ITEMS). */
  #recovering = false;
  /** When a batch was last decided live (performance.now()); see LANE_BACKLOG_BATCH_ITEMS. */
  #liveAtMs = -Infinity;

  constructor({
    apply,
    timeoutMs = LANE_CALL_TIMEOUT_MS,
    stallMs = Infinity,
    maxBatchItems = LANE_BATCH_ITEMS,
    maxPendingItems = 100_000,
    onDropped,
    onDeferred,
    onBehind,
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
    this.#options = {
      apply,
      timeoutMs,
      stallMs,
      maxBatchItems,
      maxPendingItems,
      onDropped,
      onDeferred,
      onBehind,
    };
  }

  /** True while any state work is queued or running. */
  get busy(): boolean {
    return this.#pendingItems > 0;
  }

  /** A wait gave up on this lane's stalled call, and it has not drained since. */
  get behind(): boolean {
    return this.#behind;
  }

  /**
   * Behind, and the call in flight still unanswered after stallMs: the store does not answer now.
   * Once it does, the lane's next calls are timed afresh, so this ends with the stall even while
   * the lane is still catching up.
   */
  get storeStalled(): boolean {
    return this.#behind && this.#running && performance.now() - this.#callStartedMs >= this.#options.stallMs;
  }

  get pendingItems(): number {
    return this.#pendingItems;
  }

  /**
   * A batch was decided live (its state work done in line, not here): for LANE_LIVE_QUIET_MS the
   * lane's calls stay short, so that fresh decisions do not wait behind long ones.
   */
  liveBatchDecided(): void {
    this.#liveAtMs = performance.now();
  }

  /** True while this card has state work queued or running here. */
  holds(cardId: string): boolean {
    return this.#pendingByCard.has(cardId);
  }

  /**
   * Queues these transactions' state work. `backlog`: the consumer's own backlog, late through
   * and through, sent here in bulk; only such work is what room() holds the consumer for.
   * `storeFailed`: a live store call for them failed (it timed out, or the store refused it): the
   * store has already had the time a live call may wait, so the lane is behind at once (with
   * stallMs set) instead of a commit first waiting stallMs more for the lane's own call; and
   * until it drains it works in short calls, beside the live decisions (LANE_LIVE_BATCH_ITEMS).
   */
  defer(
    items: readonly ScoringItem[],
    { backlog = false, storeFailed = false }: { backlog?: boolean; storeFailed?: boolean } = {},
  ): void {
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
    if (storeFailed) this.#recovering = true;
    if (this.#behind) this.#options.onBehind?.("deferred_behind", items.length);
    else if (storeFailed && Number.isFinite(this.#options.stallMs)) this.#fallBehind();
    void this.#run();
  }

  /** Resolves when the state work queued so far has been applied (or given up). */
  drained(): Promise<void> {
    if (this.#done >= this.#queued) return Promise.resolve();
    const upTo = this.#queued;
    return new Promise((resolve) => this.#waiters.push({ upTo, resolve }));
  }

  /**
   * Like drained(), but resolves false instead once the apply call in flight has waited stallMs
   * for the store (at once while the lane is behind); the lane is then behind until it drains.
   * An expired timer first lets the loop's I/O phase run once, as GuardedCall's deadline does: on
   * a busy loop the store's reply may be sitting unread in the socket.
   */
  drainedUnlessStalled(): Promise<boolean> {
    const { stallMs } = this.#options;
    if (!Number.isFinite(stallMs)) return this.drained().then(() => true);
    if (this.#done >= this.#queued) return Promise.resolve(true);
    if (this.#behind) return Promise.resolve(false);
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter = {
        upTo: this.#queued,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const check = (): void => {
        if (!this.#waiters.includes(waiter)) return; // drained meanwhile
        const waited = performance.now() - this.#callStartedMs;
        if (waited < stallMs) {
          timer = setTimeout(() => setImmediate(check), stallMs - waited);
          return;
        }
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        if (!this.#behind) this.#fallBehind();
        resolve(false);
      };
      this.#waiters.push(waiter);
      check();
    });
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
        const cap = this.#callCap(this.#queue[0]!);
        while (
          this.#queue.length > 0 &&
          (taken.length === 0 || count + this.#queue[0]!.items.length <= cap)
        ) {
          const next = this.#queue.shift()!;
          taken.push(next);
          count += next.items.length;
        }
        let applied = false;
        this.#callStartedMs = performance.now();
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

  /** Transactions the next call may take, its first deferral being `head`. */
  #callCap(head: Deferred): number {
    const { maxBatchItems } = this.#options;
    if (!head.backlog)
      return this.#recovering ? Math.min(maxBatchItems, LANE_LIVE_BATCH_ITEMS) : maxBatchItems;
    const deep = this.#backlogItems > 2 * LANE_BACKLOG_BATCH_ITEMS;
    const quiet = performance.now() - this.#liveAtMs >= LANE_LIVE_QUIET_MS;
    return deep && quiet ? LANE_BACKLOG_BATCH_ITEMS : maxBatchItems;
  }

  /** No commit waits for the lane until it drains; what waits now is reported. */
  #fallBehind(): void {
    this.#behind = true;
    this.#options.onBehind?.("behind", this.#pendingItems);
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
    if (this.#done >= this.#queued) {
      this.#recovering = false;
      if (this.#behind) {
        this.#behind = false;
        this.#options.onBehind?.("caught_up", 0);
      }
    }
    const hasRoom = (w: { highWater: number }) => !this.#applying || this.#backlogItems <= w.highWater;
    const roomy = this.#roomWaiters.filter(hasRoom);
    this.#roomWaiters = this.#roomWaiters.filter((w) => !hasRoom(w));
    for (const w of roomy) w.resolve();
  }
}
