// The offline pipeline end to end: labelled history → card sequences (serving's feature code)
// → LSTM training (tfjs, wasm) → ONNX export (fp32 + int8) → evaluation on the held-out time
// split through ONNX Runtime, against the rules-only fallback → signed, verified artifact.
import { join } from "node:path";
import { FEATURE_NAMES, FEATURE_SCHEMA_VERSION, FEATURE_SCHEMAS } from "../../src/features/featureVector.js";
import { FP32_MODEL_FILE, INT8_MODEL_FILE, type Manifest } from "../../src/model/manifest.js";
import { OnnxStepSession } from "../../src/model/onnxStepSession.js";
import { verifyModelArtifact } from "../../src/model/verifyModelArtifact.js";
import { DEFAULT_RULES_PATH, loadRuleSet } from "../../src/rules/ruleSet.js";
import { loadLabelledDataset, SPLIT_INDEX, type DatasetSource } from "../dataset/labelledDataset.js";
import { judgeTargets, renderMarkdown, type EvaluationReport } from "../evaluate/evaluationReport.js";
import { scoreMetrics } from "../evaluate/metrics.js";
import { scoreWithOnnx } from "../evaluate/scoreWithOnnx.js";
import { exportFp32Onnx, exportInt8Onnx, MODEL_INPUTS, MODEL_OUTPUTS } from "../export/exportLstmOnnx.js";
import { ensureSigningKey, writeSignedArtifact } from "../export/signArtifact.js";
import { trainingDistributions } from "../export/trainingDistributions.js";
import { buildCardSequences, type CardSequences } from "./cardSequences.js";
import { useWasmBackend } from "./tfLstm.js";
import { trainLstm, type TrainOptions, type TrainResult } from "./trainLstm.js";

export interface ProgressStage {
  update(done: number, info?: Record<string, string | number>): void;
  stop(): void;
}

export interface PipelineProgress {
  stage(name: string, total: number): ProgressStage;
  log(message: string): void;
}

const silent: PipelineProgress = { stage: () => ({ update() {}, stop() {} }), log() {} };

export interface PipelineOptions {
  readonly source: DatasetSource;
  /** Artifacts go to <modelsDir>/<name>/<version>/. */
  readonly modelsDir: string;
  readonly name: string;
  readonly version: string;
  readonly keysDir: string;
  readonly trustedKeysDir: string;
  readonly rulesPath?: string | URL;
  readonly train: Omit<TrainOptions, "onBatch" | "onEpoch">;
  readonly progress?: PipelineProgress;
  /** Train on an earlier schema's features (its prefix of the vector), e.g. for an ablation. */
  readonly featureSchemaVersion?: string;
}

export interface PipelineResult {
  readonly dir: string;
  readonly manifest: Manifest;
  readonly report: EvaluationReport;
  readonly training: TrainResult;
  readonly sequences: CardSequences;
}

