// The model as the scorer sees it: verified, loaded, warmed, stepped in batches. Every provider
// runs the fp32 graph: the int8 one (DynamicQuantizeLSTM) quantizes its inputs with each batch's
// own range, so a score would depend on what shared its batch and an audit replay could not
// reproduce it; fp32 is as fast on CPU (bench section 5) and bit-identical whatever the batch
// size or neighbours (test/unit/modelBatchIndependence.test.ts). auto uses CUDA when its
// libraries and a driver are there (checked before asking ONNX Runtime, which would print its own
// error) and says once in the log when it runs on the CPU instead.
import { cudaAvailability, type CudaAvailability } from "./cudaAvailability.js";
import { ModelArtifactError } from "./modelArtifactError.js";
import { ModelProviderError } from "./modelProviderError.js";
import { FP32_MODEL_FILE, type Manifest } from "./manifest.js";
import { OnnxStepSession, type ExecutionProvider, type StepResult } from "./onnxStepSession.js";
import { readVerifiedFile, verifyModelArtifact } from "./verifyModelArtifact.js";

export type ProviderChoice = "cpu" | "cuda" | "auto";

export interface ModelLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface LoadModelOptions {
  readonly dir: string;
  readonly trustedKeysDir: string;
  readonly provider: ProviderChoice;
  readonly expectedFeatureSchemaVersion: string;
  readonly logger?: ModelLogger;
  readonly intraOpThreads?: number;
  /** Whether CUDA can load here; replaceable so tests can stand in for a CUDA machine. */
  readonly probeCuda?: () => CudaAvailability;
}

export interface ModelRunner {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly featureSchemaVersion: string;
  readonly hiddenSize: number;
  readonly featureCount: number;
  readonly provider: ExecutionProvider;
  readonly manifest: Manifest;
  step(x: Float32Array, h: Float32Array, c: Float32Array, batch: number): Promise<StepResult>;
  /** Runs a few batches so the first real transaction does not pay for lazy initialisation. */
  warmUp(): Promise<void>;
  close(): Promise<void>;
}

async function openFor(
  dir: string,
  manifest: Manifest,
  provider: ExecutionProvider,
  intraOpThreads: number,
): Promise<OnnxStepSession> {
  const bytes = await readVerifiedFile(dir, manifest, FP32_MODEL_FILE);
  const { io } = manifest;
  return OnnxStepSession.open(bytes, {
    featureCount: manifest.featureCount,
    hiddenSize: manifest.hiddenSize,
    provider,
    intraOpThreads,
    names: {
      inputs: { x: io.inputs.x.name, h: io.inputs.h.name, c: io.inputs.c.name },
      outputs: { score: io.outputs.score.name, h: io.outputs.h.name, c: io.outputs.c.name },
    },
  });
}

export async function loadModelRunner(options: LoadModelOptions): Promise<ModelRunner> {
  const {
    dir,
    trustedKeysDir,
    provider,
    expectedFeatureSchemaVersion,
    logger,
    intraOpThreads = 1,
    probeCuda = cudaAvailability,
  } = options;
  const manifest = await verifyModelArtifact(dir, { trustedKeysDir, expectedFeatureSchemaVersion });
  const cuda = provider === "cpu" ? undefined : probeCuda();
  if (provider === "cuda" && cuda?.available === false) {
    throw new ModelProviderError(
      "cuda_unavailable",
      `provider cuda asked for, but CUDA cannot load: ${cuda.reason}`,
    );
  }
  let session: OnnxStepSession;
  if (provider === "auto" && cuda?.available === true) {
    try {
      session = await openFor(dir, manifest, "cuda", intraOpThreads);
    } catch (err) {
      if (err instanceof ModelArtifactError) throw err;
      const reason = (err as Error).message.split("\n")[0];
      logger?.warn(
        { model: manifest.name, version: manifest.modelVersion, reason },
        "CUDA failed, running the model on CPU",
      );
      session = await openFor(dir, manifest, "cpu", intraOpThreads);
    }
  } else if (provider === "auto") {
    const reason = cuda?.available === false ? cuda.reason : "unknown";
    logger?.info(
      { model: manifest.name, version: manifest.modelVersion, reason },
      "CUDA unavailable, running the model on CPU",
    );
    session = await openFor(dir, manifest, "cpu", intraOpThreads);
  } else {
    session = await openFor(dir, manifest, provider, intraOpThreads);
  }
  logger?.info(
    { model: manifest.name, version: manifest.modelVersion, provider: session.provider },
    "model loaded",
  );
  const F = manifest.featureCount;
  const H = manifest.hiddenSize;
  return {
    modelName: manifest.name,
    modelVersion: manifest.modelVersion,
    featureSchemaVersion: manifest.featureSchemaVersion,
    hiddenSize: H,
    featureCount: F,
    provider: session.provider,
    manifest,
    step: (x, h, c, batch) => session.step(x, h, c, batch),
    async warmUp() {
      for (const batch of [1, 8, 64]) {
        await session.step(
          new Float32Array(batch * F),
          new Float32Array(batch * H),
          new Float32Array(batch * H),
          batch,
        );
      }
    },
    close: () => session.close(),
  };
}
