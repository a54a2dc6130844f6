// OnnxStepSession runs onnxruntime-node's native session directly (no setImmediate, no argument
// re-checks per run). These pin that it is the same model run as the public InferenceSession to
// the last bit, so an onnxruntime-node upgrade that changes its binding fails here, not in scores.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FP32_MODEL_FILE, type Manifest } from "../../src/model/manifest.js";
import { OnnxStepSession, stepSessionOptions } from "../../src/model/onnxStepSession.js";
import { committedModelDir } from "../support/committedModel.js";

let step: OnnxStepSession;
let reference: ort.InferenceSession;
let manifest: Manifest;

beforeAll(async () => {
  const dir = committedModelDir();
  manifest = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as Manifest;
  const bytes = await readFile(join(dir, FP32_MODEL_FILE));
  const { io, featureCount, hiddenSize } = manifest;
  step = await OnnxStepSession.open(bytes, {
    featureCount,
    hiddenSize,
    names: {
      inputs: { x: io.inputs.x.name, h: io.inputs.h.name, c: io.inputs.c.name },
      outputs: { score: io.outputs.score.name, h: io.outputs.h.name, c: io.outputs.c.name },
    },
  });
  reference = await ort.InferenceSession.create(bytes, stepSessionOptions("cpu", 1));
});
afterAll(async () => {
  await step.close();
  await reference.release();
});

const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

function inputs(seed: number, n: number): Float32Array {
  let s = seed >>> 0;
  return Float32Array.from(
    { length: n },
    () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0), s / 2 ** 31 - 1),
  );
}

describe("the model step", () => {
  it("gives the public InferenceSession's scores and next h/c, bit for bit, at batch 1, 5 and 64", async () => {
    const { featureCount: F, hiddenSize: H, io } = manifest;
    for (const batch of [1, 5, 64]) {
      // Longer than the batch needs: the step reads only its first batch rows.
      const x = inputs(batch, (batch + 3) * F);
      const h = inputs(batch + 1, (batch + 3) * H);
      const c = inputs(batch + 2, (batch + 3) * H);
      const got = await step.step(x, h, c, batch);
      const want = await reference.run({
        [io.inputs.x.name]: new ort.Tensor("float32", x.slice(0, batch * F), [batch, F]),
        [io.inputs.h.name]: new ort.Tensor("float32", h.slice(0, batch * H), [batch, H]),
        [io.inputs.c.name]: new ort.Tensor("float32", c.slice(0, batch * H), [batch, H]),
      });
      expect(got.score.length, `batch ${batch}`).toBe(batch);
      expect(bits(got.score), `score, batch ${batch}`).toEqual(
        bits(want[io.outputs.score.name]!.data as Float32Array),
      );
      expect(bits(got.h), `h, batch ${batch}`).toEqual(bits(want[io.outputs.h.name]!.data as Float32Array));
      expect(bits(got.c), `c, batch ${batch}`).toEqual(bits(want[io.outputs.c.name]!.data as Float32Array));
    }
  });

  it("rejects inputs shorter than the batch instead of reading past them", async () => {
    const { featureCount: F, hiddenSize: H } = manifest;
    await expect(
      step.step(new Float32Array(F), new Float32Array(2 * H), new Float32Array(2 * H), 2),
    ).rejects.toThrow(RangeError);
  });
});
