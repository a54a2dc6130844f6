// decideBatch / scoreBatch: transactions in, one decision each out. The only scoring path: the
// stream processor (decideBatch), replay, the demo and the tests (scoreBatch, the same path
// awaited to the end) all run it, so what an auditor replays is what production ran. It knows
// nothing of Kafka; it is handed ports (state store, model, rules, clock) and guards (circuit
// breakers).
//
// Round trips per batch: one state read (histories of new cards included), one model step per
// "wave" (a card seen k times in a batch is stepped k times, in order), one state write. When a
// dependency fails, times out or its breaker is open, or too little budget is left, the rules
// decide instead: fallback = true, with the cause. The steps are named modules taking the batch
// object (scoringBatch.ts); this file only orders them.
//
// Write-behind: no decision depends on its batch's state write (a failed write only sends the
// batch's state work to the deferred lane), so decideBatch returns the decisions as soon as the
// write has left, with a promise for its outcome; the caller publishes them and starts the next
// batch while the write is answered, and commits the offsets only once both are done. The next
// batch's read follows the write on the same connection, so Redis applies one before the other
// (stateWritesInFlight.ts covers the one thing that order cannot tell: a write that failed).
import type { DecisionInit } from "../codec/messages.js";
import { FallbackCause } from "../codec/messages.js";
import { decisionsOf } from "./decisionOf.js";
import { isBudgetTimeout } from "./guardedCall.js";
import { readCardStates, type StateRead } from "./readCardStates.js";
import { causeOf, decideByRules, openBatch, rulesOnly, type ScoringBatch } from "./scoringBatch.js";
import type { ScoringContext, ScoringItem } from "./scoringContext.js";
import { scoreInWaves } from "./stepModel.js";
import { writeCardStates } from "./writeCardStates.js";

export type { ScoringContext, ScoringEvents, ScoringGuards, ScoringItem } from "./scoringContext.js";

/** A batch's decisions, ready before its state write is answered. */
export interface DecidedBatch {
  readonly decisions: DecisionInit[];
  /**
   * Settles once the batch's state write is answered, or has failed and its work is on the
   * deferred lane; never rejects. Offsets may be committed only after it.
   */
  readonly stateWritten: Promise<void>;
}

const NOTHING_TO_WRITE: Promise<void> = Promise.resolve();
const STORE_STALLED: StateRead = { ok: false, failure: "error" };

/** decideBatch awaited through its state write: the batch's whole effect done on return. */
export async function scoreBatch(
  items: readonly ScoringItem[],
  ctx: ScoringContext,
): Promise<DecisionInit[]> {
  const { decisions, stateWritten } = await decideBatch(items, ctx);
  await stateWritten;
  return decisions;
}

export async function decideBatch(items: readonly ScoringItem[], ctx: ScoringContext): Promise<DecidedBatch> {
  const batch = openBatch(items, ctx, { decide: true });
  let stateWritten = NOTHING_TO_WRITE;
  if (ctx.model === undefined)
    decideByRules(batch, items.keys(), FallbackCause.FALLBACK_CAUSE_MODEL_UNAVAILABLE);
  else if (items.length > 0) {
    triageByBudget(batch);
    if (isBacklog(batch)) ctx.stateLane!.defer(items, { backlog: true });
    else {
      ctx.stateLane?.liveBatchDecided();
      stateWritten = (await scoreAndKeepState(batch, withoutLaneCards(batch))).stateWritten;
    }
  }
  return { decisions: decisionsOf(batch), stateWritten };
}

/**
 * The state work of these transactions (read, rebuild, model steps, write) without decisions:
 * what the deferred state lane runs to catch up. No rules are evaluated. False when it could not
 * be applied.
 */
export async function applyStateOnly(items: readonly ScoringItem[], ctx: ScoringContext): Promise<boolean> {
  if (ctx.model === undefined || items.length === 0) return items.length === 0;
  const batch = openBatch(items, { ...ctx, stateLane: undefined, explainTopFeatures: 0 }, { decide: false });
  const all = [...items.keys()];
  const read = await readCardStates(batch, all);
  if (!read.ok) return false;
  // Cards on a failed store node are skipped (and reported not applied); the rest are applied.
  const readable = read.unavailable === undefined ? all : withoutCards(batch, all, read.unavailable);
  await scoreInWaves(batch, readable);
  return (await writeCardStates(batch, [])) && read.unavailable === undefined;
}

/** These transactions but those of `cards`. */
function withoutCards(batch: ScoringBatch, indexes: readonly number[], cards: ReadonlySet<string>): number[] {
  return indexes.filter((i) => !cards.has(batch.items[i]!.tx.cardId));
}

/**
 * Read, score, and send the write for these transactions; the rules decide for them if the
 * read fails, and for the transactions of cards whose store node failed (the others are the
 * model's). Returns once the write has left (wrapped: an async function would wait for it).
 */
