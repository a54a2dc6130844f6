// Dead letters as large as the input allows: a malformed record near the broker's size limit
// reaches the DLQ whole and the scorer keeps running (malformed at full scale crash-looped on
// MESSAGE_TOO_LARGE from the dead-letter publisher).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { malformedCorpus, NEAR_LIMIT_BYTES } from "../../chaos/malformedCorpus.js";
import { joinDelimitedFrames } from "../../src/codec/delimited.js";
import type { OutgoingRecord, RecordSink } from "../../src/stream/kafkaPort.js";
import { ScorerChild } from "../../src/tools/scorerChild.js";
import { testEndpoints } from "./endpoints.js";
import { TopicCollector } from "./support/decisionsCollector.js";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { ensureTopics, scorerTopicSpecs } from "../../stack/topics.js";
import { createTestTopics, testKafka, type TestTopics } from "./support/kafkaTestTopics.js";
import { scorerEnv } from "./support/scorerEnv.js";
import { whileScorerRuns } from "./support/scorerLog.js";

const endpoints = testEndpoints();
/** With its key and one header, this value leaves under 100 bytes of the input's 1,048,588. */
const AT_LIMIT_BYTES = 1_048_400;
const hmacKeyHex = randomBytes(32).toString("hex");

let producer: RecordSink;
beforeAll(() => {
  producer = testKafka(endpoints.kafkaBrokers).sink();
});
afterAll(async () => {
  await producer?.close();
});

describe("dead letters near the broker's size limit", () => {
  it("reach the DLQ whole, among thousands of small ones, and the scorer keeps running", async () => {
    const topics = await createTestTopics(endpoints.kafkaBrokers, "dlqsize", 12);
    // Besides the chaos corpus' ~1 MB records, one that just fits the input topic's default
    // limit (1 MiB + 12) and so passes it once the dead letter's headers are added.
    const atLimit = joinDelimitedFrames([Buffer.alloc(AT_LIMIT_BYTES - 3, 0xff)]);
    const corpus = [...malformedCorpus(5_000, { nearLimit: 10 }), { key: "at-limit", value: atLimit }];
    const dlq = new TopicCollector(endpoints.kafkaBrokers, topics.dlq);
    await dlq.start();
    // At info, a failure's log tail shows the scorer's assignments, rebalances and its stop.
    const env = scorerEnv(endpoints, topics, hmacKeyHex, { LOG_LEVEL: "info" });
    const scorer = await ScorerChild.start({ env });
    await whileScorerRuns(
      () => scorer,
      async () => {
        const records: OutgoingRecord[] = corpus.map((r, i) => ({
          topic: topics.transactions,
          key: r.key,
          value: r.value,
          headers: { "test.index": String(i) },
        }));
        await producer.publish(records);
        try {
          await dlq.waitFor(() => dlq.records.length >= corpus.length, 120_000, "dead letters");
        } catch (err) {
          // Once on CI (2026-12-06) the letters stopped short with nothing in the scorer's log:
          // say whether the scorer dead-lettered them (its counter, its lag) or the reader lags.
          const seen = new Set(dlq.records.map((r) => Number(r.headers["test.index"])));
          const missing = corpus.map((_, i) => i).filter((i) => !seen.has(i));
          const answer = (name: string) =>
            Promise.race([scorer.metric(name), sleep(5_000).then(() => "no answer in 5 s")]);
          (err as Error).message +=
            `\n${dlq.records.length} of ${corpus.length} letters read; missing: ${missing.slice(0, 20).join(", ")}` +
            `\nthe scorer: ${await answer("fraud_dlq_records_total")} dead-lettered, ` +
            `lag ${await answer("fraud_consumer_lag")}`;
          throw err;
        }
        const byIndex = new Map(dlq.records.map((r) => [Number(r.headers["test.index"]), r]));
        expect(byIndex.size).toBe(corpus.length);
        const large = dlq.records.filter((r) => r.value.length >= NEAR_LIMIT_BYTES - 8);
        expect(large).toHaveLength(11);
        expect(large.some((r) => r.value.equals(atLimit))).toBe(true);
        for (const letter of large)
          expect(letter.value.equals(corpus[Number(letter.headers["test.index"])]!.value)).toBe(true);
        expect(await scorer.metric("fraud_dlq_records_truncated_total")).toBe(0);
        expect(scorer.logTail(200)).not.toMatch(/"level":"fatal"/);
      },
      { cleanup: () => dlq.stop() },
    );
  });

  it("cut to fit a DLQ made elsewhere with a smaller limit, saying so, and the scorer keeps running", async () => {
    const id = `dlqcut-${randomUUID().slice(0, 8)}`;
    const topics: TestTopics = { transactions: `tx-${id}`, decisions: `dec-${id}`, dlq: `dlq-${id}` };
    const dlqLimit = 256 * 1024;
    await ensureTopics({
      kafka: testKafka(endpoints.kafkaBrokers),
      topics: scorerTopicSpecs(topics, { partitions: 2 }).map((spec) =>
        spec.topic === topics.dlq ? { ...spec, configs: { "max.message.bytes": String(dlqLimit) } } : spec,
      ),
    });
    const [large, ...small] = [...malformedCorpus(50, { nearLimit: 1 })];
    const dlq = new TopicCollector(endpoints.kafkaBrokers, topics.dlq);
    await dlq.start();
    const scorer = await ScorerChild.start({ env: scorerEnv(endpoints, topics, hmacKeyHex) });
    await whileScorerRuns(
      () => scorer,
      async () => {
        await producer.publish([{ topic: topics.transactions, key: large!.key, value: large!.value }]);
        await producer.publish(
          small.map((r) => ({ topic: topics.transactions, key: r.key, value: r.value })),
        );
        await dlq.waitFor(() => dlq.records.length >= 1 + small.length, 120_000, "dead letters");
        const cut = dlq.records.filter((r) => r.headers["dlq.truncated"] === "true");
        expect(cut).toHaveLength(1);
        const letter = cut[0]!;
        expect(letter.value.length).toBeLessThan(dlqLimit);
        expect(letter.value.equals(large!.value.subarray(0, letter.value.length))).toBe(true);
        expect(letter.headers["dlq.original.length"]).toBe(String(large!.value.length));
        expect(letter.headers["dlq.original.sha256"]).toBe(
          createHash("sha256").update(large!.value).digest("hex"),
        );
        expect(letter.headers["dlq.source.topic"]).toBe(topics.transactions);
        expect(letter.headers["dlq.source.offset"]).toBe("0");
        expect(await scorer.metric("fraud_dlq_records_truncated_total")).toBe(1);
        expect(scorer.logTail(200)).not.toMatch(/"level":"fatal"/);
      },
      { cleanup: () => dlq.stop() },
    );
  });
});
