// scoreBatch: transactions in, one decision each out. The only scoring path: the stream
// processor, replay, the demo and the tests all call it, so what an auditor replays is what
// production ran. It knows nothing of Kafka; it is handed ports (state store, model, rules,
// clock) and guards (circuit breakers).
//
// Round trips per batch: one state read (plus one history read only for cards whose state is
// missing), one model step per "wave" (a card seen k times in a batch is stepped k times, in
// order), one state write. When a dependency fails, times out or its breaker is open, or too
// little budget is left, the rules decide instead: fallback = true, with the cause.
import type { DecisionInit, Transaction } from "../codec/messages.js";
import { decodeTransactionPayload, FallbackCause } from "../codec/messages.js";
import { advanceCardState, emptyCardState, type CardState } from "../features/cardState.js";
import { decodeCardState, encodeCardState } from "../features/cardStateCodec.js";
import { computeFeatures, FEATURE_NAMES } from "../features/featureVector.js";
import { computeFeatureHashes, type FeatureHashes } from "../ingest/featureHashes.js";
import type { DeferredStateLane } from "./deferredStateLane.js";
import type { CallFailure, GuardedCall } from "./guardedCall.js";
import { decideAction, reasonCodes, type PolicyThresholds } from "./policy.js";
import type {
  CardStateStore,
  CardStateWrite,
  Clock,
  HistoryEntry,
  ModelStepper,
  RuleEvaluator,
  RuleVerdict,
  StreamPosition,
} from "./ports.js";

export interface ScoringItem {
  readonly tx: Transaction;
  /** The transaction's Protobuf payload, kept in the card's history for rebuilds. */
  readonly payload: Uint8Array;
  readonly hashes: FeatureHashes;
  readonly position: StreamPosition;
  /** When the budget started: the Kafka record's timestamp (epoch ms). */
  readonly budgetStartMs: number;
  readonly decodeUs: number;
}

export interface ScoringGuards {
  readonly stateRead: GuardedCall;
  readonly model: GuardedCall;
  readonly stateWrite: GuardedCall;
}

export interface ScoringEvents {
  stateOutcome?(outcome: "hit" | "miss" | "rebuild" | "tampered" | "stale_write", count: number): void;
  dependencyFailure?(
    dependency: "state_read" | "model" | "state_write",
    failure: CallFailure,
    error?: Error,
  ): void;
}

export interface ScoringContext {
  readonly store: CardStateStore;
  /** Undefined while no verified model is loaded: every decision is then the rules'. */
  readonly model: ModelStepper | undefined;
  readonly rules: RuleEvaluator;
  readonly thresholds: PolicyThresholds;
  readonly budgetMs: number;
  /** Below this much remaining budget a transaction is not sent to the state store or model. */
  readonly minBudgetForModelMs: number;
  readonly guards: ScoringGuards;
  readonly clock: Clock;
  /** How many features to name in reason codes for REVIEW/DECLINE model decisions (0 = none). */
  readonly explainTopFeatures?: number;
  readonly events?: ScoringEvents;
  /**
   * Where state work goes when a state call times out or fails, to be applied later in order
   * (see deferredStateLane.ts). Without one (replay, tests) such transactions leave state as is.
   */
  readonly stateLane?: DeferredStateLane;
  /** Transactions queued behind this batch (the scoring queue's depth). */
  readonly backlog?: () => number;
  /** From this backlog on, a wholly late batch's state work goes to the lane in bulk. */
  readonly backlogForLane?: number;
}

/** The context of one batch: the scoring context and when the batch's budget runs out. */
interface BatchScope extends ScoringContext {
  /** Epoch ms when the most urgent transaction decided in this batch runs out of budget. */
  readonly budgetEndMs: number;
}

/**
 * After a call, the rest of the path still needs time: each call may use the budget that is
 * left minus a reserve for what follows it (a share of minBudgetForModelMs: all of it after the
 * state read, half after the model step, a quarter after the state write, for the produce).
 */
