// Trains the LSTM the way serving runs it: over each card's whole history with state carried.
// Histories are cut into consecutive chunks (truncated backpropagation through time); chunk k
// of a card starts from the state its chunk k−1 ended in, so a card's hundredth transaction is
// seen with a hundred transactions of memory, as in production. The epoch's best weights on
// validation PR-AUC win.
import * as tf from "@tensorflow/tfjs";
import type { LstmWeights } from "../export/lstmWeights.js";
import { prAuc } from "../evaluate/metrics.js";
import { Random } from "../../src/tools/simulate/random.js";
import type { CardSequences } from "./cardSequences.js";
import {
  assignLstmWeights,
  createTfLstm,
  runSequence,
  toLstmWeights,
  trainableVariables,
  type TfLstm,
} from "./tfLstm.js";

export interface TrainOptions {
  readonly seed: number;
  readonly hiddenSize?: number;
  readonly chunkLength?: number;
  readonly batchSize?: number;
  readonly epochs?: number;
  readonly learningRate?: number;
  /** Loss weight of a fraud step relative to a legitimate one (fraud is < 1 % of steps). */
  readonly positiveWeight?: number;
  readonly clipNorm?: number;
  /** Stop after this many epochs without a better validation PR-AUC. */
  readonly patience?: number;
  readonly onBatch?: (p: {
    epoch: number;
    epochs: number;
    batch: number;
    batches: number;
    loss: number;
  }) => void;
  readonly onEpoch?: (p: EpochRecord) => void;
}

export interface EpochRecord {
  readonly epoch: number;
  readonly loss: number;
  readonly validationPrAuc: number;
  readonly seconds: number;
}

export interface TrainResult {
  readonly weights: LstmWeights;
  readonly model: TfLstm;
  readonly history: EpochRecord[];
  readonly bestEpoch: number;
  readonly seconds: number;
}

const TRAIN = 0;
const VALIDATION = 1;

/** Rows of card k in `split`; splits are by time, so each is a contiguous run of the card's rows. */
function splitRange(seqs: CardSequences, k: number, split: number): [number, number] {
  let lo = seqs.start[k]!;
  const end = seqs.start[k + 1]!;
  while (lo < end && seqs.split[lo]! < split) lo++;
  let hi = lo;
  while (hi < end && seqs.split[hi]! === split) hi++;
  return [lo, hi];
}

interface Batch {
  x: Float32Array;
  y: Float32Array;
  mask: Float32Array;
}

function gatherBatch(
  seqs: CardSequences,
  rows: readonly [number, number][],
  T: number,
  withLabels: boolean,
): Batch {
  const F = seqs.featureCount;
  const b = rows.length;
  const x = new Float32Array(b * T * F);
  const y = new Float32Array(withLabels ? b * T : 0);
  const mask = new Float32Array(withLabels ? b * T : 0);
  rows.forEach(([from, to], i) => {
    const len = to - from;
    x.set(seqs.features.subarray(from * F, to * F), i * T * F);
    if (withLabels) {
      for (let t = 0; t < len; t++) {
        y[i * T + t] = seqs.labels[from + t]!;
        mask[i * T + t] = 1;
      }
    }
  });
  return { x, y, mask };
}

/**
 * Scores every row of every card (all splits, in order, state carried from each card's first
 * transaction), as serving would have. Rows are processed chunk by chunk to bound memory.
 */
export function scoreAllRows(
  model: TfLstm,
  seqs: CardSequences,
  { chunkLength = 64, batchSize = 512 } = {},
): Float32Array {
  const H = model.hiddenSize;
  const F = seqs.featureCount;
  const cards = seqs.cardIds.length;
  const scores = new Float32Array(seqs.labels.length);
  const hState = new Float32Array(cards * H);
  const cState = new Float32Array(cards * H);
  for (let level = 0; ; level++) {
    const active: number[] = [];
    for (let k = 0; k < cards; k++)
      if (seqs.start[k]! + level * chunkLength < seqs.start[k + 1]!) active.push(k);
    if (active.length === 0) break;
    for (let i = 0; i < active.length; i += batchSize) {
      const ks = active.slice(i, i + batchSize);
      const rows = ks.map((k): [number, number] => {
        const from = seqs.start[k]! + level * chunkLength;
        return [from, Math.min(seqs.start[k + 1]!, from + chunkLength)];
      });
      const T = Math.max(...rows.map(([a, b]) => b - a));
      const { x } = gatherBatch(seqs, rows, T, false);
      const h0 = new Float32Array(ks.length * H);
      const c0 = new Float32Array(ks.length * H);
      ks.forEach((k, j) => {
        h0.set(hState.subarray(k * H, k * H + H), j * H);
        c0.set(cState.subarray(k * H, k * H + H), j * H);
      });
      const [p, hT, cT] = tf.tidy(() => {
        const out = runSequence(
          model,
          tf.tensor3d(x, [ks.length, T, F]),
          tf.tensor2d(h0, [ks.length, H]),
          tf.tensor2d(c0, [ks.length, H]),
        );
        return [tf.sigmoid(out.logits), out.h, out.c];
      });
      const pv = p.dataSync();
      const hv = hT.dataSync();
      const cv = cT.dataSync();
      tf.dispose([p, hT, cT]);
      rows.forEach(([from, to], j) => {
        scores.set(pv.subarray(j * T, j * T + (to - from)), from);
        // Only full chunks continue; a card's last (short) chunk has no successor.
        if (to - from === T) {
          hState.set(hv.subarray(j * H, j * H + H), ks[j]! * H);
          cState.set(cv.subarray(j * H, j * H + H), ks[j]! * H);
        }
      });
    }
  }
  return scores;
}

