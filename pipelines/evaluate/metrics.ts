// Ranking metrics for a fraud score. Ties are handled as groups (a rules score has few
// distinct values), so no metric rewards an arbitrary order among equal scores.

interface RocPoint {
  readonly fpr: number;
  readonly tpr: number;
  readonly precision: number;
}

/** Distinct-threshold ROC/PR points, from the highest score down. */
function curve(
  scores: ArrayLike<number>,
  labels: ArrayLike<number>,
): { points: RocPoint[]; positives: number; negatives: number } {
  const n = scores.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
  let positives = 0;
  for (let i = 0; i < n; i++) positives += labels[i] ? 1 : 0;
  const negatives = n - positives;
  const points: RocPoint[] = [{ fpr: 0, tpr: 0, precision: 1 }];
  let tp = 0;
  let fp = 0;
  for (let i = 0; i < n;) {
    const s = scores[order[i]!]!;
    while (i < n && scores[order[i]!] === s) {
      if (labels[order[i]!]) tp++;
      else fp++;
      i++;
    }
    points.push({
      fpr: negatives ? fp / negatives : 0,
      tpr: positives ? tp / positives : 0,
      precision: tp / (tp + fp),
    });
  }
  return { points, positives, negatives };
}

export function rocAuc(scores: ArrayLike<number>, labels: ArrayLike<number>): number {
  const { points } = curve(scores, labels);
  let area = 0;
  for (let i = 1; i < points.length; i++) {
    area += ((points[i]!.fpr - points[i - 1]!.fpr) * (points[i]!.tpr + points[i - 1]!.tpr)) / 2;
  }
  return area;
}

/** Average precision: Σ (recall_k − recall_{k−1}) · precision_k over distinct thresholds. */
export function prAuc(scores: ArrayLike<number>, labels: ArrayLike<number>): number {
  const { points } = curve(scores, labels);
  let ap = 0;
  for (let i = 1; i < points.length; i++) ap += (points[i]!.tpr - points[i - 1]!.tpr) * points[i]!.precision;
  return ap;
}

/** Highest recall at a threshold whose false-positive rate does not exceed `maxFpr`. */
export function recallAtFpr(scores: ArrayLike<number>, labels: ArrayLike<number>, maxFpr: number): number {
  let best = 0;
  for (const p of curve(scores, labels).points) if (p.fpr <= maxFpr) best = Math.max(best, p.tpr);
  return best;
}

export interface ScoreMetrics {
  readonly rocAuc: number;
  readonly prAuc: number;
  readonly recallAt0_5PctFpr: number;
  readonly recallAt1PctFpr: number;
  readonly transactions: number;
  readonly positives: number;
}

export function scoreMetrics(scores: ArrayLike<number>, labels: ArrayLike<number>): ScoreMetrics {
  let positives = 0;
  for (let i = 0; i < labels.length; i++) positives += labels[i] ? 1 : 0;
  return {
    rocAuc: rocAuc(scores, labels),
    prAuc: prAuc(scores, labels),
    recallAt0_5PctFpr: recallAtFpr(scores, labels, 0.005),
    recallAt1PctFpr: recallAtFpr(scores, labels, 0.01),
    transactions: labels.length,
    positives,
  };
}
