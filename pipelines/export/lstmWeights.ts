// The trained LSTM's parameters in one layout, shared by training, export and tests.
// Gate blocks along the 4H axis are in ONNX order: input, output, forget, cell.
export interface LstmWeights {
  readonly featureCount: number;
  readonly hiddenSize: number;
  /** [F, 4H] row-major: x · W */
  readonly W: Float32Array;
  /** [H, 4H] row-major: h · R */
  readonly R: Float32Array;
  /** [4H] */
  readonly b: Float32Array;
  /** [H] score head: sigmoid(h' · headW + headB) */
  readonly headW: Float32Array;
  readonly headB: number;
}

const sigmoid = (v: number): number => 1 / (1 + Math.exp(-v));

/**
 * One LSTM step in plain float64 arithmetic: the reference the exported graphs and the tfjs
 * model are both tested against. Returns the score; writes h/c in place.
 */
export function referenceStep(
  w: LstmWeights,
  x: ArrayLike<number>,
  h: Float64Array,
  c: Float64Array,
): number {
  const { featureCount: F, hiddenSize: H } = w;
  const g = new Float64Array(4 * H);
  for (let j = 0; j < 4 * H; j++) {
    let s = w.b[j]!;
    for (let i = 0; i < F; i++) s += x[i]! * w.W[i * 4 * H + j]!;
    for (let i = 0; i < H; i++) s += h[i]! * w.R[i * 4 * H + j]!;
    g[j] = s;
  }
  let logit = w.headB;
  for (let k = 0; k < H; k++) {
    const ig = sigmoid(g[k]!);
    const og = sigmoid(g[H + k]!);
    const fg = sigmoid(g[2 * H + k]!);
    const cc = Math.tanh(g[3 * H + k]!);
    c[k] = fg * c[k]! + ig * cc;
    h[k] = og * Math.tanh(c[k]!);
  }
  for (let k = 0; k < H; k++) logit += h[k]! * w.headW[k]!;
  return sigmoid(logit);
}