const RESERVE_SHARE = { stateRead: 1, model: 0.5, stateWrite: 0.25 } as const;

/** The call's own timeout from what the budget has left; undefined = the guard's default. */
function callTimeoutMs(ctx: BatchScope, call: keyof typeof RESERVE_SHARE): number | undefined {
  if (!Number.isFinite(ctx.budgetEndMs)) return undefined;
  return ctx.budgetEndMs - ctx.minBudgetForModelMs * RESERVE_SHARE[call] - ctx.clock.nowMs();
}

/** Per-batch stage durations in microseconds, shared by every decision of the batch. */
interface StageTimes {
  stateRead: number;
  features: number;
  model: number;
  policy: number;
  stateWrite: number;
}

/** A card's working state during the batch. */
interface CardSlot {
  state: CardState;
  /** Position of the last transaction applied; -1 when none. */
  position: StreamPosition;
  /** History entries to append with the write, for transactions applied in this batch. */
  readonly history: HistoryEntry[];
  changed: boolean;
}

interface Outcome {
  score: number;
  verdict: RuleVerdict;
  topFeatures: string[];
  fallbackCause: number; // FallbackCause; UNSPECIFIED = the model decided
}

const FEATURE_COUNT = FEATURE_NAMES.length;

const causeOf = (failure: CallFailure): number =>
  failure === "breaker_open"
    ? FallbackCause.FALLBACK_CAUSE_BREAKER_OPEN
    : failure === "timeout"
      ? FallbackCause.FALLBACK_CAUSE_TIMEOUT
      : FallbackCause.FALLBACK_CAUSE_STATE_UNAVAILABLE;

const hexKey = (hash: number) => hash.toString(16);

