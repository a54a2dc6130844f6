// A backlog is what a restarted scorer meets first. One fetch used to bring a whole backlog,
// the source handed all of it over in one call, and publishing it in one produce request met
// the broker's 1 MiB batch limit (MESSAGE_TOO_LARGE, not retriable): the consumer crashed, and
// would again after every restart.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { OutgoingRecord, SourceEvent } from "../../src/stream/kafkaPort.js";
import { forwardBatches } from "../../src/tools/forwardBatches.js";
import { testEndpoints } from "./endpoints.js";
import { testKafka } from "./support/kafkaTestTopics.js";

const VALUE = Buffer.alloc(200, 7);
const records = (topic: string, n: number): OutgoingRecord[] =>
  Array.from({ length: n }, (_, i) => ({ topic, key: `card-${i % 997}`, value: VALUE }));

describe("the Kafka port with a backlog", () => {
  const { kafkaBrokers } = testEndpoints();
  const port = testKafka(kafkaBrokers);
  const admin = port.admin();
  const created: string[] = [];
  const closers: (() => Promise<void>)[] = [];
  const topic = async (label: string, partitions: number) => {
    const name = `backlog-${label}-${randomUUID().slice(0, 8)}`;
    await admin.createTopics([{ topic: name, numPartitions: partitions }]);
    created.push(name);
    return name;
  };
  const total = async (name: string) => (await admin.watermarks(name)).reduce((n, p) => n + p.high, 0);
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await admin.deleteTopics(created).catch(() => undefined);
    await admin.close();
  });

  it("publishes several MiB for one partition in one call, every record once", async () => {
    const name = await topic("publish", 1);
    const sink = port.sink();
    closers.push(() => sink.close());

    await sink.publish(records(name, 15_000));

    expect(await total(name)).toBe(15_000);
  });

  it("hands a backlog over in bounded batches that pass through and commit", async () => {
    const input = await topic("in", 2);
    const output = await topic("out", 2);
    const seed = port.sink();
    closers.push(() => seed.close());
    // Seeded in small publishes, so this test pins the source's hand-overs alone.
    for (let i = 0; i < 15; i++) await seed.publish(records(input, 2_000));
    const sink = port.sink();
    closers.push(() => sink.close());
    const groupId = `backlog-${randomUUID()}`;
    const events: SourceEvent[] = [];
    const source = port.groupSource({ topics: [input], groupId, onEvent: (e) => events.push(e) });
    closers.push(() => source.close());
    let passed = 0;
    let largestHandover = 0;

    await source.start(async (batches) => {
      const forwarded = await forwardBatches(batches, output, sink, (offsets) => source.commit(offsets));
      largestHandover = Math.max(largestHandover, forwarded);
      passed += forwarded;
    });
    await expect
      .poll(() => (events.some((e) => e.type === "crashed") ? -1 : passed), {
        timeout: 60_000,
        interval: 200,
      })
      .toBe(30_000);

    expect(largestHandover).toBeLessThanOrEqual(2_048);
    expect(await total(output)).toBe(30_000);
    const committed = await admin.committedOffsets(groupId, input);
    expect([...committed.values()].reduce((n, o) => n + o, 0)).toBe(30_000);
  });
});
