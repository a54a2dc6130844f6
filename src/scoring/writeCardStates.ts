// The state write of a batch: every changed card in one store call, compare-and-set on position.
import { encodeCardState } from "../features/cardStateCodec.js";
import type { CardStateWrite } from "./ports.js";
import { callTimeoutMs, type ScoringBatch } from "./scoringBatch.js";
import type { ScoringItem } from "./scoringContext.js";

/**
 * Writes the batch's changed cards. False when the write failed: the decisions stand, and
 * `redoOnFailure` goes to the deferred lane (where the write did land after all, a timeout,
 * compare-and-set skips what was already applied).
 */
export async function writeCardStates(
  batch: ScoringBatch,
  redoOnFailure: readonly ScoringItem[],
): Promise<boolean> {
  const { ctx } = batch;
  const writes: CardStateWrite[] = [];
  for (const [cardId, slot] of batch.slots) {
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
    callTimeoutMs(batch, "stateWrite"),
  );
  if (!written.ok) {
    ctx.events?.dependencyFailure?.("state_write", written.failure, written.error);
    ctx.stateLane?.defer(redoOnFailure);
    return false;
  }
  const stale = written.value.filter((o) => o === "stale").length;
  if (stale > 0) ctx.events?.stateOutcome?.("stale_write", stale);
  return true;
}
