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
  // Built in one array from codes made once per name: every decision carries its reason codes,
  // and spreading mapped arrays of fresh strings was a measurable share of a drain's allocation.
  const codes: string[] = [];
  for (let i = 0; i < verdict.fired.length; i++)
    codes.push(codeOf(RULE_CODES, "rule:", verdict.fired[i]!.id));
  for (let i = 0; i < topFeatures.length; i++) codes.push(codeOf(FEATURE_CODES, "feature:", topFeatures[i]!));
  return codes;
}

// Rule ids and feature names are few (a rule set's, the feature schema's), so these stay small.
const RULE_CODES = new Map<string, string>();
const FEATURE_CODES = new Map<string, string>();

function codeOf(codes: Map<string, string>, prefix: string, name: string): string {
  let code = codes.get(name);
  if (code === undefined) codes.set(name, (code = prefix + name));
  return code;
}