export async function trainLstm(seqs: CardSequences, options: TrainOptions): Promise<TrainResult> {
  const started = Date.now();
  const H = options.hiddenSize ?? 32;
  const T = options.chunkLength ?? 32;
  const B = options.batchSize ?? 64;
  const epochs = options.epochs ?? 8;
  const posWeight = options.positiveWeight ?? 10;
  const clipNorm = options.clipNorm ?? 1;
  const patience = options.patience ?? 3;
  const F = seqs.featureCount;
  const rng = new Random(options.seed);
  const model = createTfLstm(rng.fork(), F, H);
  const vars = trainableVariables(model);
  const optimizer = tf.train.adam(options.learningRate ?? 3e-3);
  const cards = seqs.cardIds.length;
  const trainRanges = Array.from({ length: cards }, (_, k) => splitRange(seqs, k, TRAIN));
  const validationRows: number[] = [];
  for (let r = 0; r < seqs.split.length; r++) if (seqs.split[r] === VALIDATION) validationRows.push(r);
  const levels = Math.max(0, ...trainRanges.map(([a, b]) => Math.ceil((b - a) / T)));
  let batches = 0;
  for (let level = 0; level < levels; level++) {
    const n = trainRanges.filter(([a, b]) => b - a > level * T).length;
    batches += Math.ceil(n / B);
  }

  const history: EpochRecord[] = [];
  let best: { weights: LstmWeights; epoch: number; score: number } | null = null;
  for (let epoch = 1; epoch <= epochs; epoch++) {
    const epochStarted = Date.now();
    const epochRng = rng.fork();
    const hState = new Float32Array(cards * H);
    const cState = new Float32Array(cards * H);
    let batch = 0;
    let lossSum = 0;
    for (let level = 0; level < levels; level++) {
      const active = epochRng.shuffle(
        Array.from({ length: cards }, (_, k) => k).filter(
          (k) => trainRanges[k]![1] - trainRanges[k]![0] > level * T,
        ),
      );
      for (let i = 0; i < active.length; i += B) {
        const ks = active.slice(i, i + B);
        const rows = ks.map((k): [number, number] => {
          const from = trainRanges[k]![0] + level * T;
          return [from, Math.min(trainRanges[k]![1], from + T)];
        });
        const { x, y, mask } = gatherBatch(seqs, rows, T, true);
        const h0 = new Float32Array(ks.length * H);
        const c0 = new Float32Array(ks.length * H);
        ks.forEach((k, j) => {
          h0.set(hState.subarray(k * H, k * H + H), j * H);
          c0.set(cState.subarray(k * H, k * H + H), j * H);
        });
        let hT: tf.Tensor | undefined;
        let cT: tf.Tensor | undefined;
        const lossValue = tf.tidy(() => {
          const xs = tf.tensor3d(x, [ks.length, T, F]);
          const ys = tf.tensor2d(y, [ks.length, T]);
          const ms = tf.tensor2d(mask, [ks.length, T]);
          const weights = tf.mul(ms, tf.add(1, tf.mul(posWeight - 1, ys)));
          const { value, grads } = tf.variableGrads(() => {
            const out = runSequence(
              model,
              xs,
              tf.tensor2d(h0, [ks.length, H]),
              tf.tensor2d(c0, [ks.length, H]),
            );
            hT = tf.keep(out.h);
            cT = tf.keep(out.c);
            const z = out.logits;
            // Numerically stable binary cross-entropy on logits.
            const bce = tf.add(tf.sub(tf.relu(z), tf.mul(z, ys)), tf.log1p(tf.exp(tf.neg(tf.abs(z)))));
            return tf.div(tf.sum(tf.mul(bce, weights)), tf.maximum(tf.sum(ms), 1)) as tf.Scalar;
          }, vars);
          const list = vars.map((v) => grads[v.name]!);
          const norm = tf.sqrt(tf.addN(list.map((g) => tf.sum(tf.square(g)))));
          const factor = tf.minimum(1, tf.div(clipNorm, tf.add(norm, 1e-6)));
          optimizer.applyGradients(
            Object.fromEntries(vars.map((v, j) => [v.name, tf.mul(list[j]!, factor)])),
          );
          return value.dataSync()[0]!;
        });
        const hv = hT!.dataSync();
        const cv = cT!.dataSync();
        tf.dispose([hT!, cT!]);
        ks.forEach((k, j) => {
          hState.set(hv.subarray(j * H, j * H + H), k * H);
          cState.set(cv.subarray(j * H, j * H + H), k * H);
        });
        lossSum += lossValue;
        batch++;
        options.onBatch?.({ epoch, epochs, batch, batches, loss: lossSum / batch });
      }
    }
    const scores = validationRows.length > 0 ? scoreAllRows(model, seqs) : new Float32Array(0);
    const validationPrAuc =
      validationRows.length > 0
        ? prAuc(
            validationRows.map((r) => scores[r]!),
            validationRows.map((r) => seqs.labels[r]!),
          )
        : 0;
    const record = {
      epoch,
      loss: batch ? lossSum / batch : 0,
      validationPrAuc,
      seconds: (Date.now() - epochStarted) / 1000,
    };
    history.push(record);
    options.onEpoch?.(record);
    if (best === null || validationPrAuc > best.score)
      best = { weights: toLstmWeights(model), epoch, score: validationPrAuc };
    else if (epoch - best.epoch >= patience) break;
  }
  if (best === null) throw new Error("no training epochs ran");
  assignLstmWeights(model, best.weights);
  return {
    weights: best.weights,
    model,
    history,
    bestEpoch: best.epoch,
    seconds: (Date.now() - started) / 1000,
  };
}
