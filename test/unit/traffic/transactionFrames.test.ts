// A frame written from a distinct transaction's cached body must decode to exactly the
// transaction the source gives for that index, in every round of a cycling source.
import { describe, expect, it } from "vitest";
import { splitDelimitedFrames } from "../../../src/codec/delimited.js";
import { decodeTransactionPayload, Transaction, type TransactionInit } from "../../../src/codec/messages.js";
import { RecordBytes, TransactionFrameWriter } from "../../../src/tools/traffic/transactionFrames.js";
import { cyclingSource, type TrafficSource } from "../../../src/tools/traffic/trafficSource.js";

const items = Array.from({ length: 5 }, (_, i) => ({
  tx: {
    transactionId: `tx-é-${i}`,
    cardId: `card-${i % 2}`,
    amountMinor: 12_345 + i,
    currency: "EUR",
    merchantId: "m-1",
    mcc: 5411,
    merchantCountry: "FR",
    cardCountry: "DE",
    channel: 3,
    deviceId: i % 2 ? "" : "dev-9",
    ip: "10.1.2.3",
    eventTimeMs: 1_736_000_000_000 + i * 60_000,
    bin: "411111",
  } satisfies TransactionInit,
  isFraud: i === 3,
}));

const decodedFrames = (bytes: Buffer) => {
  const frames = splitDelimitedFrames(bytes);
  if (!frames.ok) throw new Error(frames.error.message);
  return frames.value.map((payload) => {
    const tx = decodeTransactionPayload(payload);
    if (!tx.ok) throw new Error(tx.error.message);
    return Transaction.toObject(tx.value, { longs: Number });
  });
};

describe("transaction frames", () => {
  it("decode to the source's transaction, round after round", () => {
    const source = cyclingSource("five", items);
    const writer = new TransactionFrameWriter(source);
    const out = new RecordBytes();
    const facts = Array.from({ length: 17 }, (_, i) => writer.write(i, out));
    const decoded = decodedFrames(out.take());
    expect(decoded).toHaveLength(17);
    decoded.forEach((tx, i) => {
      expect(tx).toEqual(Transaction.toObject(Transaction.create(source.at(i).tx), { longs: Number }));
      expect(writer.transactionId(i)).toBe(source.at(i).tx.transactionId);
      expect(facts[i]).toMatchObject({ cardId: tx.cardId, isFraud: i % 5 === 3 });
    });
    expect(decoded[7]!.transactionId).toBe("tx-é-2~1");
    // Every round of one distinct transaction shares its facts, so a caller can keep the
    // card's route on them.
    expect(facts[7]).toBe(facts[2]);
  });

  it("encode whole transactions from a source that cannot say what repeats", () => {
    const cycling = cyclingSource("five", items);
    const plain: TrafficSource = { description: "plain", size: 5, at: (i) => cycling.at(i) };
    const out = new RecordBytes();
    const writer = new TransactionFrameWriter(plain);
    for (let i = 0; i < 8; i++) writer.write(i, out);
    expect(decodedFrames(out.take()).map((t) => t.transactionId)).toEqual([
      "tx-é-0",
      "tx-é-1",
      "tx-é-2",
      "tx-é-3",
      "tx-é-4",
      "tx-é-0~1",
      "tx-é-1~1",
      "tx-é-2~1",
    ]);
  });

  it("grows a record past its first buffer without losing bytes", () => {
    const out = new RecordBytes();
    const chunk = Buffer.alloc(3000, 7);
    out.bytes(chunk);
    out.bytes(chunk);
    out.varint(300);
    const all = out.take();
    expect(all.length).toBe(6002);
    expect(all.subarray(6000)).toEqual(Buffer.from([0xac, 0x02]));
    expect(out.length).toBe(0);
  });
});