export async function scoreBatch(
  items: readonly ScoringItem[],
  ctx: ScoringContext,
): Promise<DecisionInit[]> {
  const { clock } = ctx;
  const pickedAtMs = clock.nowMs();
  const times: StageTimes = { stateRead: 0, features: 0, model: 0, policy: 0, stateWrite: 0 };
  const outcomes: Array<Outcome | undefined> = new Array(items.length);
  // Distinct cards on the transaction's device (this one included); 0 without a device.
  const deviceCardCounts = Float64Array.from(items, (item) => (item.hashes.device !== 0 ? 1 : 0));

  // Budget triage: what cannot afford the model is decided by the rules. Those transactions
  // still go through state read, model step and state write with the rest of the batch (one
  // set of round trips either way), so the card's state never misses a transaction that was
  // merely late, e.g. in the backlog after a restart.
  const late = new Set<number>();
  for (let i = 0; i < items.length; i++) {
    const remaining = ctx.budgetMs - (pickedAtMs - items[i]!.budgetStartMs);
    if (ctx.model === undefined) {
      outcomes[i] = rulesOnly(items[i]!, ctx, FallbackCause.FALLBACK_CAUSE_MODEL_UNAVAILABLE);
    } else if (remaining < ctx.minBudgetForModelMs) {
      late.add(i);
      outcomes[i] = rulesOnly(items[i]!, ctx, FallbackCause.FALLBACK_CAUSE_BUDGET_EXHAUSTED);
    }
  }

  let budgetEndMs = Infinity;
  for (let i = 0; i < items.length; i++)
    if (!late.has(i)) budgetEndMs = Math.min(budgetEndMs, items[i]!.budgetStartMs + ctx.budgetMs);
  const scope: BatchScope = { ...ctx, budgetEndMs };

  const slots = new Map<string, CardSlot>();
  // In a real backlog (overload, or a restart) — a batch late through and through with much
  // more queued behind it — the rules decide now and the state work goes to the lane, which
  // applies it in large coalesced batches: catching up costs one round trip per thousands of
  // transactions, not per batch. A late batch without such a backlog (a pause, a blip) is
  // handled in line, so the model keeps deciding at sustainable rates.
  const inBacklog =
    items.length > 0 &&
    late.size === items.length &&
    (ctx.backlog?.() ?? 0) >= (ctx.backlogForLane ?? Infinity);
  const lane = ctx.stateLane;
  if (ctx.model !== undefined && lane !== undefined && inBacklog) {
    lane.defer(items);
  } else if (ctx.model !== undefined && items.length > 0) {
    // Cards with state work still queued on the lane wait behind it (deciding now would read
    // state that misses it); every other card is scored by the model as usual.
    const scored: number[] = [];
    const held: ScoringItem[] = [];
    for (let i = 0; i < items.length; i++) {
      if (lane?.busy === true && lane.holds(items[i]!.tx.cardId)) {
        if (!late.has(i)) outcomes[i] = rulesOnly(items[i]!, ctx, FallbackCause.FALLBACK_CAUSE_TIMEOUT);
        held.push(items[i]!);
      } else scored.push(i);
    }
    if (held.length > 0) lane!.defer(held);
    const scoredItems = held.length === 0 ? items : scored.map((i) => items[i]!);
    const t0 = clock.monotonicUs();
    const read =
      scored.length === 0
        ? ({ ok: true } as const)
        : await readStates(items, scored, scope, slots, deviceCardCounts);
    times.stateRead = clock.monotonicUs() - t0;
    if (!read.ok) {
      for (const i of scored)
        if (!late.has(i)) outcomes[i] = rulesOnly(items[i]!, ctx, causeOf(read.failure));
      lane?.defer(scoredItems);
    } else if (scored.length > 0) {
      await scoreWithModel(items, scored, late, scope, slots, deviceCardCounts, outcomes, times);
      const w0 = clock.monotonicUs();
      await writeStates(slots, scope, scoredItems);
      times.stateWrite = clock.monotonicUs() - w0;
    }
  }
  // Every path above decides each transaction; this only guards against a path that forgot one.
  for (let i = 0; i < items.length; i++)
    outcomes[i] ??= rulesOnly(items[i]!, ctx, FallbackCause.FALLBACK_CAUSE_INTERNAL_ERROR);

  const decidedAtMs = clock.nowMs();
  return items.map((item, i) => toDecision(item, outcomes[i]!, ctx, times, pickedAtMs, decidedAtMs));
}

async function readStates(
  items: readonly ScoringItem[],
  indexes: readonly number[],
  ctx: BatchScope,
  slots: Map<string, CardSlot>,
  deviceCardCounts: Float64Array,
): Promise<{ ok: true } | { ok: false; failure: CallFailure }> {
  const model = ctx.model!;
  const cardIds: string[] = [];
  const seen = new Set<string>();
  const touches: Array<{ deviceKey: string; cardId: string }> = [];
  const touchOf: number[] = [];
  for (const i of indexes) {
    const { tx, hashes } = items[i]!;
    if (!seen.has(tx.cardId)) {
      seen.add(tx.cardId);
      cardIds.push(tx.cardId);
    }
    if (hashes.device !== 0) {
      touches.push({ deviceKey: hexKey(hashes.device), cardId: tx.cardId });
      touchOf.push(i);
    }
  }
  const read = await ctx.guards.stateRead.run(
    () => ctx.store.readBatch({ cardIds, deviceTouches: touches, nowMs: ctx.clock.nowMs() }),
    callTimeoutMs(ctx, "stateRead"),
  );
  if (!read.ok) {
    ctx.events?.dependencyFailure?.("state_read", read.failure, read.error);
    return read;
  }
  const { states, deviceCardCounts: counts, tampered, histories } = read.value;
  touchOf.forEach((itemIndex, t) => (deviceCardCounts[itemIndex] = counts[t] ?? 1));
  if (tampered > 0) ctx.events?.stateOutcome?.("tampered", tampered);

  const missing: string[] = [];
  const prefetched = new Map<string, readonly HistoryEntry[]>();
  cardIds.forEach((cardId, k) => {
    const stored = states[k];
    const state = stored ? safeDecode(stored.bytes, model.hiddenSize) : undefined;
    if (stored && state) {
      slots.set(cardId, { state, position: stored.position, history: [], changed: false });
    } else {
      missing.push(cardId);
      const history = histories?.[k];
      if (history !== undefined) prefetched.set(cardId, history);
      slots.set(cardId, {
        state: emptyCardState(model.hiddenSize),
        position: -1,
        history: [],
        changed: false,
      });
    }
  });
  ctx.events?.stateOutcome?.("hit", cardIds.length - missing.length);
  if (missing.length > 0) {
    ctx.events?.stateOutcome?.("miss", missing.length);
    await rebuildFromHistory(missing, prefetched, ctx, slots);
  }
  return { ok: true };
}

