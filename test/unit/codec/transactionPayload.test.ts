import { describe, expect, it } from "vitest";
import { decodeTransactionPayload, encodeTransactionPayload } from "../../../src/codec/messages.js";
import { sampleTransaction } from "../../support/transactions.js";

// Short string fields (currency and country codes) are decoded through a table of strings made
// once (src/codec/messages.ts): whatever the table holds, each field must read as its bytes do.
const roundTrip = (currency: string) => {
  const payload = Buffer.from(
    encodeTransactionPayload(sampleTransaction({ currency, cardCountry: currency })),
  );
  const decoded = decodeTransactionPayload(payload);
  if (!decoded.ok) throw new Error(decoded.error.message);
  return [decoded.value.currency, decoded.value.cardCountry];
};

describe("string fields of a transaction payload", () => {
  it("read back as written, codes that differ only by trailing NULs or case included", () => {
    for (const s of ["", "A", "A\u0000", "A\u0000\u0000", "a", "EUR", "eur", "DE", "D", "\u0000", "~~~"])
      expect(roundTrip(s)).toEqual([s, s]);
  });

  it("read short non-ASCII strings as UTF-8, malformed bytes as Buffer#toString does", () => {
    for (const s of ["é", "€", "ü1", "1ü"]) expect(roundTrip(s)).toEqual([s, s]);
    const raw = Buffer.from(encodeTransactionPayload(sampleTransaction({ currency: "XYZ" })));
    const at = raw.indexOf("XYZ");
    raw[at] = 0xff;
    const decoded = decodeTransactionPayload(raw);
    expect(decoded.ok && decoded.value.currency).toBe(Buffer.from([0xff, 0x59, 0x5a]).toString("utf8"));
  });

  it("read right past the number of distinct short strings the table keeps, again and again", () => {
    const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const codes: string[] = [];
    for (const a of letters)
      for (const b of letters) for (const c of letters.slice(0, 6)) codes.push(a + b + c);
    expect(codes.length).toBeGreaterThan(16_384);
    for (let round = 0; round < 2; round++)
      for (const code of codes) {
        const [currency] = roundTrip(code);
        if (currency !== code) expect(currency).toBe(code);
      }
  });
});
