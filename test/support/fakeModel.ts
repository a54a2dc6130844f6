// A deterministic stand-in for the ONNX model: a fixed function of (x, h, c), cheap and free of
// artifacts, for tests of the paths around the model (replay, the demo's offline mode).
import { FEATURE_COUNT, FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import type { ModelStepper } from "../../src/scoring/ports.js";

export function fakeModel({ hiddenSize = 8, modelVersion = "fake-1" } = {}): ModelStepper & {
  warmUp(): Promise<void>;
  close(): Promise<void>;
  steps: number;
} {
  const model = {
    modelVersion,
    featureSchemaVersion: FEATURE_SCHEMA_VERSION,
    hiddenSize,
    featureCount: FEATURE_COUNT,
    steps: 0,
    async step(x: Float32Array, h: Float32Array, c: Float32Array, batch: number) {
      model.steps++;
      const score = new Float32Array(batch);
      const h2 = new Float32Array(batch * hiddenSize);
      const c2 = new Float32Array(batch * hiddenSize);
      for (let b = 0; b < batch; b++) {
        let sum = 0;
        for (let f = 0; f < FEATURE_COUNT; f++) sum += x[b * FEATURE_COUNT + f]! * (((f * 7) % 5) - 2) * 0.05;
        for (let k = 0; k < hiddenSize; k++) {
          c2[b * hiddenSize + k] = 0.9 * c[b * hiddenSize + k]! + 0.1 * Math.tanh(sum + k * 0.01);
          h2[b * hiddenSize + k] = Math.tanh(c2[b * hiddenSize + k]!);
          sum += 0.3 * h[b * hiddenSize + k]!;
        }
        score[b] = 1 / (1 + Math.exp(-(sum - 2)));
      }
      return { score, h: h2, c: c2 };
    },
    async warmUp() {},
    async close() {},
  };
  return model;
}
