// Property tests: whatever bytes arrive, the record decoder returns a value (a transaction
// list or a typed error) and never throws or hangs.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeConfluentFrame } from "../../../src/codec/confluent.js";
import type { DecodeErrorKind } from "../../../src/codec/decodeError.js";
import { joinDelimitedFrames } from "../../../src/codec/delimited.js";
import { encodeTransactionPayload } from "../../../src/codec/messages.js";
import { decodeTransactionRecord } from "../../../src/ingest/decodeTransactionRecord.js";
import { sampleTransaction } from "../../support/transactions.js";

const KINDS: readonly DecodeErrorKind[] = [
  "empty_record",
  "truncated_frame",
  "bad_length_prefix",
  "frame_too_large",
  "bad_magic_byte",
  "bad_message_indexes",
  "unknown_schema_id",
  "malformed_message",
  "missing_required_field",
  "value_out_of_range",
];
const options = { transactionSchemaIds: new Set([1]), maxFrameBytes: 64 * 1024 };

function decodesToAValue(bytes: Uint8Array): void {
  const result = decodeTransactionRecord(bytes, options);
  if (result.ok) {
    expect(result.value.length).toBeGreaterThan(0);
  } else {
    expect(KINDS).toContain(result.error.kind);
    expect(result.error.message.length).toBeGreaterThan(0);
  }
}

const validRecords = [
  joinDelimitedFrames([
    encodeTransactionPayload(sampleTransaction()),
    encodeTransactionPayload(sampleTransaction()),
  ]),
  encodeConfluentFrame({
    schemaId: 1,
    messageIndexes: [0],
    payload: encodeTransactionPayload(sampleTransaction()),
  }),
];

describe("the record decoder on hostile input", () => {
  it("never throws on random bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => decodesToAValue(bytes)),
      { numRuns: 20_000 },
    );
  });

  it("never throws on valid records with bytes flipped, cut or inserted", () => {
    const mutated = fc
      .tuple(
        fc.constantFrom(...validRecords),
        fc.array(
          fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom("flip", "cut", "insert")),
          {
            minLength: 1,
            maxLength: 6,
          },
        ),
      )
      .map(([record, edits]) => {
        let bytes = Buffer.from(record);
        for (const [at, value, op] of edits) {
          const i = at % Math.max(bytes.length, 1);
          if (op === "flip" && bytes.length > 0) bytes[i] = value;
          else if (op === "cut") bytes = bytes.subarray(0, i);
          else bytes = Buffer.concat([bytes.subarray(0, i), Buffer.from([value]), bytes.subarray(i)]);
        }
        return bytes;
      });
    fc.assert(
      fc.property(mutated, (bytes) => decodesToAValue(bytes)),
      { numRuns: 20_000 },
    );
  });

  it("decodes the unmutated records (the generators start from valid input)", () => {
    for (const record of validRecords) expect(decodeTransactionRecord(record, options).ok).toBe(true);
  });
});
