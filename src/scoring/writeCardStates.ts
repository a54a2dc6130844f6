// The state write of a batch: every changed card in one store call, compare-and-set on position.
import { encodedCardStateSize, encodeCardStateInto } from "../features/cardStateCodec.js";
import type { CardStateWrite } from "./ports.js";
import { isBudgetTimeout } from "./guardedCall.js";
import { callTimeoutMs, type ScoringBatch } from "./scoringBatch.js";
import type { ScoringItem } from "./scoringContext.js";

/**
 * Writes the batch's changed cards. False when the write failed, for all cards or for those on
 * a failed store node: the decisions stand, and `redoOnFailure` (of those cards) goes to the deferred lane (where the write did land after all, a timeout,
 * compare-and-set skips what was already applied).
 */
export async function writeCardStates(
  batch: ScoringBatch,
  redoOnFailure: readonly ScoringItem[],
): Promise<boolean> {
  const { ctx } = batch;
  // The changed cards' encoded states share one buffer (a typed array per card left its backing
  // store for the garbage collector); each write holds a view of its part.
  let size = 0;
  for (const slot of batch.slots.values()) if (slot.changed) size += encodedCardStateSize(slot.state);
  const encoded = new Uint8Array(size);
  const view = new DataView(encoded.buffer);
  const writes: CardStateWrite[] = [];
  let offset = 0;
  for (const [cardId, slot] of batch.slots) {
    if (!slot.changed) continue;
    const end = encodeCardStateInto(slot.state, encoded, view, offset);
    writes.push({
      cardId,
      bytes: encoded.subarray(offset, end),
      position: slot.position,
      history: slot.history,
    });
    offset = end;
  }
  if (writes.length === 0) return true;
  const written = await ctx.guards.stateWrite.run(
    () => ctx.store.writeBatch(writes),
    callTimeoutMs(batch, "stateWrite"),
  );
  if (!written.ok) {
    ctx.events?.dependencyFailure?.("state_write", written.failure, written.error);
    ctx.stateLane?.defer(redoOnFailure, { storeFailed: !isBudgetTimeout(written.error) });
    return false;
  }
  const stale = written.value.filter((o) => o === "stale").length;
  if (stale > 0) ctx.events?.stateOutcome?.("stale_write", stale);
  // A failed store node's cards (the others were written): only their transactions are redone.
  const lost = new Set<string>();
  written.value.forEach((o, k) => o === "unavailable" && lost.add(writes[k]!.cardId));
  if (lost.size === 0) return true;
  ctx.events?.dependencyFailure?.(
    "state_write",
    "error",
    new Error(`the store node of ${lost.size} of ${writes.length} cards failed`),
  );
  ctx.stateLane?.defer(
    redoOnFailure.filter(({ tx }) => lost.has(tx.cardId)),
    { storeFailed: true },
  );
  return false;
}
