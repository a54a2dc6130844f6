import { describe, expect, it } from "vitest";
import { joinDelimitedFrames, splitDelimitedFrames } from "../../../src/codec/delimited.js";
import {
  decodeTransactionPayload,
  encodeTransactionPayload,
  Transaction,
} from "../../../src/codec/messages.js";
import { sampleTransaction } from "../../support/transactions.js";

const encodeDelimitedWithProtobufjs = (txs: Transaction[]) =>
  Buffer.concat(txs.map((t) => Transaction.encodeDelimited(t).finish()));

describe("length-delimited framing", () => {
  const txs = [
    sampleTransaction(),
    sampleTransaction({ transactionId: "tx-2", merchantId: "m".repeat(300) }), // 2-byte length prefix
    sampleTransaction({ transactionId: "tx-3" }),
  ];

  it("writes the same bytes as protobufjs encodeDelimited (the standard delimited stream)", () => {
    const ours = joinDelimitedFrames(txs.map((t) => encodeTransactionPayload(t)));
    expect(ours.equals(encodeDelimitedWithProtobufjs(txs))).toBe(true);
  });

  it("reads every message of a stream written by encodeDelimited", () => {
    const split = splitDelimitedFrames(encodeDelimitedWithProtobufjs(txs));
    expect(split.ok).toBe(true);
    if (!split.ok) return;
    const ids = split.value.map((f) => {
      const d = decodeTransactionPayload(f);
      return d.ok ? d.value.transactionId : d.error.kind;
    });
    expect(ids).toEqual(["tx-0001", "tx-2", "tx-3"]);
  });

  it("reports a frame cut short, with its index and where it starts", () => {
    const whole = encodeDelimitedWithProtobufjs(txs);
    const firstFrameEnd = Transaction.encodeDelimited(txs[0]!).finish().length;
    const split = splitDelimitedFrames(whole.subarray(0, whole.length - 3));
    expect(split).toMatchObject({ ok: false, error: { kind: "truncated_frame", frameIndex: 2 } });
    const cutInFirst = splitDelimitedFrames(whole.subarray(0, firstFrameEnd - 1));
    expect(cutInFirst).toMatchObject({
      ok: false,
      error: { kind: "truncated_frame", frameIndex: 0, byteOffset: 0 },
    });
  });

  it("refuses a length prefix over the configured maximum before reading the payload", () => {
    const split = splitDelimitedFrames(Buffer.from([0xff, 0xff, 0x03, 1, 2, 3]), { maxFrameBytes: 1024 });
    expect(split).toMatchObject({ ok: false, error: { kind: "frame_too_large", byteOffset: 0 } });
  });

  it("refuses a length prefix that is not a 32-bit varint", () => {
    const split = splitDelimitedFrames(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x01]));
    expect(split).toMatchObject({ ok: false, error: { kind: "bad_length_prefix" } });
  });

  it("treats an empty record as an error, not as zero transactions", () => {
    expect(splitDelimitedFrames(Buffer.alloc(0))).toMatchObject({
      ok: false,
      error: { kind: "empty_record" },
    });
  });
});
