// The scoring core without Kafka, for the in-process benchmarks: the committed model verified
// and warmed as `serve` does it, the default rule set, breakers with the product's timeouts, and
// ScoringItems built the way the consumer builds them.
import { join } from "node:path";
import { encodeTransactionPayload, Transaction } from "../../src/codec/messages.js";
import { FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import { MemoryCardStateStore } from "../../src/features/memoryCardStateStore.js";
import { computeFeatureHashes } from "../../src/ingest/featureHashes.js";
import { loadModelRunner, type ModelRunner } from "../../src/model/loadModelRunner.js";
import { ruleEvaluator } from "../../src/rules/ruleEvaluator.js";
import { loadRuleSet } from "../../src/rules/ruleSet.js";
import { GuardedCall } from "../../src/scoring/guardedCall.js";
import {
  streamPosition,
  systemClock,
  type CardStateStore,
  type RuleEvaluator,
} from "../../src/scoring/ports.js";
import type { ScoringContext, ScoringItem } from "../../src/scoring/scoreBatch.js";
import { StateWritesInFlight } from "../../src/scoring/stateWritesInFlight.js";
import type { TrafficSource } from "../../src/tools/traffic/trafficSource.js";
import { MODEL_DIR } from "./benchScorer.js";

export interface ScoringParts {
  readonly model: ModelRunner;
  readonly rules: RuleEvaluator;
}

export async function loadScoringParts(root: string): Promise<ScoringParts> {
  const model = await loadModelRunner({
    dir: join(root, MODEL_DIR),
    trustedKeysDir: join(root, "models/trusted-keys"),
    provider: "cpu",
    expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
  });
  await model.warmUp();
  const rules = ruleEvaluator(await loadRuleSet(join(root, "rules/default.yaml")));
  return { model, rules };
}

const BUDGET_MS = 200;
/** The product's defaults (src/ops/configSchema.ts): 20 % of the budget per call. */
const CALL_TIMEOUT_MS = 40;

export function scoringContext(
  parts: ScoringParts,
  store: CardStateStore = new MemoryCardStateStore(),
): ScoringContext & { shutdown(): void } {
  const guard = (name: string) => new GuardedCall({ name, timeoutMs: CALL_TIMEOUT_MS });
  const guards = { stateRead: guard("state_read"), model: guard("model"), stateWrite: guard("state_write") };
  return {
    store,
    model: parts.model,
    rules: parts.rules,
    thresholds: { review: 0.5, decline: 0.85 },
    budgetMs: BUDGET_MS,
    minBudgetForModelMs: 40,
    explainTopFeatures: 3,
    guards,
    clock: systemClock,
    // As the stream processor runs: each batch's state write settles behind its decisions.
    writesInFlight: new StateWritesInFlight(),
    shutdown: () => Object.values(guards).forEach((g) => g.shutdown()),
  };
}

/** n items as the consumer would hand them over; budgetStartMs is set when each arrives. */
export function scoringItems(source: TrafficSource, n: number): ScoringItem[] {
  return Array.from({ length: n }, (_, i) => {
    const tx = Transaction.create(source.at(i).tx);
    return {
      tx,
      payload: encodeTransactionPayload(tx),
      hashes: computeFeatureHashes(tx),
      position: streamPosition(i, 0),
      budgetStartMs: 0,
      decodeUs: 0,
    };
  });
}
