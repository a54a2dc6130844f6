// Records are what a gateway would send: each transaction in its card's partition, several of
// one partition packed into one length-delimited record, a card's transactions in order, each
// record stamped with its first transaction's scheduled time.
import { describe, expect, it } from "vitest";
import { parseConfluentFrame } from "../../../src/codec/confluent.js";
import { splitDelimitedFrames } from "../../../src/codec/delimited.js";
import {
  decodeTransactionPayload,
  type Transaction,
  type TransactionInit,
} from "../../../src/codec/messages.js";
import { partitionForKey } from "../../../src/stream/keyPartition.js";
import { CardRouter } from "../../../src/tools/traffic/cardRouting.js";
import { OpenLoopSchedule } from "../../../src/tools/traffic/openLoopSchedule.js";
import {
  RecordPlanner,
  type PlannedRecord,
  type ScheduledSend,
} from "../../../src/tools/traffic/recordPlanner.js";
import { cyclingSource } from "../../../src/tools/traffic/trafficSource.js";

const CARDS = 23;
const PARTITIONS = 6;

function syntheticSource(n: number) {
  const items = Array.from({ length: n }, (_, i) => ({
    tx: {
      transactionId: `tx-${i}`,
      cardId: `card-${(i * 7) % CARDS}`,
      amountMinor: 1000 + i,
      currency: "EUR",
      merchantId: `m-${i % 5}`,
      eventTimeMs: 1_700_000_000_000 + i * 1000,
    } satisfies TransactionInit,
    isFraud: i % 10 === 0,
  }));
  return cyclingSource("synthetic", items);
}

function decodeRecord(record: PlannedRecord): Transaction[] {
  const frames = splitDelimitedFrames(record.value);
  if (!frames.ok) throw new Error(frames.error.message);
  return frames.value.map((payload) => {
    const tx = decodeTransactionPayload(payload);
    if (!tx.ok) throw new Error(tx.error.message);
    return tx.value;
  });
}

function planAll(
  options: { rate: number; count: number; perRecord?: number; lingerMs?: number; sourceSize?: number },
  onScheduled?: (s: ScheduledSend) => void,
) {
  const schedule = new OpenLoopSchedule({
    startMs: 5_000,
    ratePerSecond: options.rate,
    count: options.count,
  });
  const planner = new RecordPlanner({
    schedule,
    source: syntheticSource(options.sourceSize ?? 5_000),
    router: new CardRouter(PARTITIONS),
    ...(options.perRecord !== undefined ? { perRecord: options.perRecord } : {}),
    ...(options.lingerMs !== undefined ? { lingerMs: options.lingerMs } : {}),
    ...(onScheduled ? { onScheduled } : {}),
  });
  const records: PlannedRecord[] = [];
  // Planned in steps, as the send loop does, never past the end.
  for (let until = schedule.startMs; !planner.exhausted; until += 3) planner.planUntil(until, records);
  return { schedule, records };
}

