// One ONNX Runtime session over a single-step LSTM graph: x[B,F], h[B,H], c[B,H] in,
// score[B], h'[B,H], c'[B,H] out. No verification here: ModelRunner verifies the artifact
// before it opens a session; the offline pipeline uses this directly on freshly exported files.
//
// The session is onnxruntime-node's native one, run synchronously. The public InferenceSession
// wraps that same synchronous call in a setImmediate and re-checks its arguments on every run:
// it offloads nothing (the run happens on the event loop either way, so a hung model stalls the
// loop the same), and it cost 8–9 µs of a 27 µs step at batch 5. The model runs once or twice per
// batch, so at a steady 1,000 tx/s that is a fixed cost paid some 200 times a second.
// test/unit/onnxStepSession.test.ts pins that both paths give the same bits, so an upgrade
// that changes the binding fails there.
import * as ort from "onnxruntime-node";
import { binding, initOrt, type Binding } from "onnxruntime-node/dist/binding.js";

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

/** The options `serve` opens every session with (exported for the test that compares paths). */
export function stepSessionOptions(
  provider: ExecutionProvider,
  intraOpThreads: number,
): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: [provider],
    intraOpNumThreads: intraOpThreads,
    // Sequential execution: the inter-op pool would only add threads that idle.
    interOpNumThreads: 1,
    graphOptimizationLevel: "all",
    // Pool threads that spin between steps burn a shared core for nothing: with 2 intra-op threads
    // a step cost 5.0 µs of CPU per transaction spinning, 2.9 µs not (batch 64; same with 1 thread).
    extra: { session: { intra_op: { allow_spinning: "0" }, inter_op: { allow_spinning: "0" } } },
  };
}

const RUN_OPTIONS: ort.InferenceSession.RunOptions = {};

export class OnnxStepSession {
  /** All three outputs, by name, bound once (null: ONNX Runtime allocates them). */
  readonly #fetches: Record<string, null>;

  private constructor(
    private readonly session: Binding.InferenceSession,
    readonly featureCount: number,
    readonly hiddenSize: number,
    readonly names: StepNames,
    readonly provider: ExecutionProvider,
  ) {
    const { outputs } = names;
    this.#fetches = { [outputs.score]: null, [outputs.h]: null, [outputs.c]: null };
  }

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
    const options = stepSessionOptions(provider, intraOpThreads);
    initOrt();
    const session = new binding.InferenceSession();
    if (typeof model === "string") session.loadModel(model, options);
    else session.loadModel(model.buffer as ArrayBuffer, model.byteOffset, model.byteLength, options);
    return new OnnxStepSession(session, featureCount, hiddenSize, names, provider);
  }

  async step(x: Float32Array, h: Float32Array, c: Float32Array, batch: number): Promise<StepResult> {
    const F = this.featureCount;
    const H = this.hiddenSize;
    if (x.length < batch * F || h.length < batch * H || c.length < batch * H) {
      throw new RangeError(`step(batch=${batch}) needs x ≥ ${batch * F}, h and c ≥ ${batch * H} values`);
    }
    const { inputs, outputs } = this.names;
    const out = this.session.run(
      {
        [inputs.x]: new ort.Tensor("float32", x.subarray(0, batch * F), [batch, F]),
        [inputs.h]: new ort.Tensor("float32", h.subarray(0, batch * H), [batch, H]),
        [inputs.c]: new ort.Tensor("float32", c.subarray(0, batch * H), [batch, H]),
      },
      this.#fetches,
      RUN_OPTIONS,
    );
    return {
      score: out[outputs.score]!.data as Float32Array,
      h: out[outputs.h]!.data as Float32Array,
      c: out[outputs.c]!.data as Float32Array,
    };
  }

  async close(): Promise<void> {
    this.session.dispose();
  }
}
