// One evaluator for both uses of the rules: hard overrides next to the model, and the whole
// decision when the model or card state is unavailable. The score combines the firing rules
// as a noisy-OR (independent pieces of evidence), capped by any firing `allow` rule.
import type { fraud } from "../codec/generated/fraud.js";
import type { FeatureFacts } from "../features/featureVector.js";
import type { FeatureHashes } from "../ingest/featureHashes.js";
import type { RuleEffect, RuleFacts, RuleSet } from "./ruleSet.js";

export interface RuleInput {
  readonly tx: fraud.v1.ITransaction;
  readonly hashes: FeatureHashes;
  /** Raw named feature values (computeFeatureFacts); state-derived ones absent without card state. */
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

function factsOf({ tx, features }: RuleInput): RuleFacts {
  return {
    ...features,
    mcc: tx.mcc ?? 0,
    channel: CHANNEL_NAMES[tx.channel ?? 0] ?? "unspecified",
    merchant_country: tx.merchantCountry ?? "",
    card_country: tx.cardCountry ?? "",
    currency: tx.currency ?? "",
  };
}

export function evaluateRules(ruleSet: RuleSet, input: RuleInput): RuleOutcome {
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
