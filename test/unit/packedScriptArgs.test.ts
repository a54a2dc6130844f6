import { describe, expect, it } from "vitest";
import { PackedScriptArgs } from "../../src/state/packedScriptArgs.js";

describe("PackedScriptArgs", () => {
  it("writes counts and length-prefixed fields big-endian, strings as UTF-8", () => {
    const packed = new PackedScriptArgs().u32(2).field("ü{a}").field(Uint8Array.of(9, 8)).bytes();
    expect([...packed]).toEqual([0, 0, 0, 2, 0, 0, 0, 5, 0xc3, 0xbc, 0x7b, 0x61, 0x7d, 0, 0, 0, 2, 9, 8]);
  });

  it("a string field's length is its UTF-8 byte count, multi-byte characters and growth included", () => {
    for (const text of ["", "é", "😀x", "карта".repeat(100)]) {
      const packed = new PackedScriptArgs(2).field(text).u32(9).bytes();
      const utf8 = Buffer.from(text, "utf8");
      expect(packed.readUInt32BE(0)).toBe(utf8.length);
      expect(packed.subarray(4, 4 + utf8.length).equals(utf8)).toBe(true);
      expect(packed.length).toBe(4 + utf8.length + 4);
      expect(packed.readUInt32BE(4 + utf8.length)).toBe(9);
    }
  });

  it("a u64 is 8 bytes big-endian, exact up to 2^53 - 1", () => {
    for (const n of [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 52 + 12_345, Number.MAX_SAFE_INTEGER]) {
      const packed = new PackedScriptArgs(4).u64(n).bytes();
      expect(packed.length).toBe(8);
      expect(packed.readBigUInt64BE(0)).toBe(BigInt(n));
    }
  });

  it("raw bytes follow a length the caller wrote for them", () => {
    const packed = new PackedScriptArgs().u32(3).raw(Uint8Array.of(1)).raw(Uint8Array.of(2, 3)).bytes();
    expect([...packed]).toEqual([0, 0, 0, 3, 1, 2, 3]);
  });

  it("grows past its initial size without losing what was written", () => {
    const big = Buffer.alloc(10_000, 7);
    const packed = new PackedScriptArgs(8).field("abc").field(big).field("z").bytes();
    expect(packed.length).toBe(4 + 3 + 4 + 10_000 + 4 + 1);
    expect(packed.subarray(4, 7).toString()).toBe("abc");
    expect(packed.readUInt32BE(7)).toBe(10_000);
    expect(packed.subarray(11, 11 + 10_000).equals(big)).toBe(true);
    expect(packed.subarray(-5).toString("latin1")).toBe("\0\0\0\u0001z");
  });
});
