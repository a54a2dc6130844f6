// The model's part of a batch: features and one batched LSTM step per "wave" (the k-th
// occurrence of each card goes in wave k, so a card seen twice is stepped twice, in order), the
// policy's inputs (rule verdicts with the card's state known), the cards' advanced state, and
// occlusion attribution for flagged transactions.
import type { Transaction } from "../codec/messages.js";
import { FallbackCause } from "../codec/messages.js";
import { advanceCardState, type CardState } from "../features/cardState.js";
import { computeFeatures, FEATURE_NAMES } from "../features/featureVector.js";
import type { FeatureHashes } from "../ingest/featureHashes.js";
import type { CallFailure } from "./guardedCall.js";
import { callTimeoutMs, causeOf, decideByRules, type ScoringBatch } from "./scoringBatch.js";

const FEATURE_COUNT = FEATURE_NAMES.length;

export interface StepRow {
  readonly state: CardState;
  readonly tx: Transaction;
  readonly hashes: FeatureHashes;
  readonly deviceCardCount: number;
}

export type Stepped =
  | {
      ok: true;
      score: Float32Array;
      h: Float32Array[];
      c: Float32Array[];
      /** The model's inputs, its featureCount per row (an earlier schema's model takes a prefix). */
      x: Float32Array;
      /** Raw feature values, FEATURE_COUNT per row: the rules read them instead of computing them again. */
      raw: Float64Array;
    }
  | { ok: false; failure: CallFailure };

/** Features for each row, then one batched model step. `timed`: count it in the batch's stages. */
export async function stepRows(
  batch: ScoringBatch,
  rows: readonly StepRow[],
  timed: boolean,
): Promise<Stepped> {
  const { ctx, times } = batch;
  const model = ctx.model!;
  const H = model.hiddenSize;
  const W = model.featureCount;
  const B = rows.length;
  const f0 = ctx.clock.monotonicUs();
  // One backing store per step carved into the four arrays (raw first: float64 needs 8-byte
  // alignment): short-lived typed arrays each leave a backing store for the garbage collector,
  // and that work lands in the model call's setImmediate gap. Fresh per step, never reused: x
  // and raw outlive the call (rules, attribution), and a later wave must not overwrite them.
  const floats = B * FEATURE_COUNT;
  const inputs = B * W;
  const arena = new ArrayBuffer(8 * floats + 4 * (inputs + 2 * B * H));
  const raw = new Float64Array(arena, 0, floats);
  const x = new Float32Array(arena, 8 * floats, inputs);
  const h = new Float32Array(arena, 8 * floats + 4 * inputs, B * H);
  const c = new Float32Array(arena, 8 * floats + 4 * inputs + 4 * B * H, B * H);
  rows.forEach((row, k) => {
    computeFeatures(
      row.tx,
      row.hashes,
      row.state,
      { deviceCardCount24h: row.deviceCardCount },
      x,
      k * W,
      raw,
      W,
      k * FEATURE_COUNT,
    );
    h.set(row.state.h, k * H);
    c.set(row.state.c, k * H);
  });
  const m0 = ctx.clock.monotonicUs();
  const result = await ctx.guards.model.run(() => model.step(x, h, c, B), callTimeoutMs(batch, "model"));
  const m1 = ctx.clock.monotonicUs();
  if (timed) {
    times.features += m0 - f0;
    times.model += m1 - m0;
  }
  if (!result.ok) {
    ctx.events?.dependencyFailure?.("model", result.failure, result.error);
    return result;
  }
  const { score, h: h2, c: c2 } = result.value;
  // Views, not copies: each model call returns fresh output buffers, and the state codec copies
  // h and c out when it encodes.
  return {
    ok: true,
    score,
    x,
    raw,
    h: rows.map((_, k) => h2.subarray(k * H, (k + 1) * H)),
    c: rows.map((_, k) => c2.subarray(k * H, (k + 1) * H)),
  };
}

/** A transaction to explain: its features and the card state it was stepped from. */
interface Flagged {
  readonly index: number;
  readonly x: Float32Array;
  readonly state: CardState;
}

/** Waves: the k-th occurrence of each card in `indexes` goes in wave k. */
function wavesOf(batch: ScoringBatch, indexes: readonly number[]): number[][] {
  const waves: number[][] = [];
  const occurrences = new Map<string, number>();
  for (const i of indexes) {
    const cardId = batch.items[i]!.tx.cardId;
    const k = occurrences.get(cardId) ?? 0;
    occurrences.set(cardId, k + 1);
    (waves[k] ??= []).push(i);
  }
  return waves;
}

