// The smoke run of the whole offline pipeline (simulate → train one epoch → export → evaluate →
// sign with an ephemeral key → verify) plus what serving relies on from its artifact.
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import * as tf from "@tensorflow/tfjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import { loadModelRunner } from "../../src/model/loadModelRunner.js";
import { ModelArtifactError } from "../../src/model/modelArtifactError.js";
import { OnnxStepSession } from "../../src/model/onnxStepSession.js";
import { verifyModelArtifact } from "../../src/model/verifyModelArtifact.js";
import { ensureSigningKey } from "../../pipelines/export/signArtifact.js";
import { writeSimulation } from "../../pipelines/simulate/writeSimulation.js";
import { runTrainingPipeline, type PipelineResult } from "../../pipelines/train/runTrainingPipeline.js";
import { runSequence } from "../../pipelines/train/tfLstm.js";

const run = promisify(execFile);
let work: string;
let result: PipelineResult;
let trustedKeysDir: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "fraud-pipeline-"));
  trustedKeysDir = join(work, "trusted-keys");
  await writeSimulation(
    join(work, "sim"),
    { seed: 11, cards: 150, days: 40 },
    { validationFromDay: 26, testFromDay: 33 },
  );
  result = await runTrainingPipeline({
    source: { dir: join(work, "sim") },
    modelsDir: join(work, "models"),
    name: "fraud-lstm",
    version: "smoke-1",
    keysDir: join(work, "keys"),
    trustedKeysDir,
    train: { seed: 3, epochs: 1, hiddenSize: 16, chunkLength: 16, batchSize: 32 },
  });
}, 120_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** A tampered copy of the smoke artifact. */
async function tamperedCopy(file: string): Promise<string> {
  const dir = join(work, `tampered-${file}-${Math.random().toString(36).slice(2)}`);
  await cp(result.dir, dir, { recursive: true });
  const bytes = await readFile(join(dir, file));
  bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
  await writeFile(join(dir, file), bytes);
  return dir;
}

const refusal = async (p: Promise<unknown>): Promise<ModelArtifactError> => {
  try {
    await p;
  } catch (err) {
    if (err instanceof ModelArtifactError) return err;
    throw err;
  }
  throw new Error("expected a ModelArtifactError");
};

describe("smoke training run", () => {
  it("writes a signed artifact with both models, the evaluation report and a verifying manifest", async () => {
    const manifest = await verifyModelArtifact(result.dir, {
      trustedKeysDir,
      expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
    });
    expect(Object.keys(manifest.files).sort()).toEqual([
      "evaluation.json",
      "evaluation.md",
      "model.int8.onnx",
      "model.onnx",
    ]);
    expect(manifest.featureSchemaVersion).toBe(FEATURE_SCHEMA_VERSION);
    expect(manifest.io.inputs.x.shape).toEqual(["batch", manifest.featureCount]);
    expect(manifest.training.seed).toBe(3);
    const report = JSON.parse(await readFile(join(result.dir, "evaluation.json"), "utf8"));
    for (const scorer of ["fp32", "int8", "rules"]) {
      expect(report.results[scorer].rocAuc).toBeGreaterThan(0.5);
      expect(report.results[scorer].prAuc).toBeGreaterThan(0);
    }
    expect(await readFile(join(result.dir, "evaluation.md"), "utf8")).toMatch(/recall @ 1 % FPR/);
  });

  it("stepping the fp32 graph through card histories reproduces tfjs on the whole sequence within 1e-4", async () => {
    const { maxError } = await compareWithTfjs("model.onnx");
    expect(maxError).toBeLessThan(1e-4);
  });

  it("stepping the int8 graph through card histories stays within 2e-2 of tfjs on the whole sequence", async () => {
    const { maxError, meanError } = await compareWithTfjs("model.int8.onnx");
    expect(maxError).toBeLessThan(2e-2);
    expect(meanError).toBeLessThan(3e-3);
  });
});

/** tfjs over each of the longest card histories at once vs ONNX Runtime one step at a time. */
async function compareWithTfjs(file: string): Promise<{ maxError: number; meanError: number }> {
  const { sequences: seqs, training } = result;
  const H = training.weights.hiddenSize;
  const F = seqs.featureCount;
  const cards = Array.from({ length: seqs.cardIds.length }, (_, k) => k)
    .sort((a, b) => seqs.start[b + 1]! - seqs.start[b]! - (seqs.start[a + 1]! - seqs.start[a]!))
    .slice(0, 5);
  const session = await OnnxStepSession.open(await readFile(join(result.dir, file)), {
    featureCount: F,
    hiddenSize: H,
  });
  let maxError = 0;
  let sum = 0;
  let count = 0;
  for (const k of cards) {
    const from = seqs.start[k]!;
    const L = seqs.start[k + 1]! - from;
    const x = seqs.features.slice(from * F, (from + L) * F);
    const whole = tf.tidy(() =>
      tf
        .sigmoid(
          runSequence(training.model, tf.tensor3d(x, [1, L, F]), tf.zeros([1, H]), tf.zeros([1, H])).logits,
        )
        .dataSync(),
    );
    let h: Float32Array = new Float32Array(H);
    let c: Float32Array = new Float32Array(H);
    for (let t = 0; t < L; t++) {
      const out = await session.step(x.subarray(t * F, t * F + F), h, c, 1);
      const err = Math.abs(out.score[0]! - whole[t]!);
      maxError = Math.max(maxError, err);
      sum += err;
      count++;
      h = out.h;
      c = out.c;
    }
  }
  await session.close();
  expect(count).toBeGreaterThan(100);
  return { maxError, meanError: sum / count };
}

