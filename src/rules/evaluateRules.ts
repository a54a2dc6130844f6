// One evaluator for both uses of the rules: hard overrides next to the model, and the whole
// decision when the model or card state is unavailable. The score combines the firing rules
// as a noisy-OR (independent pieces of evidence), capped by any firing `allow` rule.
import type { fraud } from "../codec/generated/fraud.js";
import type { FeatureFacts } from "../features/featureVector.js";
import type { FeatureHashes } from "../ingest/featureHashes.js";
import type { RuleEffect, RuleFacts, RuleSet } from "./ruleSet.js";

/** What one evaluation reads (the port's RuleInput, with its facts computed). */
export interface RuleEvaluationInput {
  readonly tx: fraud.v1.ITransaction;
  readonly hashes: FeatureHashes;
  /**
   * Raw named feature values (computeFeatureFacts); state-derived ones absent without card state.
   * Owned by the evaluation: the transaction's facts are added to it.
   */
  readonly features: FeatureFacts;
}

export interface FiredRule {
  readonly id: string;
  readonly effect: RuleEffect;
  readonly score: number;
}

export interface RuleOutcome {
  /** 0..1 */
  readonly score: number;
  readonly fired: FiredRule[];
}

const CHANNEL_NAMES = ["unspecified", "card_present", "contactless", "ecommerce", "atm", "moto", "recurring"];

/**
 * The features object with the transaction's own facts added in place: it is made fresh for each
 * evaluation (computeFeatureFacts), and copying it with a spread was the rules' largest cost.
 */
function factsOf({ tx, features }: RuleEvaluationInput): RuleFacts {
  const facts = features as Record<string, number | string | undefined>;
  facts.mcc = tx.mcc ?? 0;
  facts.channel = CHANNEL_NAMES[tx.channel ?? 0] ?? "unspecified";
  facts.merchant_country = tx.merchantCountry ?? "";
  facts.card_country = tx.cardCountry ?? "";
  facts.currency = tx.currency ?? "";
  return facts;
}

export function evaluateRules(ruleSet: RuleSet, input: RuleEvaluationInput): RuleOutcome {
  const facts = factsOf(input);
  const fired: FiredRule[] = [];
  let notFraud = 1;
  let cap = 1;
  for (const rule of ruleSet.rules) {
    if (rule.test(facts) !== true) continue;
    fired.push({ id: rule.id, effect: rule.effect, score: rule.score });
    if (rule.effect === "allow") cap = Math.min(cap, rule.score);
    else notFraud *= 1 - rule.score;
  }
  return { score: Math.min(1 - notFraud, cap), fired };
}
