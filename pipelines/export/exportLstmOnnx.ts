// Exports the trained LSTM as a single-step stateful ONNX graph:
//   x[B,F], h[B,H], c[B,H] → score[B], h_next[B,H], c_next[B,H]
// fp32 uses ONNX LSTM; int8 uses com.microsoft DynamicQuantizeLSTM with symmetric per-channel
// int8 weights (activations are quantized dynamically by the runtime). The score head stays fp32.
import { FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import type { LstmWeights } from "./lstmWeights.js";
import {
  DataType,
  encodeModel,
  floatTensor,
  int64Tensor,
  int8Tensor,
  intAttr,
  valueInfo,
  type NodeInit,
  type TensorInit,
} from "./onnxProto.js";

export const MODEL_INPUTS = { x: "x", h: "h", c: "c" } as const;
export const MODEL_OUTPUTS = { score: "score", h: "h_next", c: "c_next" } as const;
const OPSET = 17;

export interface ExportMetadata {
  readonly modelName: string;
  readonly modelVersion: string;
  /** The feature schema the model was trained on (default: the one this build computes). */
  readonly featureSchemaVersion?: string;
}

/** W [F,4H] → ONNX LSTM's [1, 4H, F] (transposed). */
function transpose(a: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(a.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = a[r * cols + c]!;
  return out;
}

export interface QuantizedMatrix {
  readonly q: Int8Array;
  /** One scale per column (per gate unit). */
  readonly scale: Float32Array;
}

/** Symmetric per-column int8: q = round(w / scale), scale = max|column| / 127. */
export function quantizePerColumn(a: Float32Array, rows: number, cols: number): QuantizedMatrix {
  const scale = new Float32Array(cols);
  for (let c = 0; c < cols; c++) {
    let m = 0;
    for (let r = 0; r < rows; r++) m = Math.max(m, Math.abs(a[r * cols + c]!));
    scale[c] = m > 0 ? m / 127 : 1;
  }
  const q = new Int8Array(a.length);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++)
      q[r * cols + c] = Math.max(-127, Math.min(127, Math.round(a[r * cols + c]! / scale[c]!)));
  return { q, scale };
}

function buildModel(w: LstmWeights, meta: ExportMetadata, quantized: boolean): Uint8Array {
  const F = w.featureCount;
  const H = w.hiddenSize;
  const B = new Float32Array(8 * H);
  B.set(w.b, 0); // Wb; Rb stays zero
  const initializers: TensorInit[] = [
    int64Tensor("axes0", [1], [0]),
    int64Tensor("axes1", [1], [1]),
    floatTensor("B", [1, 8 * H], B),
    floatTensor("head_W", [H, 1], w.headW),
    floatTensor("head_B", [1], Float32Array.of(w.headB)),
  ];
  let lstm: NodeInit;
  if (quantized) {
    const Wq = quantizePerColumn(w.W, F, 4 * H);
    const Rq = quantizePerColumn(w.R, H, 4 * H);
    initializers.push(
      int8Tensor("W_q", [1, F, 4 * H], Wq.q),
      int8Tensor("R_q", [1, H, 4 * H], Rq.q),
      floatTensor("W_scale", [1, 4 * H], Wq.scale),
      int8Tensor("W_zero_point", [1, 4 * H], new Int8Array(4 * H)),
      floatTensor("R_scale", [1, 4 * H], Rq.scale),
      int8Tensor("R_zero_point", [1, 4 * H], new Int8Array(4 * H)),
    );
    lstm = {
      opType: "DynamicQuantizeLSTM",
      domain: "com.microsoft",
      name: "lstm",
      input: [
        "x3",
        "W_q",
        "R_q",
        "B",
        "",
        "h3",
        "c3",
        "",
        "W_scale",
        "W_zero_point",
        "R_scale",
        "R_zero_point",
      ],
      output: ["", "Y_h", "Y_c"],
      attribute: [intAttr("hidden_size", H)],
    };
  } else {
    initializers.push(
      floatTensor("W", [1, 4 * H, F], transpose(w.W, F, 4 * H)),
      floatTensor("R", [1, 4 * H, H], transpose(w.R, H, 4 * H)),
    );
    lstm = {
      opType: "LSTM",
      name: "lstm",
      input: ["x3", "W", "R", "B", "", "h3", "c3"],
      output: ["", "Y_h", "Y_c"],
      attribute: [intAttr("hidden_size", H)],
    };
  }
  const nodes: NodeInit[] = [
    { opType: "Unsqueeze", input: [MODEL_INPUTS.x, "axes0"], output: ["x3"] },
    { opType: "Unsqueeze", input: [MODEL_INPUTS.h, "axes0"], output: ["h3"] },
    { opType: "Unsqueeze", input: [MODEL_INPUTS.c, "axes0"], output: ["c3"] },
    lstm,
    { opType: "Squeeze", input: ["Y_h", "axes0"], output: [MODEL_OUTPUTS.h] },
    { opType: "Squeeze", input: ["Y_c", "axes0"], output: [MODEL_OUTPUTS.c] },
    { opType: "MatMul", input: [MODEL_OUTPUTS.h, "head_W"], output: ["logit2"] },
    { opType: "Add", input: ["logit2", "head_B"], output: ["logit2b"] },
    { opType: "Sigmoid", input: ["logit2b"], output: ["score2"] },
    { opType: "Squeeze", input: ["score2", "axes1"], output: [MODEL_OUTPUTS.score] },
  ];
  return encodeModel({
    irVersion: 8,
    producerName: "fraud-scorer",
    producerVersion: "1",
    docString: `${meta.modelName} ${meta.modelVersion}: single-step stateful LSTM fraud scorer (${quantized ? "int8" : "fp32"})`,
    opsetImport: quantized
      ? [
          { domain: "", version: OPSET },
          { domain: "com.microsoft", version: 1 },
        ]
      : [{ domain: "", version: OPSET }],
    metadataProps: [
      { key: "model_name", value: meta.modelName },
      { key: "model_version", value: meta.modelVersion },
      { key: "feature_schema_version", value: meta.featureSchemaVersion ?? FEATURE_SCHEMA_VERSION },
    ],
    graph: {
      name: "fraud_lstm_step",
      node: nodes,
      initializer: initializers,
      input: [
        valueInfo(MODEL_INPUTS.x, DataType.FLOAT, ["batch", F]),
        valueInfo(MODEL_INPUTS.h, DataType.FLOAT, ["batch", H]),
        valueInfo(MODEL_INPUTS.c, DataType.FLOAT, ["batch", H]),
      ],
      output: [
        valueInfo(MODEL_OUTPUTS.score, DataType.FLOAT, ["batch"]),
        valueInfo(MODEL_OUTPUTS.h, DataType.FLOAT, ["batch", H]),
        valueInfo(MODEL_OUTPUTS.c, DataType.FLOAT, ["batch", H]),
      ],
    },
  });
}

export const exportFp32Onnx = (w: LstmWeights, meta: ExportMetadata): Uint8Array =>
  buildModel(w, meta, false);
export const exportInt8Onnx = (w: LstmWeights, meta: ExportMetadata): Uint8Array => buildModel(w, meta, true);
