// scoreBatch: transactions in, one decision each out. The only scoring path: the stream
// processor, replay, the demo and the tests all call it, so what an auditor replays is what
// production ran. It knows nothing of Kafka; it is handed ports (state store, model, rules,
// clock) and guards (circuit breakers).
//
// Round trips per batch: one state read (histories of new cards included), one model step per
// "wave" (a card seen k times in a batch is stepped k times, in order), one state write. When a
// dependency fails, times out or its breaker is open, or too little budget is left, the rules
// decide instead: fallback = true, with the cause. The steps are named modules taking the batch
// object (scoringBatch.ts); this file only orders them.
import type { DecisionInit } from "../codec/messages.js";
import { FallbackCause } from "../codec/messages.js";
import { decisionsOf } from "./decisionOf.js";
import { readCardStates } from "./readCardStates.js";
import { causeOf, decideByRules, openBatch, rulesOnly, type ScoringBatch } from "./scoringBatch.js";
import type { ScoringContext, ScoringItem } from "./scoringContext.js";
import { scoreInWaves } from "./stepModel.js";
import { writeCardStates } from "./writeCardStates.js";

export type { ScoringContext, ScoringEvents, ScoringGuards, ScoringItem } from "./scoringContext.js";

export async function scoreBatch(
  items: readonly ScoringItem[],
  ctx: ScoringContext,
): Promise<DecisionInit[]> {
  const batch = openBatch(items, ctx, { decide: true });
  if (ctx.model === undefined)
    decideByRules(batch, items.keys(), FallbackCause.FALLBACK_CAUSE_MODEL_UNAVAILABLE);
  else if (items.length > 0) {
    triageByBudget(batch);
    if (isBacklog(batch)) ctx.stateLane!.defer(items);
    else await scoreAndKeepState(batch, withoutLaneCards(batch));
  }
  return decisionsOf(batch);
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
 * Read, score, write for these transactions; the rules decide for them if the read fails, and
 * for the transactions of cards whose store node failed (the others are the model's).
 */
async function scoreAndKeepState(batch: ScoringBatch, indexes: readonly number[]): Promise<void> {
  if (indexes.length === 0) return;
  const { ctx, times, items } = batch;
  const t0 = ctx.clock.monotonicUs();
  const read = await readCardStates(batch, indexes);
  times.stateRead = ctx.clock.monotonicUs() - t0;
  if (!read.ok) {
    decideByRules(batch, indexes, causeOf(read.failure));
    ctx.stateLane?.defer(indexes.length === items.length ? items : indexes.map((i) => items[i]!));
    return;
  }
  let scored = indexes;
  if (read.unavailable !== undefined) {
    scored = withoutCards(batch, indexes, read.unavailable);
    const failed = indexes.filter((i) => read.unavailable!.has(items[i]!.tx.cardId));
    decideByRules(batch, failed, FallbackCause.FALLBACK_CAUSE_STATE_UNAVAILABLE);
    ctx.stateLane?.defer(failed.map((i) => items[i]!));
  }
  const scoredItems = scored.length === items.length ? items : scored.map((i) => items[i]!);
  await scoreInWaves(batch, scored);
  const w0 = ctx.clock.monotonicUs();
  await writeCardStates(batch, scoredItems);
  times.stateWrite = ctx.clock.monotonicUs() - w0;
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
 * that misses it): the rules decide them and their work joins the lane. Returns the rest.
 */
function withoutLaneCards(batch: ScoringBatch): number[] {
  const lane = batch.ctx.stateLane;
  if (lane === undefined || !lane.busy) return [...batch.items.keys()];
  const scored: number[] = [];
  const held: number[] = [];
  batch.items.forEach((item, i) => (lane.holds(item.tx.cardId) ? held : scored).push(i));
  decideByRules(batch, held, FallbackCause.FALLBACK_CAUSE_TIMEOUT);
  if (held.length > 0) lane.defer(held.map((i) => batch.items[i]!));
  return scored;
}
