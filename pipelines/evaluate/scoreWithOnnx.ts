// Scores every row the way serving does: the exported single-step graph stepped through each
// card's history with h/c carried, many cards per call (one call per history position).
import type { OnnxStepSession } from "../../src/model/onnxStepSession.js";
import type { CardSequences } from "../train/cardSequences.js";

export async function scoreWithOnnx(
  session: OnnxStepSession,
  seqs: CardSequences,
  onProgress?: (done: number, total: number) => void,
): Promise<Float32Array> {
  const F = seqs.featureCount;
  const H = session.hiddenSize;
  const cards = seqs.cardIds.length;
  const length = (k: number) => seqs.start[k + 1]! - seqs.start[k]!;
  // Longest histories first: the cards still active at position p are then a prefix.
  const order = Array.from({ length: cards }, (_, k) => k).sort((a, b) => length(b) - length(a));
  const maxLen = cards ? length(order[0]!) : 0;
  const scores = new Float32Array(seqs.labels.length);
  let h = new Float32Array(cards * H);
  let c = new Float32Array(cards * H);
  const x = new Float32Array(cards * F);
  let active = cards;
  for (let p = 0; p < maxLen; p++) {
    while (active > 0 && length(order[active - 1]!) <= p) active--;
    for (let j = 0; j < active; j++) {
      const row = seqs.start[order[j]!]! + p;
      x.set(seqs.features.subarray(row * F, row * F + F), j * F);
    }
    const out = await session.step(x, h, c, active);
    for (let j = 0; j < active; j++) scores[seqs.start[order[j]!]! + p] = out.score[j]!;
    // Rows of finished cards sit past `active`; their state is never read again.
    h = Float32Array.from(out.h);
    c = Float32Array.from(out.c);
    if (h.length < cards * H) {
      const grownH = new Float32Array(cards * H);
      const grownC = new Float32Array(cards * H);
      grownH.set(h);
      grownC.set(c);
      h = grownH;
      c = grownC;
    }
    onProgress?.(p + 1, maxLen);
  }
  return scores;
}
