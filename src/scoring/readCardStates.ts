// The state read of a batch: one store call for the cards' states and the device fan-out
// (histories of cards without state come with it where the store can), then missing state
// rebuilt by stepping the model over the card's capped history rather than started cold.
import { decodeTransactionPayload, type Transaction } from "../codec/messages.js";
import { advanceCardState, emptyCardState, type CardState } from "../features/cardState.js";
import { decodeCardState } from "../features/cardStateCodec.js";
import { computeFeatureHashes, type FeatureHashes } from "../ingest/featureHashes.js";
import type { CallFailure } from "./guardedCall.js";
import type { DeviceTouch, HistoryEntry } from "./ports.js";
import { callTimeoutMs, type ScoringBatch } from "./scoringBatch.js";
import { stepRows } from "./stepModel.js";

const hexKey = (hash: number) => hash.toString(16);

/**
 * ok with `unavailable`: those cards' state could not be read (the store node holding them is
 * down) and they have no slot; the rest of the batch was read as usual.
 */
export type StateRead =
  { ok: true; unavailable?: ReadonlySet<string> } | { ok: false; failure: CallFailure; error?: Error };

/**
 * Fills the batch's card slots and device counts for these transactions: every card's, or
 * every card's but those of a failed store node (returned as `unavailable`, without a slot).
 */
export async function readCardStates(batch: ScoringBatch, indexes: readonly number[]): Promise<StateRead> {
  const { items, ctx, slots, deviceCardCounts } = batch;
  const model = ctx.model!;
  const cardIds: string[] = [];
  const seen = new Set<string>();
  const touches: DeviceTouch[] = [];
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
  if (batch.decide && ctx.guards.stateRead.trialDue) {
    // The half-open breaker's trial, made beside the batch rather than for it: a read of the
    // batch's cards without its device touches (so it changes nothing), whose answer closes the
    // breaker or opens it again; the batch is the rules' meanwhile, as under the open breaker.
    // Made for the batch, the trial held the scoring loop for as long as a store that does not
    // answer was given (the budget left, ~140 ms): Redis stopped for 10 s (chaos: redis-frozen)
    // then held one batch a second that long, and what arrived behind it, a p99 of 128–131 ms.
    void guardedRead(batch, cardIds, []);
    ctx.events?.dependencyFailure?.("state_read", "breaker_open");
    return { ok: false, failure: "breaker_open" };
  }
  const read = await guardedRead(batch, cardIds, touches);
  if (!read.ok) return read;
  const { states, deviceCardCounts: counts, tampered, histories, unavailable: failedIndexes } = read.value;
  touchOf.forEach((itemIndex, t) => (deviceCardCounts[itemIndex] = counts[t] ?? 1));
  if (tampered > 0) ctx.events?.stateOutcome?.("tampered", tampered);
  const unavailable =
    failedIndexes !== undefined && failedIndexes.length > 0
      ? new Set(failedIndexes.map((k) => cardIds[k]!))
      : undefined;
  if (unavailable !== undefined)
    ctx.events?.dependencyFailure?.(
      "state_read",
      "error",
      new Error(`the store node of ${unavailable.size} of ${cardIds.length} cards failed`),
    );

  const missing: string[] = [];
  const prefetched = new Map<string, readonly HistoryEntry[]>();
  // Every card's h and c are views of this one array (see decodeCardState). Nothing writes to a
  // state's h or c in place: a step replaces them with the model's fresh outputs.
  const H = model.hiddenSize;
  const hc = new Float32Array(2 * H * cardIds.length);
  cardIds.forEach((cardId, k) => {
    if (unavailable?.has(cardId) === true) return;
    const stored = states[k];
    const state = stored ? safeDecode(stored.bytes, H, hc.subarray(2 * H * k, 2 * H * (k + 1))) : undefined;
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
  ctx.events?.stateOutcome?.("hit", cardIds.length - (unavailable?.size ?? 0) - missing.length);
  if (missing.length > 0) {
    ctx.events?.stateOutcome?.("miss", missing.length);
    await rebuildFromHistory(batch, missing, prefetched);
  }
  return unavailable === undefined ? { ok: true } : { ok: true, unavailable };
}

/** One read of the store under the state-read guard, within the batch's budget; a failure reported. */
async function guardedRead(
  batch: ScoringBatch,
  cardIds: readonly string[],
  deviceTouches: readonly DeviceTouch[],
) {
  const { ctx } = batch;
  const read = await ctx.guards.stateRead.run(
    () => ctx.store.readBatch({ cardIds, deviceTouches, nowMs: ctx.clock.nowMs() }),
    callTimeoutMs(batch, "stateRead"),
  );
  if (!read.ok) ctx.events?.dependencyFailure?.("state_read", read.failure, read.error);
  return read;
}

function safeDecode(bytes: Uint8Array, hidden: number, hc: Float32Array): CardState | undefined {
  try {
    const state = decodeCardState(bytes, hc);
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
  batch: ScoringBatch,
  cardIds: readonly string[],
  prefetched: ReadonlyMap<string, readonly HistoryEntry[]>,
): Promise<void> {
  const { ctx, slots } = batch;
  // Histories came with the state read where the store could; the rest cost one round trip.
  const unread = cardIds.filter((cardId) => !prefetched.has(cardId));
  const read = new Map(prefetched);
  if (unread.length > 0) {
    const histories = await ctx.guards.stateRead.run(
      () => ctx.store.readHistories(unread),
      callTimeoutMs(batch, "stateRead"),
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
      batch,
      rows.map((r) => {
        const e = r.entries[step]!;
        return {
          state: rebuilt.get(r.cardId)!,
          tx: e.tx,
          hashes: e.hashes,
          deviceCardCount: e.deviceCardCount,
        };
      }),
      false,
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