describe("record planner", () => {
  it("makes one record per transaction, keyed by card id, stamped with its scheduled time", () => {
    const { schedule, records } = planAll({ rate: 1000, count: 40 });
    expect(records).toHaveLength(40);
    records.forEach((record, i) => {
      const [tx] = decodeRecord(record);
      expect(tx!.transactionId).toBe(`tx-${i}`);
      expect(record.key.toString()).toBe(tx!.cardId);
      expect(record.partition).toBe(partitionForKey(Buffer.from(tx!.cardId), PARTITIONS));
      expect(record.dueMs).toBe(schedule.dueAtMs(i));
      expect(record.timestampMs).toBe(schedule.timestampMs(i));
      expect(record.transactions).toBe(1);
    });
  });

  it("packs up to N transactions of one partition per record, each card's in order, records in due order", () => {
    const count = 2_000;
    const { schedule, records } = planAll({ rate: 50_000, count, perRecord: 16, lingerMs: 5 });
    const seen: Array<{ index: number; cardId: string }> = [];
    let previousDue = -Infinity;
    for (const record of records) {
      const txs = decodeRecord(record);
      expect(txs.length).toBe(record.transactions);
      expect(txs.length).toBeGreaterThan(0);
      expect(txs.length).toBeLessThanOrEqual(16);
      // Every transaction of the record belongs to the record's partition; the key is one of them.
      for (const tx of txs)
        expect(partitionForKey(Buffer.from(tx.cardId), PARTITIONS)).toBe(record.partition);
      expect(record.key.toString()).toBe(txs[0]!.cardId);
      const firstIndex = Number(txs[0]!.transactionId.slice(3));
      expect(record.timestampMs).toBe(schedule.timestampMs(firstIndex));
      expect(record.dueMs).toBeGreaterThanOrEqual(previousDue);
      previousDue = record.dueMs;
      // A record leaves only once all of its transactions are due.
      const lastIndex = Number(txs.at(-1)!.transactionId.slice(3));
      expect(record.dueMs).toBeGreaterThanOrEqual(schedule.dueAtMs(lastIndex));
      for (const tx of txs) seen.push({ index: Number(tx.transactionId.slice(3)), cardId: tx.cardId });
    }
    // Each transaction exactly once.
    expect(seen.map((s) => s.index).sort((a, b) => a - b)).toEqual(
      Array.from({ length: count }, (_, i) => i),
    );
    // In the order the records are sent, each card's transactions keep their schedule order.
    const lastIndexOfCard = new Map<string, number>();
    for (const { index, cardId } of seen) {
      expect(index).toBeGreaterThan(lastIndexOfCard.get(cardId) ?? -1);
      lastIndexOfCard.set(cardId, index);
    }
    // At 50k tx/s over 6 partitions a 5 ms window holds ~42 per partition: records fill up.
    expect(count / records.length).toBeGreaterThan(12);
  });

  it("sends a record that is not full when its linger window ends", () => {
    // 1,000 tx/s, 5 ms windows: about 5 transactions per window over 6 partitions.
    const { schedule, records } = planAll({ rate: 1000, count: 100, perRecord: 16, lingerMs: 5 });
    expect(records.every((r) => r.transactions < 16)).toBe(true);
    for (const record of records) {
      const windowStart = schedule.startMs + Math.floor((record.timestampMs - schedule.startMs) / 5) * 5;
      expect(record.dueMs).toBeLessThanOrEqual(windowStart + 5);
      expect(record.dueMs - record.timestampMs).toBeLessThanOrEqual(5);
    }
    expect(records.reduce((n, r) => n + r.transactions, 0)).toBe(100);
  });

  it("announces each transaction with its scheduled time and label before it is sent", () => {
    const announced: ScheduledSend[] = [];
    const { schedule } = planAll({ rate: 2000, count: 30, perRecord: 4 }, (s) => announced.push(s));
    expect(announced.map((s) => s.index)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    for (const s of announced) {
      expect(s.transactionId).toBe(`tx-${s.index}`);
      expect(s.scheduledMs).toBe(schedule.timestampMs(s.index));
      expect(s.isFraud).toBe(s.index % 10 === 0);
    }
  });

  it("keeps wrapped transactions apart: a source that repeats gets new ids and later event times", () => {
    const { records } = planAll({ rate: 10_000, count: 150, perRecord: 8, sourceSize: 100 });
    const txs = records.flatMap(decodeRecord);
    const ids = new Set(txs.map((t) => t.transactionId));
    expect(ids.size).toBe(150);
    expect(ids.has("tx-3~1")).toBe(true);
  });

  it("writes Confluent frames one transaction per record, and refuses to pack them", () => {
    const schedule = new OpenLoopSchedule({ startMs: 0, ratePerSecond: 1000, count: 3 });
    const common = { schedule, source: syntheticSource(10), router: new CardRouter(PARTITIONS) } as const;
    expect(
      () => new RecordPlanner({ ...common, framing: "confluent", transactionSchemaId: 7, perRecord: 2 }),
    ).toThrow(/only delimited/);
    expect(() => new RecordPlanner({ ...common, framing: "confluent" })).toThrow(/schema id/);
    const planner = new RecordPlanner({ ...common, framing: "confluent", transactionSchemaId: 7 });
    const records: PlannedRecord[] = [];
    planner.planUntil(10, records);
    expect(records).toHaveLength(3);
    const frame = parseConfluentFrame(records[0]!.value);
    expect(frame.ok && frame.value.schemaId).toBe(7);
  });
});