async function scoreAndKeepState(
  batch: ScoringBatch,
  indexes: readonly number[],
): Promise<{ stateWritten: Promise<void> }> {
  if (indexes.length === 0) return { stateWritten: NOTHING_TO_WRITE };
  const { ctx, times, items } = batch;
  const t0 = ctx.clock.monotonicUs();
  const earlierWrites = ctx.writesInFlight?.settled();
  // The store has left the lane's call unanswered longer than a live read may wait (exactly-once
  // only; see DeferredStateLane.storeStalled): a read now would spend the batch's budget waiting
  // too, and in exactly-once the whole delivery's with it. Those waits kept the breaker closed (a
  // timeout the budget set is not counted against it) and held decisions 100-160 ms a delivery
  // for seconds after Redis was stopped (chaos: redis-frozen-exactly-once).
  const read = ctx.stateLane?.storeStalled === true ? STORE_STALLED : await readCardStates(batch, indexes);
  if (earlierWrites !== undefined) await earlierWrites;
  times.stateRead = ctx.clock.monotonicUs() - t0;
  if (!read.ok) {
    decideByRules(batch, indexes, causeOf(read.failure));
    // A read cut short by the batch's own budget (a late batch) says nothing of the store.
    ctx.stateLane?.defer(indexes.length === items.length ? items : indexes.map((i) => items[i]!), {
      storeFailed: !isBudgetTimeout(read.error),
    });
    return { stateWritten: NOTHING_TO_WRITE };
  }
  // A write in flight when this read left may have failed since: its cards are the lane's now.
  let scored = withoutLaneCards(batch, indexes);
  if (read.unavailable !== undefined) {
    const failed = scored.filter((i) => read.unavailable!.has(items[i]!.tx.cardId));
    scored = withoutCards(batch, scored, read.unavailable);
    decideByRules(batch, failed, FallbackCause.FALLBACK_CAUSE_STATE_UNAVAILABLE);
    ctx.stateLane?.defer(
      failed.map((i) => items[i]!),
      { storeFailed: true },
    );
  }
  const scoredItems = scored.length === items.length ? items : scored.map((i) => items[i]!);
  await scoreInWaves(batch, scored);
  // The decisions' stateWrite is what they waited for: building and sending the write, not its
  // round trip, which settles behind them.
  const w0 = ctx.clock.monotonicUs();
  const stateWritten = writeCardStates(batch, scoredItems).then(() => undefined);
  times.stateWrite = ctx.clock.monotonicUs() - w0;
  ctx.writesInFlight?.add(stateWritten);
  return { stateWritten };
}

/**
 * Budget triage: what cannot afford the model is decided by the rules now. Those transactions
 * still go through state read, model step and state write with the rest of the batch (one set
 * of round trips either way), so the card's state never misses a transaction that was merely
 * late, e.g. in the backlog after a restart.
 */
function triageByBudget(batch: ScoringBatch): void {
  const { items, ctx, late } = batch;
  for (let i = 0; i < items.length; i++) {
    const endMs = items[i]!.budgetStartMs + ctx.budgetMs;
    if (endMs - batch.pickedAtMs < ctx.minBudgetForModelMs) late.add(i);
    else batch.budgetEndMs = Math.min(batch.budgetEndMs, endMs);
  }
  for (const i of late)
    batch.outcomes[i] = rulesOnly(batch, i, FallbackCause.FALLBACK_CAUSE_BUDGET_EXHAUSTED);
}

/**
 * In a real backlog (overload, or a restart), a batch late through and through with much more
 * queued behind it, the state work goes to the lane, which applies it in large coalesced batches:
 * catching up costs one round trip per thousands of transactions, not per batch. A late batch
 * without such a backlog (a pause, a blip) is handled in line.
 */
function isBacklog({ items, ctx, late }: ScoringBatch): boolean {
  return (
    ctx.stateLane !== undefined &&
    late.size === items.length &&
    (ctx.backlog?.() ?? 0) >= (ctx.backlogForLane ?? Infinity)
  );
}

/**
 * Cards with state work still queued on the lane wait behind it (deciding now would read state
 * that misses it): the rules decide them and their work joins the lane. Returns the rest of
 * `indexes` (every transaction by default).
 */
function withoutLaneCards(batch: ScoringBatch, indexes?: readonly number[]): readonly number[] {
  const lane = batch.ctx.stateLane;
  const all = indexes ?? [...batch.items.keys()];
  if (lane === undefined || !lane.busy) return all;
  const scored: number[] = [];
  const held: number[] = [];
  for (const i of all) (lane.holds(batch.items[i]!.tx.cardId) ? held : scored).push(i);
  decideByRules(batch, held, FallbackCause.FALLBACK_CAUSE_TIMEOUT);
  if (held.length > 0) lane.defer(held.map((i) => batch.items[i]!));
  return scored;
}