export async function runTrainingPipeline(options: PipelineOptions): Promise<PipelineResult> {
  const progress = options.progress ?? silent;
  const ruleSet = await loadRuleSet(options.rulesPath ?? DEFAULT_RULES_PATH);

  progress.log(`loading ${"dir" in options.source ? options.source.dir : options.source.transactions}`);
  const data = await loadLabelledDataset(options.source);
  if (data.unlabelled > 0)
    progress.log(`${data.unlabelled} transactions have no label and count as legitimate`);

  const schema = options.featureSchemaVersion ?? FEATURE_SCHEMA_VERSION;
  const width = FEATURE_SCHEMAS[schema];
  if (width === undefined)
    throw new Error(
      `feature schema "${schema}" is not one this build computes (${Object.keys(FEATURE_SCHEMAS).join(", ")})`,
    );
  const featureStage = progress.stage("features", data.transactions.length);
  const seqs = buildCardSequences(data, ruleSet, (done) => featureStage.update(done), width);
  featureStage.stop();

  await useWasmBackend();
  let trainStage: ProgressStage | null = null;
  let currentEpoch = 0;
  const training = await trainLstm(seqs, {
    ...options.train,
    onBatch: (p) => {
      if (p.epoch !== currentEpoch) {
        trainStage?.stop();
        currentEpoch = p.epoch;
        trainStage = progress.stage(`epoch ${p.epoch}/${p.epochs}`, p.batches);
      }
      trainStage?.update(p.batch, { loss: p.loss.toFixed(4) });
    },
    onEpoch: (e) => {
      trainStage?.stop();
      trainStage = null;
      progress.log(
        `epoch ${e.epoch}: loss ${e.loss.toFixed(4)}, validation PR-AUC ${e.validationPrAuc.toFixed(4)} (${e.seconds.toFixed(0)} s)`,
      );
    },
  });

  const meta = { modelName: options.name, modelVersion: options.version, featureSchemaVersion: schema };
  const fp32 = exportFp32Onnx(training.weights, meta);
  const int8 = exportInt8Onnx(training.weights, meta);
  const F = seqs.featureCount;
  const H = training.weights.hiddenSize;

  const testRows: number[] = [];
  for (let r = 0; r < seqs.split.length; r++) if (seqs.split[r] === SPLIT_INDEX.test) testRows.push(r);
  if (testRows.length === 0) throw new Error("the test split is empty: nothing to evaluate on");
  const labels = testRows.map((r) => seqs.labels[r]!);
  const evaluate = async (name: string, bytes: Uint8Array) => {
    const session = await OnnxStepSession.open(bytes, { featureCount: F, hiddenSize: H, intraOpThreads: 2 });
    const stage = progress.stage(`evaluate ${name}`, 1);
    const scores = await scoreWithOnnx(session, seqs, (done, total) => stage.update(done / total));
    stage.stop();
    await session.close();
    return {
      scores,
      metrics: scoreMetrics(
        testRows.map((r) => scores[r]!),
        labels,
      ),
    };
  };
  const fp32Scored = await evaluate("fp32", fp32);
  const results = {
    fp32: fp32Scored.metrics,
    int8: (await evaluate("int8", int8)).metrics,
    rules: scoreMetrics(
      testRows.map((r) => seqs.ruleScores[r]!),
      labels,
    ),
  };
  const trainRows: number[] = [];
  for (let r = 0; r < seqs.split.length; r++) if (seqs.split[r] === SPLIT_INDEX.train) trainRows.push(r);
  const distributions = trainingDistributions(
    seqs.features,
    F,
    fp32Scored.scores,
    trainRows,
    `train split of ${data.source}, scored with model.onnx stepping every card from its first transaction`,
  );
  const createdAt = new Date().toISOString();
  const hyperparameters = {
    hiddenSize: H,
    chunkLength: options.train.chunkLength ?? 32,
    batchSize: options.train.batchSize ?? 64,
    learningRate: options.train.learningRate ?? 3e-3,
    positiveWeight: options.train.positiveWeight ?? 10,
    maxEpochs: options.train.epochs ?? 8,
  };
  const report: EvaluationReport = {
    model: {
      name: options.name,
      version: options.version,
      featureSchemaVersion: schema,
      hiddenSize: H,
    },
    data: {
      source: data.source,
      split: "test",
      transactions: testRows.length,
      fraud: labels.filter((l) => l).length,
      unlabelled: data.unlabelled,
    },
    rulesVersion: ruleSet.version,
    results,
    targets: judgeTargets(results),
    training: {
      seed: options.train.seed,
      epochs: training.history.length,
      bestEpoch: training.bestEpoch,
      seconds: training.seconds,
      history: training.history,
    },
    createdAt,
  };

  const key = await ensureSigningKey(options.keysDir, options.trustedKeysDir);
  const dir = join(options.modelsDir, options.name, options.version);
  const tensor = (name: string, shape: (number | string)[]) => ({ name, dtype: "float32" as const, shape });
  await writeSignedArtifact(
    dir,
    {
      [FP32_MODEL_FILE]: fp32,
      [INT8_MODEL_FILE]: int8,
      "evaluation.json": Buffer.from(JSON.stringify(report, null, 2) + "\n"),
      "evaluation.md": Buffer.from(renderMarkdown(report)),
    },
    {
      formatVersion: 1,
      name: options.name,
      modelVersion: options.version,
      featureSchemaVersion: schema,
      featureNames: FEATURE_NAMES.slice(0, width),
      featureCount: F,
      hiddenSize: H,
      createdAt,
      io: {
        inputs: {
          x: tensor(MODEL_INPUTS.x, ["batch", F]),
          h: tensor(MODEL_INPUTS.h, ["batch", H]),
          c: tensor(MODEL_INPUTS.c, ["batch", H]),
        },
        outputs: {
          score: tensor(MODEL_OUTPUTS.score, ["batch"]),
          h: tensor(MODEL_OUTPUTS.h, ["batch", H]),
          c: tensor(MODEL_OUTPUTS.c, ["batch", H]),
        },
      },
      training: {
        seed: options.train.seed,
        data: data.source,
        epochs: training.history.length,
        bestEpoch: training.bestEpoch,
        seconds: Math.round(training.seconds),
        hyperparameters,
      },
      rulesVersion: ruleSet.version,
      metrics: { split: "test", ...results },
      distributions,
    },
    key,
  );
  const manifest = await verifyModelArtifact(dir, {
    trustedKeysDir: options.trustedKeysDir,
    expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
  });
  return { dir, manifest, report, training, sequences: seqs };
}
