// One batch in flight: the per-batch object every scoring step takes (the items, the context,
// each transaction's outcome so far, the cards' working state, stage times, the budget's end).
import { FallbackCause } from "../codec/messages.js";
import type { CardState } from "../features/cardState.js";
import type { CallFailure } from "./guardedCall.js";
import type { HistoryEntry, RuleVerdict, StreamPosition } from "./ports.js";
import type { ScoringContext, ScoringItem } from "./scoringContext.js";

/** Per-batch stage durations in microseconds, shared by every decision of the batch. */
export interface StageTimes {
  stateRead: number;
  features: number;
  model: number;
  policy: number;
  stateWrite: number;
}

/** A card's working state during the batch. */
export interface CardSlot {
  state: CardState;
  /** Position of the last transaction applied; -1 when none. */
  position: StreamPosition;
  /** History entries to append with the write, for transactions applied in this batch. */
  readonly history: HistoryEntry[];
  changed: boolean;
}

export interface Outcome {
  score: number;
  verdict: RuleVerdict;
  topFeatures: string[];
  fallbackCause: number; // FallbackCause; UNSPECIFIED = the model decided
}

export interface ScoringBatch {
  readonly items: readonly ScoringItem[];
  readonly ctx: ScoringContext;
  /** False on the state-only path (the deferred lane): no rules are evaluated, nothing decided. */
  readonly decide: boolean;
  readonly pickedAtMs: number;
  /** Epoch ms when the most urgent transaction the model may decide runs out of budget. */
  budgetEndMs: number;
  /** Transactions the rules decide for lack of budget; their state work is still done. */
  readonly late: Set<number>;
  readonly outcomes: Array<Outcome | undefined>;
  readonly slots: Map<string, CardSlot>;
  /** Distinct cards on the transaction's device (this one included); 0 without a device. */
  readonly deviceCardCounts: Float64Array;
  readonly times: StageTimes;
}

export function openBatch(
  items: readonly ScoringItem[],
  ctx: ScoringContext,
  { decide }: { decide: boolean },
): ScoringBatch {
  return {
    items,
    ctx,
    decide,
    pickedAtMs: ctx.clock.nowMs(),
    budgetEndMs: Infinity,
    late: new Set(),
    outcomes: new Array<Outcome | undefined>(items.length),
    slots: new Map(),
    deviceCardCounts: Float64Array.from(items, (item) => (item.hashes.device !== 0 ? 1 : 0)),
    times: { stateRead: 0, features: 0, model: 0, policy: 0, stateWrite: 0 },
  };
}

/**
 * After a call, the rest of the path still needs time: each call may use the budget that is
 * left minus a reserve for what follows it (a share of minBudgetForModelMs: all of it after the
 * state read, half after the model step, a quarter after the state write, for the produce).
 */
const RESERVE_SHARE = { stateRead: 1, model: 0.5, stateWrite: 0.25 } as const;

/** The call's own timeout from what the budget has left; undefined = the guard's default. */
export function callTimeoutMs(batch: ScoringBatch, call: keyof typeof RESERVE_SHARE): number | undefined {
  if (!Number.isFinite(batch.budgetEndMs)) return undefined;
  const { minBudgetForModelMs, clock } = batch.ctx;
  return batch.budgetEndMs - minBudgetForModelMs * RESERVE_SHARE[call] - clock.nowMs();
}

export const causeOf = (failure: CallFailure): number =>
  failure === "breaker_open"
    ? FallbackCause.FALLBACK_CAUSE_BREAKER_OPEN
    : failure === "timeout"
      ? FallbackCause.FALLBACK_CAUSE_TIMEOUT
      : FallbackCause.FALLBACK_CAUSE_STATE_UNAVAILABLE;

/** The rules alone, on transaction-only facts (card state unknown). */
export function rulesOnly(batch: ScoringBatch, i: number, fallbackCause: number): Outcome {
  const item = batch.items[i]!;
  const verdict = batch.ctx.rules.evaluate({
    tx: item.tx,
    hashes: item.hashes,
    state: null,
    deviceCardCount: null,
  });
  return { score: verdict.score, verdict, topFeatures: [], fallbackCause };
}

/** These transactions (unless late, already decided) are decided by the rules for `cause`. */
export function decideByRules(batch: ScoringBatch, indexes: Iterable<number>, cause: number): void {
  if (!batch.decide) return;
  for (const i of indexes) if (!batch.late.has(i)) batch.outcomes[i] = rulesOnly(batch, i, cause);
}
