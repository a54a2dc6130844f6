// One ONNX Runtime session over a single-step LSTM graph: x[B,F], h[B,H], c[B,H] in,
// score[B], h'[B,H], c'[B,H] out. No verification here: ModelRunner verifies the artifact
// before it opens a session; the offline pipeline uses this directly on freshly exported files.
import * as ort from "onnxruntime-node";

export type ExecutionProvider = "cpu" | "cuda";

export interface StepNames {
  readonly inputs: { readonly x: string; readonly h: string; readonly c: string };
  readonly outputs: { readonly score: string; readonly h: string; readonly c: string };
}

export const DEFAULT_STEP_NAMES: StepNames = {
  inputs: { x: "x", h: "h", c: "c" },
  outputs: { score: "score", h: "h_next", c: "c_next" },
};

export interface StepResult {
  readonly score: Float32Array;
  readonly h: Float32Array;
  readonly c: Float32Array;
}

export class OnnxStepSession {
  private constructor(
    private readonly session: ort.InferenceSession,
    readonly featureCount: number,
    readonly hiddenSize: number,
    readonly names: StepNames,
    readonly provider: ExecutionProvider,
  ) {}

  static async open(
    model: string | Uint8Array,
    {
      featureCount,
      hiddenSize,
      provider = "cpu",
      names = DEFAULT_STEP_NAMES,
      intraOpThreads = 1,
    }: {
      featureCount: number;
      hiddenSize: number;
      provider?: ExecutionProvider;
      names?: StepNames;
      intraOpThreads?: number;
    },
  ): Promise<OnnxStepSession> {
    const options: ort.InferenceSession.SessionOptions = {
      executionProviders: [provider],
      intraOpNumThreads: intraOpThreads,
      // Sequential execution: the inter-op pool would only add threads that idle.
      interOpNumThreads: 1,
      graphOptimizationLevel: "all",
      // Pool threads that spin between steps burn a shared core for nothing: with 2 intra-op threads
      // a step cost 5.0 µs of CPU per transaction spinning, 2.9 µs not (batch 64; same with 1 thread).
      extra: { session: { intra_op: { allow_spinning: "0" }, inter_op: { allow_spinning: "0" } } },
    };
    const session =
      typeof model === "string"
        ? await ort.InferenceSession.create(model, options)
        : await ort.InferenceSession.create(model, options);
    return new OnnxStepSession(session, featureCount, hiddenSize, names, provider);
  }

  async step(x: Float32Array, h: Float32Array, c: Float32Array, batch: number): Promise<StepResult> {
    const F = this.featureCount;
    const H = this.hiddenSize;
    if (x.length < batch * F || h.length < batch * H || c.length < batch * H) {
      throw new RangeError(`step(batch=${batch}) needs x ≥ ${batch * F}, h and c ≥ ${batch * H} values`);
    }
    const { inputs, outputs } = this.names;
    const out = await this.session.run({
      [inputs.x]: new ort.Tensor("float32", x.subarray(0, batch * F), [batch, F]),
      [inputs.h]: new ort.Tensor("float32", h.subarray(0, batch * H), [batch, H]),
      [inputs.c]: new ort.Tensor("float32", c.subarray(0, batch * H), [batch, H]),
    });
    return {
      score: out[outputs.score]!.data as Float32Array,
      h: out[outputs.h]!.data as Float32Array,
      c: out[outputs.c]!.data as Float32Array,
    };
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}
