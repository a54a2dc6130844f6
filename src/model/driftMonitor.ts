// How far production inputs and scores have moved from training: each scored batch's feature
// vectors and scores are counted into the bins the artifact's manifest carries (typed arrays,
// a binary search per value, no allocation), in time slots of a sliding window; PSI per feature
// and for the score is computed from the window on demand (a timer, not per transaction).
import type { Manifest, TrainingDistributions } from "./manifest.js";
import { populationStabilityIndex } from "./populationStability.js";

export interface DriftWindowOptions {
  /** Sliding window length; the oldest slot leaves it as a new one starts. */
  readonly windowMs?: number;
  readonly slots?: number;
  /** Below this many transactions in the window, PSI is reported as null: too few to mean anything. */
  readonly minTransactions?: number;
  readonly now?: () => number;
}

export interface DriftSnapshot {
  readonly modelVersion: string;
  readonly windowMs: number;
  readonly transactions: number;
  readonly computedAt: string;
  /** PSI of the score distribution; null without enough transactions. */
  readonly score: number | null;
  /** PSI per feature, by name. */
  readonly features: Readonly<Record<string, number | null>>;
}

export class DriftMonitor {
  readonly #featureNames: readonly string[];
  readonly #expected: readonly (readonly number[])[];
  /** Every histogram's edges end to end; histogram i's are edgeStart[i] … edgeStart[i+1]-1. */
  readonly #edges: Float64Array;
  readonly #edgeStart: Int32Array;
  /** Start of each feature's bins (then the score's) within one slot's counts. */
  readonly #offsets: Int32Array;
  readonly #binsPerSlot: number;
  readonly #counts: Uint32Array;
  readonly #slotTotals: Float64Array;
  readonly #slotEpochs: Float64Array;
  readonly #slotMs: number;
  readonly #slots: number;
  readonly #minTransactions: number;
  readonly #now: () => number;

  constructor(
    readonly modelVersion: string,
    featureNames: readonly string[],
    distributions: TrainingDistributions,
    { windowMs = 15 * 60_000, slots = 15, minTransactions = 500, now = Date.now }: DriftWindowOptions = {},
  ) {
    if (distributions.features.length !== featureNames.length)
      throw new RangeError(
        `${distributions.features.length} feature histograms for ${featureNames.length} features`,
      );
    const histograms = [...distributions.features, distributions.score];
    this.#featureNames = featureNames;
    this.#expected = histograms.map((h) => h.proportions);
    this.#edges = Float64Array.from(histograms.flatMap((h) => h.edges));
    this.#edgeStart = new Int32Array(histograms.length + 1);
    histograms.forEach((h, i) => (this.#edgeStart[i + 1] = this.#edgeStart[i]! + h.edges.length));
    this.#offsets = new Int32Array(histograms.length);
    let bins = 0;
    histograms.forEach((h, i) => {
      this.#offsets[i] = bins;
      bins += h.proportions.length;
    });
    this.#binsPerSlot = bins;
    this.#slots = slots;
    this.#slotMs = windowMs / slots;
    this.#counts = new Uint32Array(slots * bins);
    this.#slotTotals = new Float64Array(slots);
    this.#slotEpochs = new Float64Array(slots).fill(-1);
    this.#minTransactions = minTransactions;
    this.#now = now;
  }

  get windowMs(): number {
    return this.#slotMs * this.#slots;
  }

  /** Counts a scored batch: x is [batch, F] row-major (the model's input), score [batch]. */
  observe(x: Float32Array, score: Float32Array, batch: number): void {
    const epoch = Math.floor(this.#now() / this.#slotMs);
    const slot = epoch % this.#slots;
    const base = slot * this.#binsPerSlot;
    if (this.#slotEpochs[slot] !== epoch) {
      this.#counts.fill(0, base, base + this.#binsPerSlot);
      this.#slotTotals[slot] = 0;
      this.#slotEpochs[slot] = epoch;
    }
    const F = this.#featureNames.length;
    const counts = this.#counts;
    const edges = this.#edges;
    const edgeStart = this.#edgeStart;
    const offsets = this.#offsets;
    // A linear scan over ≤ 12 edges beats a binary search here: no unpredictable branches per step.
    for (let r = 0; r < batch; r++) {
      const row = r * F;
      for (let f = 0; f <= F; f++) {
        const v = f < F ? x[row + f]! : score[r]!;
        const first = edgeStart[f]!;
        const end = edgeStart[f + 1]!;
        let e = first;
        while (e < end && !(v <= edges[e]!)) e++; // NaN runs to the last bin, as binOf
        counts[base + offsets[f]! + (e - first)]!++;
      }
    }
    this.#slotTotals[slot]! += batch;
  }

  snapshot(): DriftSnapshot {
    const epoch = Math.floor(this.#now() / this.#slotMs);
    const window = new Float64Array(this.#binsPerSlot);
    let total = 0;
    for (let s = 0; s < this.#slots; s++) {
      if (this.#slotEpochs[s]! <= epoch - this.#slots) continue; // left the window
      total += this.#slotTotals[s]!;
      const base = s * this.#binsPerSlot;
      for (let b = 0; b < this.#binsPerSlot; b++) window[b]! += this.#counts[base + b]!;
    }
    const psiOf = (i: number) =>
      total < this.#minTransactions || total === 0
        ? null
        : populationStabilityIndex(
            this.#expected[i]!,
            window.subarray(this.#offsets[i]!, this.#offsets[i]! + this.#expected[i]!.length),
            total,
          );
    const F = this.#featureNames.length;
    return {
      modelVersion: this.modelVersion,
      windowMs: this.windowMs,
      transactions: total,
      computedAt: new Date(this.#now()).toISOString(),
      score: psiOf(F),
      features: Object.fromEntries(this.#featureNames.map((name, f) => [name, psiOf(f)])),
    };
  }
}

/** The drift monitor for a model whose manifest carries training distributions, else undefined. */
export function driftMonitorFor(manifest: Manifest, options?: DriftWindowOptions): DriftMonitor | undefined {
  return manifest.distributions === undefined
    ? undefined
    : new DriftMonitor(manifest.modelVersion, manifest.featureNames, manifest.distributions, options);
}
