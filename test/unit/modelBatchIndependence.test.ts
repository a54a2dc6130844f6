// A decision must not depend on what shared its batch: an auditor replaying history batches
// differently from the live scorer, and must get the same score to the last bit. These step the
// committed model (as `serve` loads it on CPU) over the same card sequences at several batch
// sizes and with different neighbours, and compare scores and the carried h/c bit for bit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import { loadModelRunner, type ModelRunner } from "../../src/model/loadModelRunner.js";
import { committedModelDir } from "../support/committedModel.js";

const CARDS = 300;
const STEPS = 4;
let model: ModelRunner;

beforeAll(async () => {
  model = await loadModelRunner({
    dir: committedModelDir(),
    trustedKeysDir: "models/trusted-keys",
    provider: "cpu",
    expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
  });
});
afterAll(() => model.close());

/** Deterministic features with the spread real ones have (amounts, counts, one-hots, sin/cos). */
function cardFeatures(seed: number, steps: number, cards: number, F: number): Float32Array[] {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0), s / 2 ** 32);
  return Array.from({ length: steps }, () =>
    Float32Array.from({ length: cards * F }, (_, i) => (i % 7 === 0 ? next() * 8 : next() * 2 - 1)),
  );
}

interface Stepped {
  scores: Float32Array[];
  h: Float32Array;
  c: Float32Array;
}

/** Steps every card through every step, `batch` rows at a time, in the given row order. */
async function stepAll(xs: Float32Array[], batch: number, order: readonly number[]): Promise<Stepped> {
  const { featureCount: F, hiddenSize: H } = model;
  const h = new Float32Array(CARDS * H);
  const c = new Float32Array(CARDS * H);
  const scores: Float32Array[] = [];
  for (const x of xs) {
    const score = new Float32Array(CARDS);
    for (let start = 0; start < order.length; start += batch) {
      const rows = order.slice(start, start + batch);
      const bx = new Float32Array(rows.length * F);
      const bh = new Float32Array(rows.length * H);
      const bc = new Float32Array(rows.length * H);
      rows.forEach((card, r) => {
        bx.set(x.subarray(card * F, (card + 1) * F), r * F);
        bh.set(h.subarray(card * H, (card + 1) * H), r * H);
        bc.set(c.subarray(card * H, (card + 1) * H), r * H);
      });
      const out = await model.step(bx, bh, bc, rows.length);
      rows.forEach((card, r) => {
        score[card] = out.score[r]!;
        h.set(out.h.subarray(r * H, (r + 1) * H), card * H);
        c.set(out.c.subarray(r * H, (r + 1) * H), card * H);
      });
    }
    scores.push(score);
  }
  return { scores, h, c };
}

const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));
const identity = Array.from({ length: CARDS }, (_, i) => i);

describe("model scores do not depend on the batch", () => {
  it("scores and carried h/c are bit-identical at batch sizes 1, 7, 16, 64 and 256", async () => {
    const xs = cardFeatures(42, STEPS, CARDS, model.featureCount);
    const one = await stepAll(xs, 1, identity);
    for (const batch of [7, 16, 64, 256]) {
      const other = await stepAll(xs, batch, identity);
      other.scores.forEach((s, step) =>
        expect(bits(s), `batch ${batch}, step ${step}`).toEqual(bits(one.scores[step]!)),
      );
      expect(bits(other.h), `h at batch ${batch}`).toEqual(bits(one.h));
      expect(bits(other.c), `c at batch ${batch}`).toEqual(bits(one.c));
    }
  });

  it("a card's score is the same whatever other cards share its batch", async () => {
    const xs = cardFeatures(7, STEPS, CARDS, model.featureCount);
    const inOrder = await stepAll(xs, 64, identity);
    // Reversed and interleaved: every card gets different neighbours and a different row.
    const shuffled = identity.map((i) => (i * 97) % CARDS).reverse();
    const mixed = await stepAll(xs, 64, shuffled);
    mixed.scores.forEach((s, step) => expect(bits(s), `step ${step}`).toEqual(bits(inOrder.scores[step]!)));
    expect(bits(mixed.h)).toEqual(bits(inOrder.h));
    // Not vacuous: the scores vary across cards, so equal arrays mean equal per-card results.
    expect(new Set(inOrder.scores.at(-1)).size).toBeGreaterThan(CARDS / 2);
  });
});
