// Replays a labelled history in event-time order through the serving feature code (hashes,
// card state, device fan-out, feature vector) and regroups the vectors per card: the
// sequences the LSTM trains on. Rule scores come from the same pass, so the rules baseline
// sees exactly the facts it would see in production.
import { advanceCardState, emptyCardState, type CardState } from "../../src/features/cardState.js";
import { DeviceFanOutCounter } from "../../src/features/deviceFanOut.js";
import { computeFeatures, computeRawFeatures, FEATURE_COUNT } from "../../src/features/featureVector.js";
import { computeFeatureHashes } from "../../src/ingest/featureHashes.js";
import { evaluateRules } from "../../src/rules/evaluateRules.js";
import type { RuleSet } from "../../src/rules/ruleSet.js";
import type { LabelledDataset } from "../dataset/labelledDataset.js";

export interface CardSequences {
  readonly featureCount: number;
  readonly cardIds: string[];
  /** Card k's steps are rows start[k] … start[k+1]-1 (start has cards+1 entries). */
  readonly start: Int32Array;
  /** [rows, F] row-major, rows grouped by card, each card in event-time order. */
  readonly features: Float32Array;
  readonly labels: Uint8Array;
  readonly split: Uint8Array;
  /** Rules-only fallback score of each row (evaluated for validation and test rows only; -1 elsewhere). */
  readonly ruleScores: Float32Array;
}

/** `width`: how many leading features to keep (an earlier schema's count, for an ablation). */
export function buildCardSequences(
  data: LabelledDataset,
  ruleSet: RuleSet,
  onProgress?: (done: number, total: number) => void,
  width: number = FEATURE_COUNT,
): CardSequences {
  const n = data.transactions.length;
  const F = width;
  const states = new Map<string, CardState>();
  const cardIndex = new Map<string, number>();
  const cardOf = new Int32Array(n);
  const cardIds: string[] = [];
  const fanOut = new DeviceFanOutCounter();
  const timeOrdered = new Float32Array(n * F);
  const ruleTimeOrdered = new Float32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const tx = data.transactions[i]!;
    const cardId = tx.cardId ?? "";
    let k = cardIndex.get(cardId);
    if (k === undefined) {
      k = cardIds.length;
      cardIds.push(cardId);
      cardIndex.set(cardId, k);
    }
    cardOf[i] = k;
    const hashes = computeFeatureHashes(tx);
    const state = states.get(cardId) ?? emptyCardState(0);
    const shared = { deviceCardCount24h: fanOut.observe(hashes.device, cardId, Number(tx.eventTimeMs)) };
    computeFeatures(tx, hashes, state, shared, timeOrdered, i * F, undefined, F);
    if (data.split[i]! > 0) {
      ruleTimeOrdered[i] = evaluateRules(ruleSet, {
        tx,
        features: computeRawFeatures(tx, hashes, state, shared),
      }).score;
    }
    states.set(cardId, advanceCardState(state, tx, hashes));
    if (onProgress && (i % 5000 === 0 || i === n - 1)) onProgress(i + 1, n);
  }
  // Counting sort by card, stable in time.
  const start = new Int32Array(cardIds.length + 1);
  for (let i = 0; i < n; i++) start[cardOf[i]! + 1]!++;
  for (let k = 0; k < cardIds.length; k++) start[k + 1]! += start[k]!;
  const cursor = start.slice(0, cardIds.length);
  const features = new Float32Array(n * F);
  const labels = new Uint8Array(n);
  const split = new Uint8Array(n);
  const ruleScores = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const row = cursor[cardOf[i]!]!++;
    features.set(timeOrdered.subarray(i * F, i * F + F), row * F);
    labels[row] = data.labels[i]!;
    split[row] = data.split[i]!;
    ruleScores[row] = ruleTimeOrdered[i]!;
  }
  return { featureCount: F, cardIds, start, features, labels, split, ruleScores };
}
