// The composition root of `fraud-scorer replay`: replay input ─► fixed-size batches ─►
// scoreBatch (the production scoring path) with an isolated in-memory card-state store and a
// clock derived from the transactions ─► decisions, in input order.
// Determinism: the input order is fixed, batches are cut at fixed sizes, the clock is the
// data's, and the guards never time out or open, so two runs decide identically.
import type { DecisionInit } from "../codec/messages.js";
import { computeFeatureHashes } from "../ingest/featureHashes.js";
import { MemoryCardStateStore } from "../features/memoryCardStateStore.js";
import { GuardedCall } from "../scoring/guardedCall.js";
import type { PolicyThresholds } from "../scoring/policy.js";
import type { CardStateStore, ModelStepper, RuleEvaluator } from "../scoring/ports.js";
import { scoreBatch, type ScoringGuards, type ScoringItem } from "../scoring/scoreBatch.js";
import { ReplayClock } from "./replayClock.js";
import type { ReplayRecord } from "./replayRecord.js";

export interface ReplaySettings {
  readonly batchSize: number;
  readonly thresholds: PolicyThresholds;
  readonly budgetMs: number;
  readonly minBudgetForModelMs: number;
  readonly explainTopFeatures: number;
}

export interface ReplayParts {
  /** Undefined replays the rules alone (every decision a MODEL_UNAVAILABLE fallback). */
  readonly model: ModelStepper | undefined;
  readonly rules: RuleEvaluator;
  /** Isolated from live state; a fresh in-memory store when absent. */
  readonly store?: CardStateStore;
}

export interface ReplayedDecision {
  readonly decision: DecisionInit;
  readonly record: ReplayRecord;
}

export interface ReplayHooks {
  /** After each batch, in input order. */
  readonly onBatch?: (
    decided: readonly ReplayedDecision[],
    done: number,
    total: number,
  ) => void | Promise<void>;
  /** Wall-clock time a batch took to score, in microseconds (offline demo, benchmarks). */
  readonly onBatchTiming?: (size: number, microseconds: number) => void;
  readonly onDependencyFailure?: (dependency: string, failure: string, error?: Error) => void;
}

/** Long enough never to fire on a sane machine: a replay never trades accuracy for time. */
const REPLAY_CALL_TIMEOUT_MS = 10 * 60_000;

const replayGuards = (): ScoringGuards => {
  const guard = (name: string) =>
    new GuardedCall({
      name,
      timeoutMs: REPLAY_CALL_TIMEOUT_MS,
      errorThresholdPercentage: 100,
      volumeThreshold: Number.MAX_SAFE_INTEGER,
    });
  return { stateRead: guard("state_read"), model: guard("model"), stateWrite: guard("state_write") };
};

const toScoringItem = (record: ReplayRecord): ScoringItem => ({
  tx: record.tx,
  payload: record.payload,
  hashes: computeFeatureHashes(record.tx),
  position: record.position,
  budgetStartMs: record.budgetStartMs,
  decodeUs: 0,
});

export async function replayTransactions(
  records: readonly ReplayRecord[],
  settings: ReplaySettings,
  parts: ReplayParts,
  hooks: ReplayHooks = {},
): Promise<ReplayedDecision[]> {
  if (!Number.isSafeInteger(settings.batchSize) || settings.batchSize < 1)
    throw new RangeError(`batchSize must be a positive integer, got ${settings.batchSize}`);
  const clock = new ReplayClock();
  const guards = replayGuards();
  const context = {
    store: parts.store ?? new MemoryCardStateStore(),
    model: parts.model,
    rules: parts.rules,
    thresholds: settings.thresholds,
    budgetMs: settings.budgetMs,
    minBudgetForModelMs: settings.minBudgetForModelMs,
    explainTopFeatures: settings.explainTopFeatures,
    guards,
    clock,
    events: {
      dependencyFailure: (dependency: string, failure: string, error?: Error) =>
        hooks.onDependencyFailure?.(dependency, failure, error),
    },
  };
  const out: ReplayedDecision[] = [];
  try {
    for (let i = 0; i < records.length; i += settings.batchSize) {
      const batch = records.slice(i, i + settings.batchSize);
      clock.startBatch(batch.map((r) => r.budgetStartMs));
      const t0 = performance.now();
      const decisions = await scoreBatch(batch.map(toScoringItem), context);
      hooks.onBatchTiming?.(batch.length, (performance.now() - t0) * 1000);
      const decided = decisions.map((decision, k) => ({ decision, record: batch[k]! }));
      out.push(...decided);
      await hooks.onBatch?.(decided, out.length, records.length);
    }
  } finally {
    for (const g of Object.values(guards)) g.shutdown();
  }
  return out;
}