function safeDecode(bytes: Uint8Array, hidden: number): CardState | undefined {
  try {
    const state = decodeCardState(bytes);
    return state.h.length === hidden ? state : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Missing (or other-version, or tampered) state is rebuilt by stepping the model over the
 * card's capped recent history rather than started cold. Best effort: on any failure the card
 * starts from empty state, which is what a new card gets anyway.
 */
async function rebuildFromHistory(
  cardIds: readonly string[],
  prefetched: ReadonlyMap<string, readonly HistoryEntry[]>,
  ctx: BatchScope,
  slots: Map<string, CardSlot>,
) {
  // Histories came with the state read where the store could; the rest cost one round trip.
  const unread = cardIds.filter((cardId) => !prefetched.has(cardId));
  const read = new Map(prefetched);
  if (unread.length > 0) {
    const histories = await ctx.guards.stateRead.run(
      () => ctx.store.readHistories(unread),
      callTimeoutMs(ctx, "stateRead"),
    );
    if (histories.ok) unread.forEach((cardId, k) => read.set(cardId, histories.value[k] ?? []));
  }
  const replays = cardIds
    .map((cardId) => ({ cardId, entries: decodeHistory(read.get(cardId) ?? []) }))
    .filter((r) => r.entries.length > 0);
  const longest = replays.reduce((n, r) => Math.max(n, r.entries.length), 0);
  const rebuilt = new Map(replays.map((r) => [r.cardId, slots.get(r.cardId)!.state]));
  for (let step = 0; step < longest; step++) {
    const rows = replays.filter((r) => step < r.entries.length);
    const stepped = await stepRows(
      rows.map((r) => {
        const e = r.entries[step]!;
        return {
          state: rebuilt.get(r.cardId)!,
          tx: e.tx,
          hashes: e.hashes,
          deviceCardCount: e.deviceCardCount,
        };
      }),
      ctx,
    );
    if (!stepped.ok) return;
    rows.forEach((r, k) => {
      const e = r.entries[step]!;
      const advanced = advanceCardState(rebuilt.get(r.cardId)!, e.tx, e.hashes);
      advanced.h = stepped.h[k]!;
      advanced.c = stepped.c[k]!;
      rebuilt.set(r.cardId, advanced);
    });
  }
  for (const [cardId, state] of rebuilt) slots.get(cardId)!.state = state;
  if (rebuilt.size > 0) ctx.events?.stateOutcome?.("rebuild", rebuilt.size);
}

function decodeHistory(entries: readonly HistoryEntry[]) {
  const out: Array<{ tx: Transaction; hashes: FeatureHashes; deviceCardCount: number }> = [];
  for (const entry of entries) {
    const tx = decodeTransactionPayload(entry.payload);
    if (tx.ok)
      out.push({
        tx: tx.value,
        hashes: computeFeatureHashes(tx.value),
        deviceCardCount: entry.deviceCardCount,
      });
  }
  return out;
}

interface StepRow {
  readonly state: CardState;
  readonly tx: Transaction;
  readonly hashes: FeatureHashes;
  readonly deviceCardCount: number;
}

type Stepped =
  | { ok: true; score: Float32Array; h: Float32Array[]; c: Float32Array[]; x: Float32Array }
  | { ok: false; failure: CallFailure };

/** Features for each row, then one batched model step. */
async function stepRows(rows: readonly StepRow[], ctx: BatchScope, times?: StageTimes): Promise<Stepped> {
  const model = ctx.model!;
  const H = model.hiddenSize;
  const B = rows.length;
  const f0 = ctx.clock.monotonicUs();
  const x = new Float32Array(B * FEATURE_COUNT);
  const h = new Float32Array(B * H);
  const c = new Float32Array(B * H);
  rows.forEach((row, k) => {
    computeFeatures(
      row.tx,
      row.hashes,
      row.state,
      { deviceCardCount24h: row.deviceCardCount },
      x,
      k * FEATURE_COUNT,
    );
    h.set(row.state.h, k * H);
    c.set(row.state.c, k * H);
  });
  const m0 = ctx.clock.monotonicUs();
  const result = await ctx.guards.model.run(() => model.step(x, h, c, B), callTimeoutMs(ctx, "model"));
  const m1 = ctx.clock.monotonicUs();
  if (times) {
    times.features += m0 - f0;
    times.model += m1 - m0;
  }
  if (!result.ok) {
    ctx.events?.dependencyFailure?.("model", result.failure, result.error);
    return result;
  }
  const { score, h: h2, c: c2 } = result.value;
  return {
    ok: true,
    score,
    x,
    h: rows.map((_, k) => h2.slice(k * H, (k + 1) * H)),
    c: rows.map((_, k) => c2.slice(k * H, (k + 1) * H)),
  };
}

async function scoreWithModel(
  items: readonly ScoringItem[],
  indexes: readonly number[],
  late: ReadonlySet<number>,
  ctx: BatchScope,
  slots: Map<string, CardSlot>,
  deviceCardCounts: Float64Array,
  outcomes: Array<Outcome | undefined>,
  times: StageTimes,
) {
  // Waves: the k-th occurrence of each card goes in wave k, so a card seen twice is stepped
  // twice, in arrival order, each step from the state the previous one left.
  const waves: number[][] = [];
  const occurrences = new Map<string, number>();
  for (const i of indexes) {
    const cardId = items[i]!.tx.cardId;
    const k = occurrences.get(cardId) ?? 0;
    occurrences.set(cardId, k + 1);
    (waves[k] ??= []).push(i);
  }
  let modelDown: number | undefined;
  for (const wave of waves) {
    if (modelDown !== undefined) {
      for (const i of wave) if (!late.has(i)) outcomes[i] = rulesOnly(items[i]!, ctx, modelDown);
      continue;
    }
    const rows = wave.map((i) => ({
      state: slots.get(items[i]!.tx.cardId)!.state,
      tx: items[i]!.tx,
      hashes: items[i]!.hashes,
      deviceCardCount: deviceCardCounts[i]!,
    }));
    const stepped = await stepRows(rows, ctx, times);
    if (!stepped.ok) {
      modelDown = causeOf(stepped.failure);
      if (stepped.failure === "error") modelDown = FallbackCause.FALLBACK_CAUSE_MODEL_UNAVAILABLE;
      for (const i of wave) if (!late.has(i)) outcomes[i] = rulesOnly(items[i]!, ctx, modelDown);
      continue;
    }
    const p0 = ctx.clock.monotonicUs();
    const explain: number[] = [];
    wave.forEach((i, k) => {
      const item = items[i]!;
      const slot = slots.get(item.tx.cardId)!;
      const verdict = ctx.rules.evaluate({
        tx: item.tx,
        hashes: item.hashes,
        state: slot.state,
        deviceCardCount: deviceCardCounts[i]!,
      });
      if (late.has(i)) {
        // Decided by the rules (with the card's state known); the model step only keeps state.
        outcomes[i] = {
          score: verdict.score,
          verdict,
          topFeatures: [],
          fallbackCause: FallbackCause.FALLBACK_CAUSE_BUDGET_EXHAUSTED,
        };
      } else {
        const score = stepped.score[k]!;
        outcomes[i] = {
          score,
          verdict,
          topFeatures: [],
          fallbackCause: FallbackCause.FALLBACK_CAUSE_UNSPECIFIED,
        };
        if (score >= ctx.thresholds.review && (ctx.explainTopFeatures ?? 0) > 0) explain.push(k);
      }
      // A position at or before the stored one was applied already (a record reprocessed after
      // a crash or rebalance): decide it again, but do not apply it twice.
      if (item.position <= slot.position) return;
      const next = advanceCardState(slot.state, item.tx, item.hashes);
      next.h = stepped.h[k]!;
      next.c = stepped.c[k]!;
      slot.state = next;
      slot.position = item.position;
      slot.changed = true;
      slot.history.push({ payload: item.payload, deviceCardCount: deviceCardCounts[i]! });
    });
    times.policy += ctx.clock.monotonicUs() - p0;
    if (explain.length > 0) await explainScores(explain, wave, rows, stepped, outcomes, ctx, times);
  }
}

/**
 * Occlusion attribution for the few transactions flagged for review or decline: each feature
 * in turn is reset to 0 (the training mean of a standardised feature) and the score drop is
 * measured, all in one batched model call. Cheap because only flagged transactions pay for it.
 */
async function explainScores(
  flagged: readonly number[],
  wave: readonly number[],
  rows: readonly StepRow[],
  stepped: Extract<Stepped, { ok: true }>,
  outcomes: Array<Outcome | undefined>,
  ctx: BatchScope,
  times: StageTimes,
) {
  const model = ctx.model!;
  const H = model.hiddenSize;
  const B = flagged.length * FEATURE_COUNT;
  const x = new Float32Array(B * FEATURE_COUNT);
  const h = new Float32Array(B * H);
  const c = new Float32Array(B * H);
  flagged.forEach((k, n) => {
    const base = stepped.x.subarray(k * FEATURE_COUNT, (k + 1) * FEATURE_COUNT);
    for (let f = 0; f < FEATURE_COUNT; f++) {
      const row = n * FEATURE_COUNT + f;
      x.set(base, row * FEATURE_COUNT);
      x[row * FEATURE_COUNT + f] = 0;
      h.set(rows[k]!.state.h, row * H);
      c.set(rows[k]!.state.c, row * H);
    }
  });
  const m0 = ctx.clock.monotonicUs();
  const result = await ctx.guards.model.run(() => model.step(x, h, c, B), callTimeoutMs(ctx, "model"));
  times.model += ctx.clock.monotonicUs() - m0;
  if (!result.ok) return;
  const top = ctx.explainTopFeatures ?? 0;
  flagged.forEach((k, n) => {
    const outcome = outcomes[wave[k]!]!;
    const drops = FEATURE_NAMES.map((name, f) => ({
      name,
      drop: outcome.score - result.value.score[n * FEATURE_COUNT + f]!,
    }));
    outcome.topFeatures = drops
      .filter((d) => d.drop > 0)
      .sort((a, b) => b.drop - a.drop)
      .slice(0, top)
      .map((d) => d.name);
  });
}

async function writeStates(
  slots: Map<string, CardSlot>,
  ctx: BatchScope,
  items: readonly ScoringItem[] = [],
): Promise<boolean> {
  const writes: CardStateWrite[] = [];
  for (const [cardId, slot] of slots) {
    if (!slot.changed) continue;
    writes.push({
      cardId,
      bytes: encodeCardState(slot.state),
      position: slot.position,
      history: slot.history,
    });
  }
  if (writes.length === 0) return true;
  const written = await ctx.guards.stateWrite.run(
    () => ctx.store.writeBatch(writes),
    callTimeoutMs(ctx, "stateWrite"),
  );
  if (!written.ok) {
    // The decisions stand. The batch's state work is redone off the decision path; where the
    // write did land after all (a timeout), compare-and-set skips what was already applied.
    ctx.events?.dependencyFailure?.("state_write", written.failure, written.error);
    ctx.stateLane?.defer(items);
    return false;
  }
  const stale = written.value.filter((o) => o === "stale").length;
  if (stale > 0) ctx.events?.stateOutcome?.("stale_write", stale);
  return true;
}

/**
 * The state work of these transactions (read, rebuild, model steps, write) without decisions:
 * what the deferred state lane runs to catch up. Returns false when it could not be applied.
 */
export async function applyStateOnly(items: readonly ScoringItem[], ctx: ScoringContext): Promise<boolean> {
  if (ctx.model === undefined || items.length === 0) return items.length === 0;
  // No decision waits on the lane: its calls get the lane guards' own timeouts.
  const laneCtx: BatchScope = { ...ctx, stateLane: undefined, explainTopFeatures: 0, budgetEndMs: Infinity };
  const all = items.map((_, i) => i);
  const slots = new Map<string, CardSlot>();
  const deviceCardCounts = Float64Array.from(items, (item) => (item.hashes.device !== 0 ? 1 : 0));
  const read = await readStates(items, all, laneCtx, slots, deviceCardCounts);
  if (!read.ok) return false;
  const times: StageTimes = { stateRead: 0, features: 0, model: 0, policy: 0, stateWrite: 0 };
  await scoreWithModel(
    items,
    all,
    new Set(all),
    laneCtx,
    slots,
    deviceCardCounts,
    new Array(items.length),
    times,
  );
  return writeStates(slots, laneCtx);
}

/** The rules alone, on transaction-only facts (card state unknown). */
function rulesOnly(item: ScoringItem, ctx: ScoringContext, fallbackCause: number): Outcome {
  const verdict = ctx.rules.evaluate({
    tx: item.tx,
    hashes: item.hashes,
    state: null,
    deviceCardCount: null,
  });
  return { score: verdict.score, verdict, topFeatures: [], fallbackCause };
}

const us = (n: number) => Math.max(0, Math.round(n)) >>> 0;

function toDecision(
  item: ScoringItem,
  outcome: Outcome,
  ctx: ScoringContext,
  times: StageTimes,
  pickedAtMs: number,
  decidedAtMs: number,
): DecisionInit {
  const fallback = outcome.fallbackCause !== FallbackCause.FALLBACK_CAUSE_UNSPECIFIED;
  return {
    transactionId: item.tx.transactionId,
    cardId: item.tx.cardId,
    action: decideAction(outcome.score, outcome.verdict, ctx.thresholds),
    score: outcome.score,
    reasonCodes: reasonCodes(outcome.verdict, outcome.topFeatures),
    modelVersion: ctx.model?.modelVersion ?? "",
    featureSchemaVersion: ctx.model?.featureSchemaVersion ?? "",
    rulesVersion: ctx.rules.version,
    fallback,
    fallbackCause: outcome.fallbackCause,
    eventTimeMs: item.tx.eventTimeMs,
    decidedAtMs,
    timings: {
      queueUs: us((pickedAtMs - item.budgetStartMs) * 1000),
      decodeUs: us(item.decodeUs),
      stateReadUs: us(times.stateRead),
      featuresUs: us(times.features),
      modelUs: us(times.model),
      policyUs: us(times.policy),
      stateWriteUs: us(times.stateWrite),
      totalUs: us((decidedAtMs - item.budgetStartMs) * 1000),
    },
  };
}
