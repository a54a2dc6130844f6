// A member that rejoins a classic group keeps reading. After the rejoin the client fetches each
// partition the member still owns again from the group's committed offset, so the member's
// uncommitted tail comes back and the source drops it (handed over already). A source that
// stopped after a full hand-over's worth of dropped records, with more in the stream's buffer,
// was never told again that records were readable: the member held its partitions and decided
// nothing more (the chaos rebalances scenario: a restarted member idle for 90 s).
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { OutgoingRecord, RecordBatch, RecordSource, SourceEvent } from "../../src/stream/kafkaPort.js";
import { testEndpoints } from "./endpoints.js";
import { testKafka } from "./support/kafkaTestTopics.js";

const VALUE = Buffer.alloc(100, 3);
const PER_PARTITION = 600;

describe("a group source across a rebalance", () => {
  const { kafkaBrokers } = testEndpoints();
  const port = testKafka(kafkaBrokers);
  const admin = port.admin();
  const sink = port.sink();
  const created: string[] = [];
  const sources: RecordSource[] = [];
  afterAll(async () => {
    for (const s of sources.reverse()) await s.close().catch(() => undefined);
    await sink.close();
    await admin.deleteTopics(created).catch(() => undefined);
    await admin.close();
  });

  /** `n` records on each of partitions 0 and 1, each value naming its round. */
  const publish = (topic: string, round: string, n: number) => {
    const records: OutgoingRecord[] = [];
    for (let i = 0; i < n; i++)
      for (const partition of [0, 1])
        records.push({ topic, partition, key: `${round}-${partition}-${i}`, value: VALUE });
    return sink.publish(records);
  };

  it("keeps handing over the partitions it still owns after dropping its uncommitted tail", async () => {
    const topic = `rejoin-${randomUUID().slice(0, 8)}`;
    await admin.createTopics([{ topic, numPartitions: 2 }]);
    created.push(topic);
    const groupId = `rejoin-${randomUUID()}`;
    // A small hand-over, so the refetched tail is many hand-overs long.
    const options = { topics: [topic], groupId, bufferedRecords: 10, sessionTimeoutMs: 6_000 };
    const seen = new Set<string>();
    /** Per partition, the offset after the last record handed over by either member. */
    const reached = new Map<number, number>();
    const note = (batches: readonly RecordBatch[]) => {
      for (const b of batches)
        for (const r of b.records) {
          seen.add(r.key!.toString());
          reached.set(b.partition, Math.max(reached.get(b.partition) ?? 0, r.offset + 1));
        }
    };
    const events: SourceEvent[] = [];
    const crashed = () => events.some((e) => e.type === "crashed");

    await publish(topic, "before", PER_PARTITION);
    const first = port.groupSource({ ...options, onEvent: (e) => events.push(e) });
    sources.push(first);
    // Each partition's first hand-over committed, the rest never: after a rejoin the client
    // fetches from there again, and all but that first hand-over is this member's uncommitted tail.
    const committed = new Set<number>();
    let firstRepeats = 0;
    const firstHandedOver = new Set<string>();
    await first.start(async (batches) => {
      note(batches);
      for (const b of batches)
        for (const r of b.records) {
          const id = `${b.partition}:${r.offset}`;
          if (firstHandedOver.has(id)) firstRepeats++;
          firstHandedOver.add(id);
        }
      const firsts = batches.filter((b) => !committed.has(b.partition));
      for (const b of firsts) committed.add(b.partition);
      await first.commit(
        firsts.map((b) => ({ topic: b.topic, partition: b.partition, offset: b.records.at(-1)!.offset + 1 })),
      );
    });
    await expect
      .poll(() => (crashed() ? -1 : seen.size), { timeout: 30_000, interval: 100 })
      .toBe(2 * PER_PARTITION);

    // A second member: the group rebalances, each member keeps or gets one partition.
    const joinedBefore = events.filter((e) => e.type === "joined").length;
    const second = port.groupSource({ ...options, onEvent: (e) => events.push(e) });
    sources.push(second);
    await second.start(async (batches) => note(batches));
    await expect
      .poll(() => events.filter((e) => e.type === "joined").length, { timeout: 30_000, interval: 100 })
      .toBeGreaterThanOrEqual(joinedBefore + 2);

    // Both partitions have an owner that reads them: each is handed over to its end, round after
    // round (a stalled member leaves its partition where the stall found it).
    for (const round of ["after-1", "after-2", "after-3"]) {
      await publish(topic, round, 50);
      const ends = new Map((await admin.watermarks(topic)).map((w) => [w.partition, w.high]));
      await expect
        .poll(() => (crashed() ? "crashed" : [0, 1].map((p) => ends.get(p)! - (reached.get(p) ?? 0))), {
          timeout: 15_000,
          interval: 100,
        })
        .toEqual([0, 0]);
    }
    expect(seen.size).toBe(2 * PER_PARTITION + 3 * 100);
    // The partition it kept was fetched again from its committed offset; none of that was
    // handed over twice.
    expect(firstRepeats).toBe(0);
  }, 90_000);
});