describe("model artifact verification", () => {
  it("a one-byte change to model.int8.onnx makes `fraud-scorer model verify` fail naming the file", async () => {
    const dir = await tamperedCopy("model.int8.onnx");
    const failed = await run("node", [
      "bin/fraud-scorer.js",
      "model",
      "verify",
      dir,
      "--trusted-keys",
      trustedKeysDir,
    ]).then(
      () => null,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).not.toBe(0);
    expect(failed?.stderr).toMatch(/model\.int8\.onnx/);
    const ok = await run("node", [
      "bin/fraud-scorer.js",
      "model",
      "verify",
      result.dir,
      "--trusted-keys",
      trustedKeysDir,
    ]);
    expect(ok.stdout).toMatch(/^OK fraud-lstm smoke-1/);
  });

  it.each(["model.onnx", "evaluation.json", "evaluation.md"])(
    "a one-byte change to %s is refused naming the file",
    async (file) => {
      const err = await refusal(verifyModelArtifact(await tamperedCopy(file), { trustedKeysDir }));
      expect(err.kind).toBe("hash_mismatch");
      expect(err.message).toContain(file);
    },
  );

  it.each(["manifest.json", "manifest.sig"])(
    "a one-byte change to %s breaks the signature, naming the file",
    async (file) => {
      const err = await refusal(verifyModelArtifact(await tamperedCopy(file), { trustedKeysDir }));
      expect(err.kind).toBe("bad_signature");
      expect(err.message).toContain(file);
    },
  );

  it("an unsigned artifact is refused", async () => {
    const dir = join(work, "unsigned");
    await cp(result.dir, dir, { recursive: true });
    await rm(join(dir, "manifest.sig"));
    const err = await refusal(verifyModelArtifact(dir, { trustedKeysDir }));
    expect(err.kind).toBe("missing_file");
    expect(err.file).toBe("manifest.sig");
  });

  it("an artifact signed by a key that is not trusted is refused", async () => {
    const otherTrusted = join(work, "other-trusted");
    await ensureSigningKey(join(work, "other-keys"), otherTrusted);
    const err = await refusal(verifyModelArtifact(result.dir, { trustedKeysDir: otherTrusted }));
    expect(err.kind).toBe("bad_signature");
  });

  it("a file slipped into the artifact folder is refused", async () => {
    const dir = join(work, "extra");
    await cp(result.dir, dir, { recursive: true });
    await writeFile(join(dir, "model.patched.onnx"), "x");
    const err = await refusal(verifyModelArtifact(dir, { trustedKeysDir }));
    expect(err.kind).toBe("unlisted_file");
    expect(err.file).toBe("model.patched.onnx");
  });
});

describe("model runner", () => {
  it("refuses a model trained on another feature schema with a clear error", async () => {
    const err = await refusal(
      loadModelRunner({
        dir: result.dir,
        trustedKeysDir,
        provider: "cpu",
        expectedFeatureSchemaVersion: "card-features-0",
      }),
    );
    expect(err.kind).toBe("feature_schema_mismatch");
    expect(err.message).toMatch(/card-features-0/);
  });

  it("the manifest carries the training distribution of every feature and of the score", () => {
    const d = result.manifest.distributions!;
    expect(d.features).toHaveLength(result.manifest.featureCount);
    for (const h of [...d.features, d.score]) {
      expect(h.proportions.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    }
    expect(d.score.edges).toEqual(expect.arrayContaining([0.5, Math.fround(0.85)]));
  });

  it("on auto without CUDA says so once and scores a batch on the CPU", async () => {
    const said: string[] = [];
    const logger = {
      info: (_: object, msg: string) => void said.push(msg),
      warn: (_: object, msg: string) => void said.push(msg),
    };
    const runner = await loadModelRunner({
      dir: result.dir,
      trustedKeysDir,
      provider: "auto",
      expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
      logger,
    });
    await runner.warmUp();
    const B = 3;
    const out = await runner.step(
      new Float32Array(B * runner.featureCount).fill(0.5),
      new Float32Array(B * runner.hiddenSize),
      new Float32Array(B * runner.hiddenSize),
      B,
    );
    expect(out.score).toHaveLength(B);
    expect(out.h).toHaveLength(B * runner.hiddenSize);
    for (const s of out.score) {
      expect(s).toBeGreaterThan(0);
      expect(s).toBeLessThan(1);
    }
    if (runner.provider === "cpu") expect(said.filter((m) => /CUDA/.test(m))).toHaveLength(1);
    await runner.close();
  });
});

describe("committed model", () => {
  it("1.1.0 is 1.0.0's weights with training distributions for drift, signed by another key", async () => {
    const options = {
      trustedKeysDir: "models/trusted-keys",
      expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
    };
    const [old, next] = await Promise.all([
      verifyModelArtifact("models/fraud-lstm/1.0.0", options),
      verifyModelArtifact("models/fraud-lstm/1.1.0", options),
    ]);
    expect(next.files["model.onnx"]).toEqual(old.files["model.onnx"]);
    expect(next.signing.keyId).not.toBe(old.signing.keyId);
    expect(old.distributions).toBeUndefined();
    expect(next.distributions?.features).toHaveLength(next.featureCount);
    expect(next.distributions?.source).toMatch(/not retrained/);
  });

  it("models/fraud-lstm/1.0.0 verifies against the committed trusted keys and this build's feature schema", async () => {
    const manifest = await verifyModelArtifact("models/fraud-lstm/1.0.0", {
      trustedKeysDir: "models/trusted-keys",
      expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
    });
    expect(manifest.metrics.int8.recallAt1PctFpr).toBeGreaterThanOrEqual(
      2 * manifest.metrics.rules.recallAt1PctFpr,
    );
    expect(Math.abs(manifest.metrics.int8.prAuc - manifest.metrics.fp32.prAuc)).toBeLessThanOrEqual(0.01);
  });
});
