// Shadow scoring: a candidate model scores the batches the live model has just decided, off the
// critical path. A batch is offered once its live decisions are handed to the producer and
// waits in a bounded buffer; one shadow batch runs at a time, on a later turn of the event loop,
// and takes everything buffered (coalescing, as the deferred state lane does), so the shadow
// never delays a live decision and costs one set of round trips per shadow batch. Skipped and
// counted: transactions offered while the buffer is full ("backlog") and those whose budget has
// less left than the model is given at all when their shadow batch starts ("budget").
//
// State: the candidate reads and writes the card states of its own model version (the version
// is in the key) and never live ones. It reads the shared card history to rebuild a card it has
// not seen, but never appends to it (the live write already has), and it leaves out the batch's
// own transactions, which the live write has just added: otherwise it would step them twice.
// A card whose transaction was skipped has a shadow state that missed it: its next shadow batch
// reads it as absent and rebuilds it from the history, as a promoted model would.
import { decodeTransactionPayload, type DecisionInit } from "../codec/messages.js";
import type { CardStateStore, HistoryEntry, ModelStepper, StateReadRequest } from "./ports.js";
import { scoreBatch, type ScoringContext, type ScoringItem } from "./scoreBatch.js";

export type ShadowSkipReason = "budget" | "backlog";

/** The candidate and the card-state store of its version. */
export interface ShadowCandidate {
  readonly store: CardStateStore;
  readonly model: ModelStepper;
}

/** The live context a shadow batch shares (rules, policy, budget, clock) and its own guards. */
export type ShadowContext = Omit<ScoringContext, "store" | "model" | "stateLane" | "backlog" | "events">;

export interface ShadowScoringOptions {
  /** The candidate for the next shadow batch; undefined while nothing is shadowed. */
  readonly candidate: () => ShadowCandidate | undefined;
  readonly context: () => ShadowContext;
  /** Writes the shadow decisions; resolves once acknowledged. */
  readonly publish: (decisions: readonly DecisionInit[]) => Promise<void>;
  /** Transactions that may wait for the shadow; more are skipped as "backlog". */
  readonly maxPending: number;
  readonly events?: {
    scored?(count: number): void;
    skipped?(reason: ShadowSkipReason, count: number): void;
    failed?(error: unknown, count: number): void;
  };
}

export class ShadowScoring {
  readonly #options: ShadowScoringOptions;
  #pending: ScoringItem[] = [];
  #running: Promise<void> | undefined;
  /** Cards whose shadow state missed a skipped transaction (rebuilt at their next shadow batch). */
  readonly #stale = new Set<string>();
  #candidate: ShadowCandidate | undefined;

  constructor(options: ShadowScoringOptions) {
    this.#options = options;
  }

  /** Offers a batch whose live decisions have been handed to the producer. */
  offer(items: readonly ScoringItem[]): void {
    const candidate = this.#options.candidate();
    if (candidate !== this.#candidate) {
      // Another candidate (or none): what was stale for the previous one means nothing now.
      this.#candidate = candidate;
      this.#stale.clear();
    }
    if (candidate === undefined || items.length === 0) return;
    if (this.#pending.length + items.length > this.#options.maxPending) {
      this.#skip("backlog", items);
      return;
    }
    for (const item of items) this.#pending.push(item);
    this.#running ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.#drain())
      .finally(() => (this.#running = undefined));
  }

  /** Resolves once no shadow batch is running (shutdown waits for it). */
  async idle(): Promise<void> {
    await this.#running;
  }

  async #drain(): Promise<void> {
    while (this.#pending.length > 0) {
      const candidate = this.#candidate;
      const taken = this.#pending;
      this.#pending = [];
      if (candidate === undefined) return;
      const ctx = this.#options.context();
      const nowMs = ctx.clock.nowMs();
      const affordable = (item: ScoringItem) =>
        item.budgetStartMs + ctx.budgetMs - nowMs >= ctx.minBudgetForModelMs;
      const items = taken.filter(affordable);
      if (items.length < taken.length)
        this.#skip(
          "budget",
          taken.filter((item) => !affordable(item)),
        );
      if (items.length > 0) await this.#score(items, candidate, ctx);
    }
  }

  #skip(reason: ShadowSkipReason, items: readonly ScoringItem[]): void {
    for (const item of items) this.#stale.add(item.tx.cardId);
    this.#options.events?.skipped?.(reason, items.length);
  }

  async #score(items: readonly ScoringItem[], candidate: ShadowCandidate, ctx: ShadowContext): Promise<void> {
    const { events } = this.#options;
    const rebuild = new Set<string>();
    for (const { tx } of items) if (this.#stale.delete(tx.cardId)) rebuild.add(tx.cardId);
    try {
      const decisions = await scoreBatch(items, {
        ...ctx,
        model: candidate.model,
        store: shadowStateStore(candidate.store, items, rebuild),
        // Never the live lane, backlog or events (drift, state metrics): the shadow is not live.
        stateLane: undefined,
        backlog: undefined,
        events: undefined,
      });
      await this.#options.publish(decisions);
      events?.scored?.(decisions.length);
    } catch (err) {
      for (const { tx } of items) this.#stale.add(tx.cardId);
      events?.failed?.(err, items.length);
    }
  }
}

/**
 * The candidate's view of card state: its own state keys (those of `rebuild` read as absent),
 * the shared history without this batch's transactions, and writes that never append to it.
 */
export function shadowStateStore(
  store: CardStateStore,
  batch: readonly ScoringItem[],
  rebuild: ReadonlySet<string> = new Set(),
): CardStateStore {
  const inBatch = new Set(batch.map((item) => item.tx.transactionId));
  const before = (history: readonly HistoryEntry[]): HistoryEntry[] =>
    history.filter((entry) => {
      const tx = decodeTransactionPayload(entry.payload);
      return !tx.ok || !inBatch.has(tx.value.transactionId);
    });
  return {
    async readBatch(request: StateReadRequest) {
      const read = await store.readBatch(request);
      const states =
        rebuild.size === 0
          ? read.states
          : read.states.map((state, k) => (rebuild.has(request.cardIds[k]!) ? undefined : state));
      // A card read as absent here has no history in the reply: readHistories fetches it.
      const histories = read.histories?.map((h, k) =>
        h === undefined || rebuild.has(request.cardIds[k]!) ? undefined : before(h),
      );
      return { ...read, states, ...(histories === undefined ? {} : { histories }) };
    },
    async readHistories(cardIds) {
      return (await store.readHistories(cardIds)).map(before);
    },
    writeBatch: (writes) => store.writeBatch(writes.map((w) => ({ ...w, history: [] }))),
  };
}