/**
 * Steps these transactions' cards, decides them (model score, rule verdict with the card's state;
 * late ones by the rules) unless the batch is state-only, and advances the cards' state.
 */
export async function scoreInWaves(batch: ScoringBatch, indexes: readonly number[]): Promise<void> {
  const { items, ctx, slots, deviceCardCounts, late, outcomes } = batch;
  let modelDown: number | undefined;
  // Flagged transactions of every wave, explained together in one model call at the end: a
  // run's fixed cost (~20 µs) dwarfs its per-row cost, and a batch has several waves.
  const explain: Flagged[] = [];
  for (const wave of wavesOf(batch, indexes)) {
    if (modelDown !== undefined) {
      decideByRules(batch, wave, modelDown);
      continue;
    }
    const rows = wave.map((i) => ({
      state: slots.get(items[i]!.tx.cardId)!.state,
      tx: items[i]!.tx,
      hashes: items[i]!.hashes,
      deviceCardCount: deviceCardCounts[i]!,
    }));
    const stepped = await stepRows(batch, rows, true);
    if (!stepped.ok) {
      modelDown =
        stepped.failure === "error"
          ? FallbackCause.FALLBACK_CAUSE_MODEL_UNAVAILABLE
          : causeOf(stepped.failure);
      decideByRules(batch, wave, modelDown);
      continue;
    }
    if (batch.decide) ctx.events?.modelStepped?.(stepped.x, stepped.score, wave.length);
    const W = ctx.model!.featureCount;
    const p0 = ctx.clock.monotonicUs();
    wave.forEach((i, k) => {
      const item = items[i]!;
      const slot = slots.get(item.tx.cardId)!;
      if (batch.decide) {
        const verdict = ctx.rules.evaluate({
          tx: item.tx,
          hashes: item.hashes,
          state: slot.state,
          deviceCardCount: deviceCardCounts[i]!,
          rawFeatures: stepped.raw.subarray(k * FEATURE_COUNT, (k + 1) * FEATURE_COUNT),
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
          if (score >= ctx.thresholds.review && (ctx.explainTopFeatures ?? 0) > 0)
            explain.push({
              index: i,
              x: stepped.x.subarray(k * W, (k + 1) * W),
              state: slot.state,
            });
        }
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
    batch.times.policy += ctx.clock.monotonicUs() - p0;
  }
  if (explain.length > 0) await explainScores(batch, explain);
}

/**
 * Occlusion attribution for the few transactions flagged for review or decline: each feature
 * in turn is reset to 0 (the training mean of a standardised feature) and the score drop is
 * measured, all in one batched model call. Cheap because only flagged transactions pay for it.
 */
async function explainScores(batch: ScoringBatch, flagged: readonly Flagged[]): Promise<void> {
  const { ctx } = batch;
  const model = ctx.model!;
  const H = model.hiddenSize;
  const W = model.featureCount;
  const B = flagged.length * W;
  const x = new Float32Array(B * W);
  const h = new Float32Array(B * H);
  const c = new Float32Array(B * H);
  flagged.forEach(({ x: base, state }, n) => {
    for (let f = 0; f < W; f++) {
      const row = n * W + f;
      x.set(base, row * W);
      x[row * W + f] = 0;
      h.set(state.h, row * H);
      c.set(state.c, row * H);
    }
  });
  const m0 = ctx.clock.monotonicUs();
  const result = await ctx.guards.model.run(() => model.step(x, h, c, B), callTimeoutMs(batch, "model"));
  batch.times.model += ctx.clock.monotonicUs() - m0;
  if (!result.ok) return;
  const top = ctx.explainTopFeatures ?? 0;
  flagged.forEach(({ index }, n) => {
    const outcome = batch.outcomes[index]!;
    const drops = FEATURE_NAMES.slice(0, W).map((name, f) => ({
      name,
      drop: outcome.score - result.value.score[n * W + f]!,
    }));
    outcome.topFeatures = drops
      .filter((d) => d.drop > 0)
      .sort((a, b) => b.drop - a.drop)
      .slice(0, top)
      .map((d) => d.name);
  });
}
