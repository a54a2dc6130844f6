// Score and rule verdict → action. Hard rule effects override the model in both directions;
// in fallback the rules' own score stands in for the model's.
import { Action } from "../codec/messages.js";
import type { RuleVerdict } from "./ports.js";

export interface PolicyThresholds {
  /** score ≥ review → REVIEW */
  readonly review: number;
  /** score ≥ decline → DECLINE */
  readonly decline: number;
}

const fired = (verdict: RuleVerdict, effect: string) => verdict.fired.some((r) => r.effect === effect);

export function decideAction(score: number, verdict: RuleVerdict, thresholds: PolicyThresholds): number {
  if (fired(verdict, "decline")) return Action.ACTION_DECLINE;
  if (fired(verdict, "allow")) return Action.ACTION_APPROVE;
  if (score >= thresholds.decline) return Action.ACTION_DECLINE;
  if (score >= thresholds.review || fired(verdict, "review")) return Action.ACTION_REVIEW;
  return Action.ACTION_APPROVE;
}

/** Reason codes: the rules that fired first (they explain overrides), then the features. */
export function reasonCodes(verdict: RuleVerdict, topFeatures: readonly string[]): string[] {
  return [...verdict.fired.map((r) => `rule:${r.id}`), ...topFeatures.map((f) => `feature:${f}`)];
}
