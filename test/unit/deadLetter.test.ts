import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { OutgoingRecord } from "../../src/stream/kafkaPort.js";
import { DeadLetterPublisher, DLQ_HEADERS, type DeadLetter } from "../../src/stream/deadLetter.js";

const letter = (value: Buffer, offset = 7): DeadLetter => ({
  topic: "tx",
  partition: 3,
  offset,
  key: Buffer.from("card-1"),
  value,
  timestampMs: 1_795_000_000_000,
  headers: { "trace.id": Buffer.from("abc") },
  error: { kind: "malformed_message", message: "Transaction payload does not parse" },
});

const recordSize = (r: OutgoingRecord) =>
  (r.key?.length ?? 0) +
  (r.value?.length ?? 0) +
  Object.entries(r.headers ?? {}).reduce((n, [k, v]) => n + k.length + v.length, 0);

async function published(letters: DeadLetter[], maxRecordBytes?: number) {
  const sent: OutgoingRecord[] = [];
  const truncated: DeadLetter[] = [];
  const publisher = new DeadLetterPublisher({
    publish: async (records) => void sent.push(...records),
    topic: "dlq",
    maxRecordBytes,
    onTruncated: (l) => truncated.push(l),
  });
  await publisher.publish(letters);
  return { sent, truncated };
}

describe("DeadLetterPublisher", () => {
  it("keeps a letter whole, with its reason and source, when it fits the DLQ", async () => {
    const value = Buffer.alloc(900_000, 0xff);
    const { sent, truncated } = await published([letter(value)], 2 * 1024 * 1024);
    expect(truncated).toHaveLength(0);
    expect(sent[0]!.value!.equals(value)).toBe(true);
    expect(sent[0]!.headers).toMatchObject({
      [DLQ_HEADERS.reason]: "malformed_message",
      [DLQ_HEADERS.sourcePartition]: "3",
      [DLQ_HEADERS.sourceOffset]: "7",
      "trace.id": Buffer.from("abc"),
    });
    expect(sent[0]!.headers![DLQ_HEADERS.truncated]).toBeUndefined();
  });

  it("cuts a letter over the DLQ's limit to fit, saying how long it was and its SHA-256", async () => {
    const value = Buffer.alloc(1_048_000, 0xab);
    const limit = 1_048_588;
    const { sent, truncated } = await published([letter(Buffer.from("small"), 1), letter(value, 2)], limit);
    expect(truncated.map((l) => l.offset)).toEqual([2]);
    expect(sent[0]!.value!.toString()).toBe("small");
    const cut = sent[1]!;
    expect(recordSize(cut)).toBeLessThan(limit - 512);
    expect(cut.value!.length).toBeGreaterThan(limit - 4096);
    expect(cut.value!.equals(value.subarray(0, cut.value!.length))).toBe(true);
    expect(cut.headers).toMatchObject({
      [DLQ_HEADERS.truncated]: "true",
      [DLQ_HEADERS.originalLength]: "1048000",
      [DLQ_HEADERS.originalSha256]: createHash("sha256").update(value).digest("hex"),
      [DLQ_HEADERS.sourceTopic]: "tx",
      [DLQ_HEADERS.sourceOffset]: "2",
    });
  });

  it("without a limit never cuts", async () => {
    const value = Buffer.alloc(3_000_000);
    const { sent, truncated } = await published([letter(value)]);
    expect(truncated).toHaveLength(0);
    expect(sent[0]!.value!.length).toBe(3_000_000);
  });
});
