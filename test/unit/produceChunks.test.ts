// A publish is cut into sends the broker accepts (its default message.max.bytes is 1 MiB per
// partition batch), keeping the records' order.
import { describe, expect, it } from "vitest";
import type { OutgoingRecord } from "../../src/stream/kafkaPort.js";
import { estimatedRecordBytes, produceChunks } from "../../src/stream/kafka/produceChunks.js";

const record = (i: number, valueBytes: number): OutgoingRecord => ({
  topic: "t",
  key: `k${i}`,
  value: Buffer.alloc(valueBytes),
});

describe("produce chunks", () => {
  it("keep a publish that fits in one send as it is", () => {
    const records = Array.from({ length: 100 }, (_, i) => record(i, 100));

    const chunks = produceChunks(records, 64 * 1024);

    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toBe(records);
  });

  it("cut a large publish into sends under the limit, in order, losing nothing", () => {
    const records = Array.from({ length: 20_000 }, (_, i) => record(i, 120));

    const chunks = produceChunks(records, 512 * 1024);

    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks)
      expect(chunk.reduce((n, r) => n + estimatedRecordBytes(r), 0)).toBeLessThanOrEqual(512 * 1024);
    expect(chunks.flat()).toEqual(records);
  });

  it("send a record larger than the limit on its own", () => {
    const records = [record(0, 10), record(1, 2_000), record(2, 10)];

    const chunks = produceChunks(records, 1_000);

    expect(chunks.map((c) => c.map((r) => r.key))).toEqual([["k0"], ["k1"], ["k2"]]);
  });

  it("count headers", () => {
    const plain = record(0, 10);
    const withHeaders = { ...plain, headers: { "error-kind": Buffer.alloc(100) } };

    expect(estimatedRecordBytes(withHeaders)).toBeGreaterThan(estimatedRecordBytes(plain) + 100);
  });

  it("return nothing for nothing", () => {
    expect(produceChunks([])).toEqual([]);
  });
});
