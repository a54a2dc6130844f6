// The rule set as the scoring core's RuleEvaluator port: facts from the one feature
// implementation (raw values, state-derived ones absent without card state), then the rules.
import { computeFeatureFacts, featureFactsFromRaw } from "../features/featureVector.js";
import type { RuleEvaluator, RuleInput, RuleVerdict } from "./ruleEvaluatorPort.js";
import { evaluateRules } from "./evaluateRules.js";
import type { RuleSet } from "./ruleSet.js";

export function ruleEvaluator(ruleSet: RuleSet): RuleEvaluator {
  return {
    version: ruleSet.version,
    evaluate({ tx, hashes, state, deviceCardCount, rawFeatures }: RuleInput): RuleVerdict {
      const shared = deviceCardCount === null ? null : { deviceCardCount24h: deviceCardCount };
      const features =
        rawFeatures !== undefined && state !== null && shared !== null
          ? featureFactsFromRaw(rawFeatures)
          : computeFeatureFacts(tx, hashes, state, shared);
      return evaluateRules(ruleSet, { tx, hashes, features });
    },
  };
}
