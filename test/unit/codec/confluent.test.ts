import { describe, expect, it } from "vitest";
import { encodeConfluentFrame, parseConfluentFrame } from "../../../src/codec/confluent.js";

describe("Confluent wire format", () => {
  const payload = Buffer.from([0x0a, 0x02, 0x68, 0x69]);

  it("writes magic byte, big-endian schema id and the single 0 byte for message index [0]", () => {
    const framed = encodeConfluentFrame({ schemaId: 0x01020304, messageIndexes: [0], payload });
    expect([...framed]).toEqual([0, 1, 2, 3, 4, 0, 0x0a, 0x02, 0x68, 0x69]);
  });

  it("writes other message-index paths as zig-zag count then indexes", () => {
    const framed = encodeConfluentFrame({ schemaId: 7, messageIndexes: [1, 2], payload });
    expect([...framed.subarray(5, 8)]).toEqual([4, 2, 4]);
    expect(parseConfluentFrame(framed)).toMatchObject({
      ok: true,
      value: { schemaId: 7, messageIndexes: [1, 2] },
    });
  });

  it("reads back schema id, indexes and payload", () => {
    const parsed = parseConfluentFrame(
      encodeConfluentFrame({ schemaId: 4_000_000_000, messageIndexes: [0], payload }),
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.schemaId).toBe(4_000_000_000);
    expect(parsed.value.messageIndexes).toEqual([0]);
    expect(Buffer.from(parsed.value.payload).equals(payload)).toBe(true);
  });

  it("names a wrong magic byte and a header cut short", () => {
    expect(parseConfluentFrame(Buffer.from([1, 0, 0, 0, 1, 0]))).toMatchObject({
      ok: false,
      error: { kind: "bad_magic_byte", byteOffset: 0 },
    });
    expect(parseConfluentFrame(Buffer.from([0, 0, 1]))).toMatchObject({
      ok: false,
      error: { kind: "truncated_frame" },
    });
  });

  it("refuses an absurd message-index count", () => {
    expect(parseConfluentFrame(Buffer.from([0, 0, 0, 0, 1, 0x7e, 1]))).toMatchObject({
      ok: false,
      error: { kind: "bad_message_indexes" },
    });
  });
});
