// A transaction's outcome as the Decision written to Kafka: action by the policy, reason codes,
// versions, the fallback cause, and the batch's stage timings.
import type { DecisionInit } from "../codec/messages.js";
import { FallbackCause } from "../codec/messages.js";
import { decideAction, reasonCodes } from "./policy.js";
import type { ScoringBatch } from "./scoringBatch.js";

const us = (n: number) => Math.max(0, Math.round(n)) >>> 0;

export function decisionsOf(batch: ScoringBatch): DecisionInit[] {
  const { ctx, times, pickedAtMs } = batch;
  const decidedAtMs = ctx.clock.nowMs();
  return batch.items.map((item, i): DecisionInit => {
    const outcome = batch.outcomes[i]!;
    return {
      transactionId: item.tx.transactionId,
      cardId: item.tx.cardId,
      action: decideAction(outcome.score, outcome.verdict, ctx.thresholds),
      score: outcome.score,
      reasonCodes: reasonCodes(outcome.verdict, outcome.topFeatures),
      modelVersion: ctx.model?.modelVersion ?? "",
      featureSchemaVersion: ctx.model?.featureSchemaVersion ?? "",
      rulesVersion: ctx.rules.version,
      fallback: outcome.fallbackCause !== FallbackCause.FALLBACK_CAUSE_UNSPECIFIED,
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
  });
}
