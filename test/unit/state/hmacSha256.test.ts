import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { HmacSha256 } from "../../../src/state/hmacSha256.js";

describe("HmacSha256", () => {
  it("gives createHmac's bytes for framed messages, across reuse and scratch growth", () => {
    for (const keyBytes of [32, 64, 65, 100]) {
      const key = randomBytes(keyBytes);
      // A small scratch, so long messages grow it mid-message.
      const hmac = new HmacSha256(key, 8);
      for (const size of [0, 1, 55, 56, 64, 119, 120, 1000, 5000]) {
        const text = `fs:state:1:1.0.0:{card-${size}-é}`;
        const bytes = randomBytes(size);
        const position = 2 ** 40 + size;
        const positionBytes = Buffer.alloc(8);
        positionBytes.writeBigUInt64BE(BigInt(position));
        const lengthBytes = Buffer.alloc(4);
        lengthBytes.writeUInt32BE(Buffer.byteLength(text, "utf8"));
        const expected = createHmac("sha256", key)
          .update(lengthBytes)
          .update(text, "utf8")
          .update(positionBytes)
          .update(bytes)
          .digest();
        const got = hmac
          .begin()
          .u32(Buffer.byteLength(text, "utf8"))
          .utf8(text)
          .u64(position)
          .bytes(bytes)
          .digest();
        expect(Buffer.from(got).equals(expected), `key ${keyBytes} B, message ${size} B`).toBe(true);
      }
    }
  });

  it("a framed key (head | UTF-8 middle | tail) is the same MAC as the whole key length-prefixed", () => {
    const key = randomBytes(32);
    // A tiny scratch, so the key grows it while it is being framed.
    const hmac = new HmacSha256(key, 4);
    for (const cardId of ["", "c-1", "карта-é-😀", "x".repeat(300)]) {
      const whole = `fs:state:1:1.0.0:{${cardId}}`;
      const expected = Buffer.from(
        hmac.begin().u32(Buffer.byteLength(whole, "utf8")).utf8(whole).u64(7).digest(),
      );
      const head = Buffer.from("fs:state:1:1.0.0:{", "utf8");
      const got = hmac.begin().framed(head, cardId, Buffer.from("}")).u64(7).digest();
      expect(Buffer.from(got).equals(expected), JSON.stringify(cardId)).toBe(true);
    }
  });

  it("starts each message afresh after a digest or begin()", () => {
    const key = randomBytes(32);
    const hmac = new HmacSha256(key);
    hmac.bytes(Buffer.from("left over")).digest();
    hmac.bytes(Buffer.from("dropped"));
    const got = Buffer.from(hmac.begin().bytes(Buffer.from("message")).digest());
    expect(got.equals(createHmac("sha256", key).update("message").digest())).toBe(true);
  });
});
