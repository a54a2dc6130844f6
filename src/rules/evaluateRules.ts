// One evaluator for both uses of the rules: hard overrides next to the model, and the whole
// decision when the model or card state is unavailable. The score combines the firing rules
// as a noisy-OR (independent pieces of evidence), capped by any firing `allow` rule.
import type { RuleEffect, RuleFacts, RuleSet } from "./ruleSet.js";

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

export function evaluateRules(ruleSet: RuleSet, facts: RuleFacts): RuleOutcome {
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
