// The training distributions a model artifact carries for drift monitoring: for each scaled
// feature and for the score, bin edges at the deciles of the training rows (repeated edges
// merged, so a 0/1 feature gets the two bins it has) and each bin's share. The score also gets
// edges at the decision thresholds, so a shift across REVIEW or DECLINE shows even when it is
// small against the deciles.
import type { Histogram, TrainingDistributions } from "../../src/model/manifest.js";
import { binOf } from "../../src/model/populationStability.js";

const DECILES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
/** The default review and decline thresholds (src/ops/configSchema.ts). */
const SCORE_THRESHOLDS = [0.5, 0.85];

export function decileHistogram(values: Float32Array, extraEdges: readonly number[] = []): Histogram {
  const sorted = Float32Array.from(values).sort();
  const n = sorted.length;
  const quantiles = DECILES.map((q) => sorted[Math.min(n - 1, Math.floor(q * n))]!);
  const edges = [...new Set([...quantiles, ...extraEdges.map(Math.fround)])].sort((a, b) => a - b);
  const counts = new Float64Array(edges.length + 1);
  for (const v of values) counts[binOf(edges, v)]!++;
  return { edges, proportions: Array.from(counts, (c) => c / n) };
}

/**
 * Histograms of rows `rows` of a [rows, F] feature matrix and their scores. `source` says which
 * rows and which model, in words a reader of the manifest can check.
 */
export function trainingDistributions(
  features: Float32Array,
  featureCount: number,
  scores: Float32Array,
  rows: readonly number[],
  source: string,
): TrainingDistributions {
  const column = new Float32Array(rows.length);
  const histograms: Histogram[] = [];
  for (let f = 0; f < featureCount; f++) {
    rows.forEach((r, i) => (column[i] = features[r * featureCount + f]!));
    histograms.push(decileHistogram(column));
  }
  return {
    source,
    transactions: rows.length,
    features: histograms,
    score: decileHistogram(
      Float32Array.from(rows, (r) => scores[r]!),
      SCORE_THRESHOLDS,
    ),
  };
}
