// The LSTM in tfjs core ops, written out so its arithmetic is exactly ONNX's LSTM (gate order
// i, o, f, c; sigmoid gates; tanh cell) followed by a sigmoid score head. Training and the
// equivalence tests run this; export copies its variables into ONNX initializers.
import * as tf from "@tensorflow/tfjs";
import type { LstmWeights } from "../export/lstmWeights.js";
import type { Random } from "../../src/tools/simulate/random.js";

export interface TfLstm {
  readonly featureCount: number;
  readonly hiddenSize: number;
  readonly W: tf.Variable; // [F, 4H]
  readonly R: tf.Variable; // [H, 4H]
  readonly b: tf.Variable; // [4H]
  readonly headW: tf.Variable; // [H, 1]
  readonly headB: tf.Variable; // [1]
}

const glorot = (rng: Random, rows: number, cols: number): Float32Array => {
  const limit = Math.sqrt(6 / (rows + cols));
  return Float32Array.from({ length: rows * cols }, () => rng.uniform(-limit, limit));
};

export function createTfLstm(rng: Random, featureCount: number, hiddenSize: number): TfLstm {
  const F = featureCount;
  const H = hiddenSize;
  const bias = new Float32Array(4 * H);
  bias.fill(1, 2 * H, 3 * H); // forget gate starts open: long memories are learnable from step one
  return {
    featureCount,
    hiddenSize,
    W: tf.variable(tf.tensor2d(glorot(rng, F, 4 * H), [F, 4 * H]), true, "W"),
    R: tf.variable(tf.tensor2d(glorot(rng, H, 4 * H), [H, 4 * H]), true, "R"),
    b: tf.variable(tf.tensor1d(bias), true, "b"),
    headW: tf.variable(tf.tensor2d(glorot(rng, H, 1), [H, 1]), true, "headW"),
    headB: tf.variable(tf.tensor1d([-3]), true, "headB"), // start near the base rate
  };
}

export const trainableVariables = (m: TfLstm): tf.Variable[] => [m.W, m.R, m.b, m.headW, m.headB];

export interface SequenceOutput {
  /** [B, T] pre-sigmoid scores. */
  readonly logits: tf.Tensor2D;
  readonly h: tf.Tensor2D;
  readonly c: tf.Tensor2D;
}

/** Runs the LSTM over x [B, T, F] from (h0, c0). Returns per-step logits and the final state. */
export function runSequence(m: TfLstm, x: tf.Tensor3D, h0: tf.Tensor2D, c0: tf.Tensor2D): SequenceOutput {
  const [B, T, F] = x.shape;
  const H = m.hiddenSize;
  const xw = tf.reshape(tf.add(tf.matMul(tf.reshape(x, [B * T, F]), m.W), m.b), [B, T, 4 * H]);
  const steps = tf.unstack(xw, 1);
  let h = h0;
  let c = c0;
  const hs: tf.Tensor2D[] = [];
  for (let t = 0; t < T; t++) {
    const g = tf.add(steps[t]!, tf.matMul(h, m.R));
    const [gi, go, gf, gc] = tf.split(g, 4, 1) as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, tf.Tensor2D];
    c = tf.add(tf.mul(tf.sigmoid(gf), c), tf.mul(tf.sigmoid(gi), tf.tanh(gc)));
    h = tf.mul(tf.sigmoid(go), tf.tanh(c));
    hs.push(h);
  }
  const all = tf.reshape(tf.stack(hs, 1), [B * T, H]);
  const logits = tf.reshape(tf.add(tf.matMul(all, m.headW), m.headB), [B, T]) as tf.Tensor2D;
  return { logits, h, c };
}

export function toLstmWeights(m: TfLstm): LstmWeights {
  return {
    featureCount: m.featureCount,
    hiddenSize: m.hiddenSize,
    W: Float32Array.from(m.W.dataSync()),
    R: Float32Array.from(m.R.dataSync()),
    b: Float32Array.from(m.b.dataSync()),
    headW: Float32Array.from(m.headW.dataSync()),
    headB: m.headB.dataSync()[0]!,
  };
}

export function assignLstmWeights(m: TfLstm, w: LstmWeights): void {
  const H = m.hiddenSize;
  m.W.assign(tf.tensor2d(w.W, [m.featureCount, 4 * H]));
  m.R.assign(tf.tensor2d(w.R, [H, 4 * H]));
  m.b.assign(tf.tensor1d(w.b));
  m.headW.assign(tf.tensor2d(w.headW, [H, 1]));
  m.headB.assign(tf.tensor1d([w.headB]));
}

/** Selects the wasm backend (6× faster than the pure-JS one here); once per process. */
export async function useWasmBackend(): Promise<void> {
  await import("@tensorflow/tfjs-backend-wasm");
  if (tf.getBackend() !== "wasm") {
    await tf.setBackend("wasm");
    await tf.ready();
  }
}
