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

/**
 * A distribution as binned at training time: values v go to bin i where edges[i-1] < v ≤ edges[i]
 * (bin 0 below or at edges[0], the last bin above the last edge); proportions has one more entry
 * than edges and sums to 1.
 */
const histogramSchema = z
  .strictObject({
    edges: z.array(z.number()),
    proportions: z.array(z.number().min(0).max(1)),
  })
  .refine((h) => h.proportions.length === h.edges.length + 1, "proportions needs one entry more than edges")
  .refine((h) => h.edges.every((e, i) => i === 0 || e > h.edges[i - 1]!), "edges must increase");

/** What the model saw in training, for drift (PSI) against what it sees in production. */
const trainingDistributionsSchema = z.strictObject({
  /** Which rows, scored how: e.g. the train split, scored with model.onnx stepping every card. */
  source: z.string(),
  transactions: z.number().int().positive(),
  /** One per featureNames entry, in that order, over the scaled model inputs. */
  features: z.array(histogramSchema),
  score: histogramSchema,
});

export type Histogram = z.infer<typeof histogramSchema>;
export type TrainingDistributions = z.infer<typeof trainingDistributionsSchema>;

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
  /** Absent in artifacts made before drift monitoring (1.0.0): the scorer then reports no PSI. */
  distributions: trainingDistributionsSchema.optional(),
});

export type Manifest = z.infer<typeof manifestSchema>;
export type ModelMetrics = z.infer<typeof metricsSchema>;
