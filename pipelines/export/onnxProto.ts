// The subset of ONNX's onnx.proto needed to write a model, as a protobufjs descriptor (field
// numbers as in onnx/onnx.proto). Offline export code only; serving reads models with ONNX
// Runtime, never with this.
import protobuf from "protobufjs";

const descriptor = {
  nested: {
    onnx: {
      nested: {
        AttributeProto: {
          fields: {
            name: { type: "string", id: 1 },
            f: { type: "float", id: 2 },
            i: { type: "int64", id: 3 },
            s: { type: "bytes", id: 4 },
            t: { type: "TensorProto", id: 5 },
            floats: { rule: "repeated", type: "float", id: 7 },
            ints: { rule: "repeated", type: "int64", id: 8 },
            type: { type: "int32", id: 20 },
          },
        },
        ValueInfoProto: { fields: { name: { type: "string", id: 1 }, type: { type: "TypeProto", id: 2 } } },
        NodeProto: {
          fields: {
            input: { rule: "repeated", type: "string", id: 1 },
            output: { rule: "repeated", type: "string", id: 2 },
            name: { type: "string", id: 3 },
            opType: { type: "string", id: 4 },
            attribute: { rule: "repeated", type: "AttributeProto", id: 5 },
            domain: { type: "string", id: 7 },
          },
        },
        StringStringEntryProto: {
          fields: { key: { type: "string", id: 1 }, value: { type: "string", id: 2 } },
        },
        ModelProto: {
          fields: {
            irVersion: { type: "int64", id: 1 },
            producerName: { type: "string", id: 2 },
            producerVersion: { type: "string", id: 3 },
            modelVersion: { type: "int64", id: 5 },
            docString: { type: "string", id: 6 },
            graph: { type: "GraphProto", id: 7 },
            opsetImport: { rule: "repeated", type: "OperatorSetIdProto", id: 8 },
            metadataProps: { rule: "repeated", type: "StringStringEntryProto", id: 14 },
          },
        },
        GraphProto: {
          fields: {
            node: { rule: "repeated", type: "NodeProto", id: 1 },
            name: { type: "string", id: 2 },
            initializer: { rule: "repeated", type: "TensorProto", id: 5 },
            input: { rule: "repeated", type: "ValueInfoProto", id: 11 },
            output: { rule: "repeated", type: "ValueInfoProto", id: 12 },
          },
        },
        TensorProto: {
          fields: {
            dims: { rule: "repeated", type: "int64", id: 1 },
            dataType: { type: "int32", id: 2 },
            name: { type: "string", id: 8 },
            rawData: { type: "bytes", id: 9 },
          },
        },
        TensorShapeProto: {
          fields: { dim: { rule: "repeated", type: "Dimension", id: 1 } },
          nested: {
            Dimension: {
              fields: { dimValue: { type: "int64", id: 1 }, dimParam: { type: "string", id: 2 } },
            },
          },
        },
        TypeProto: {
          fields: { tensorType: { type: "Tensor", id: 1 } },
          nested: {
            Tensor: {
              fields: { elemType: { type: "int32", id: 1 }, shape: { type: "TensorShapeProto", id: 2 } },
            },
          },
        },
        OperatorSetIdProto: {
          fields: { domain: { type: "string", id: 1 }, version: { type: "int64", id: 2 } },
        },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(descriptor);
export const ModelProto = root.lookupType("onnx.ModelProto");

export const DataType = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7 } as const;
export const AttributeType = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, FLOATS: 6, INTS: 7 } as const;

export interface TensorInit {
  name: string;
  dims: number[];
  dataType: number;
  rawData: Uint8Array;
}

const bytesOf = (a: Float32Array | Int8Array | BigInt64Array | Int32Array): Uint8Array =>
  new Uint8Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength));

export const floatTensor = (name: string, dims: number[], data: Float32Array): TensorInit => ({
  name,
  dims,
  dataType: DataType.FLOAT,
  rawData: bytesOf(data),
});
export const int8Tensor = (name: string, dims: number[], data: Int8Array): TensorInit => ({
  name,
  dims,
  dataType: DataType.INT8,
  rawData: bytesOf(data),
});
export const int64Tensor = (name: string, dims: number[], data: number[]): TensorInit => ({
  name,
  dims,
  dataType: DataType.INT64,
  rawData: bytesOf(BigInt64Array.from(data, BigInt)),
});

export const intAttr = (name: string, i: number) => ({ name, i, type: AttributeType.INT });

/** A tensor-typed graph input/output; string dims are symbolic (e.g. "batch"). */
export const valueInfo = (name: string, elemType: number, dims: (number | string)[]) => ({
  name,
  type: {
    tensorType: {
      elemType,
      shape: { dim: dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d })) },
    },
  },
});

export interface NodeInit {
  opType: string;
  input: string[];
  output: string[];
  name?: string;
  domain?: string;
  attribute?: ReturnType<typeof intAttr>[];
}

export function encodeModel(model: Record<string, unknown>): Uint8Array {
  const err = ModelProto.verify(model);
  if (err) throw new Error(`invalid ONNX model: ${err}`);
  return ModelProto.encode(ModelProto.fromObject(model)).finish();
}
