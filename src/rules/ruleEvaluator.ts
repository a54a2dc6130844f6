// The rule set as the scoring core's RuleEvaluator port: raw features from the one feature
// implementation (the model step's own when it ran; state-derived ones unknown without card
// state), then the rules.
import { scratchRawFeatures } from "../features/featureVector.js";
import type { RuleEvaluator, RuleInput, RuleVerdict } from "./ruleEvaluatorPort.js";
import { evaluateRules } from "./evaluateRules.js";
import type { RuleSet } from "./ruleSet.js";

export function ruleEvaluator(ruleSet: RuleSet): RuleEvaluator {
  return {
    version: ruleSet.version,
    evaluate({ tx, hashes, state, deviceCardCount, rawFeatures }: RuleInput): RuleVerdict {
      const features =
        rawFeatures !== undefined && state !== null && deviceCardCount !== null
          ? { values: rawFeatures, hasState: true, hasShared: true }
          : // evaluateRules keeps nothing of them past its return.
            scratchRawFeatures(
              tx,
              hashes,
              state,
              deviceCardCount === null ? null : { deviceCardCount24h: deviceCardCount },
            );
      return evaluateRules(ruleSet, { tx, features });
    },
  };
}
