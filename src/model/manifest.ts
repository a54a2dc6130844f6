// manifest.json of a model artifact: what the model is, what it was trained on, the sha256 of
// every file beside it, and how to call it. manifest.sig signs these exact bytes (ed25519).
import { z } from "zod";

export const MANIFEST_FILE = "manifest.json";
export const SIGNATURE_FILE = "manifest.sig";
export const FP32_MODEL_FILE = "model.onnx";
export const INT8_MODEL_FILE = "model.int8.onnx";

const tensorSpec = z.strictObject({
  name: z.string().min(1),
  dtype: z.literal("float32"),
  shape: z.array(z.union([z.number().int().positive(), z.string().min(1)])),
});

const metricsSchema = z.object({
  rocAuc: z.number(),
  prAuc: z.number(),
  recallAt0_5PctFpr: z.number(),
  recallAt1PctFpr: z.number(),
  transactions: z.number().int(),
  positives: z.number().int(),
});

export const manifestSchema = z.object({
  formatVersion: z.literal(1),
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
  modelVersion: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/),
  featureSchemaVersion: z.string().min(1),
  featureNames: z.array(z.string()).min(1),
  featureCount: z.number().int().positive(),
  hiddenSize: z.number().int().positive(),
  createdAt: z.string().datetime(),
  files: z.record(
    z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "file names are plain names inside the artifact folder"),
    z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/), bytes: z.number().int().nonnegative() }),
  ),
  io: z.object({
    inputs: z.object({ x: tensorSpec, h: tensorSpec, c: tensorSpec }),
    outputs: z.object({ score: tensorSpec, h: tensorSpec, c: tensorSpec }),
  }),
  training: z.object({
    seed: z.number().int(),
    data: z.string(),
    epochs: z.number().int(),
    bestEpoch: z.number().int(),
    seconds: z.number(),
    hyperparameters: z.record(z.string(), z.union([z.number(), z.string()])),
  }),
  rulesVersion: z.string(),
  metrics: z.object({
    split: z.string(),
    fp32: metricsSchema,
    int8: metricsSchema,
    rules: metricsSchema,
  }),
  signing: z.object({ algorithm: z.literal("ed25519"), keyId: z.string().regex(/^[0-9a-f]{16}$/) }),
});

export type Manifest = z.infer<typeof manifestSchema>;
export type ModelMetrics = z.infer<typeof metricsSchema>;
