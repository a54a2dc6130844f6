// Shadow scoring: a candidate model scores the batches the live model has just decided, off the
// critical path. A batch is offered once its live decisions are handed to the producer, and its
// shadow work starts on the next turn of the event loop, so it never delays them. One shadow
// batch runs at a time: a batch offered while one runs is skipped ("busy"), as is one whose
// remaining budget is below what the model is given at all ("budget"); both are counted, so
// the report's coverage is known. The candidate's decisions go to their own topic.
//
// State: the candidate reads and writes the card states of its own model version (the version
// is in the key) and never live ones. It reads the shared card history to rebuild a card it has
// not seen, but never appends to it (the live write already has), and it leaves out the batch's
// own transactions, which the live write has just added: otherwise it would step them twice.
import { decodeTransactionPayload, type DecisionInit } from "../codec/messages.js";
import type { CardStateStore, HistoryEntry, ModelStepper, StateReadRequest } from "./ports.js";
import { scoreBatch, type ScoringContext, type ScoringItem } from "./scoreBatch.js";

export type ShadowSkipReason = "budget" | "busy";

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
  readonly events?: {
    scored?(count: number): void;
    skipped?(reason: ShadowSkipReason, count: number): void;
    failed?(error: unknown, count: number): void;
  };
}

export class ShadowScoring {
  readonly #options: ShadowScoringOptions;
  #running: Promise<void> | undefined;

  constructor(options: ShadowScoringOptions) {
    this.#options = options;
  }

  /** Offers a batch whose live decisions have been handed to the producer. */
  offer(items: readonly ScoringItem[]): void {
    const candidate = this.#options.candidate();
    if (candidate === undefined || items.length === 0) return;
    const { events } = this.#options;
    if (this.#running !== undefined) return events?.skipped?.("busy", items.length);
    const ctx = this.#options.context();
    if (remainingBudgetMs(items, ctx) < ctx.minBudgetForModelMs)
      return events?.skipped?.("budget", items.length);
    this.#running = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.#score(items, candidate, ctx))
      .finally(() => (this.#running = undefined));
  }

  /** Resolves once no shadow batch is running (shutdown waits for it). */
  async idle(): Promise<void> {
    await this.#running;
  }

  async #score(items: readonly ScoringItem[], candidate: ShadowCandidate, ctx: ShadowContext): Promise<void> {
    const { events } = this.#options;
    try {
      const decisions = await scoreBatch(items, {
        ...ctx,
        model: candidate.model,
        store: shadowStateStore(candidate.store, items),
      });
      await this.#options.publish(decisions);
      events?.scored?.(decisions.length);
    } catch (err) {
      events?.failed?.(err, items.length);
    }
  }
}

/** Milliseconds left of the batch's tightest budget. */
const remainingBudgetMs = (items: readonly ScoringItem[], ctx: ShadowContext): number => {
  let start = Infinity;
  for (const item of items) start = Math.min(start, item.budgetStartMs);
  return start + ctx.budgetMs - ctx.clock.nowMs();
};

/**
 * The candidate's view of card state: its own state keys, the shared history without this
 * batch's transactions, and writes that never append to the history.
 */
export function shadowStateStore(store: CardStateStore, batch: readonly ScoringItem[]): CardStateStore {
  const inBatch = new Set(batch.map((item) => item.tx.transactionId));
  const before = (history: readonly HistoryEntry[]): HistoryEntry[] =>
    history.filter((entry) => {
      const tx = decodeTransactionPayload(entry.payload);
      return !tx.ok || !inBatch.has(tx.value.transactionId);
    });
  return {
    async readBatch(request: StateReadRequest) {
      const read = await store.readBatch(request);
      return read.histories === undefined
        ? read
        : { ...read, histories: read.histories.map((h) => (h === undefined ? undefined : before(h))) };
    },
    async readHistories(cardIds) {
      return (await store.readHistories(cardIds)).map(before);
    },
    writeBatch: (writes) => store.writeBatch(writes.map((w) => ({ ...w, history: [] }))),
  };
}
