// Exactly-once decisions: `serve --exactly-once` consumes, scores and produces inside Kafka
// transactions with the consumed offsets committed in them. Killed mid-stream again and again,
// it still leaves every transaction decided once for a read_committed reader.
import { setTimeout as sleep } from "node:timers/promises";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FallbackCause } from "../../src/codec/messages.js";
import type { Transaction } from "../../src/codec/messages.js";
import { ScorerChild } from "../../src/tools/scorerChild.js";
import { startPrivateRedis } from "../../stack/privateRedis.js";
import type { RecordSink } from "../../src/stream/kafkaPort.js";
import { testEndpoints } from "./endpoints.js";
import { DecisionsCollector } from "./support/decisionsCollector.js";
import { createTestTopics, testKafka } from "./support/kafkaTestTopics.js";
import { scorerEnv } from "./support/scorerEnv.js";
import { whileScorerRuns } from "./support/scorerLog.js";
import { delimitedRecord, makeTransactions } from "./support/transactionTraffic.js";

const endpoints = testEndpoints();
let producer: RecordSink;

beforeAll(() => {
  producer = testKafka(endpoints.kafkaBrokers).sink();
});

afterAll(async () => {
  await producer?.close();
});

/** Ten records every 20 ms (500 tx/s), each stamped when it is sent. */
async function sendPaced(topic: string, txs: readonly Transaction[]): Promise<void> {
  for (let i = 0; i < txs.length; i += 10) {
    await producer.publish(
      txs.slice(i, i + 10).map((tx) => ({ topic, key: tx.cardId, value: delimitedRecord(tx) })),
    );
    await sleep(20);
  }
}

describe("exactly-once decisions", () => {
  it("five SIGKILLs mid-stream leave every transaction decided exactly once for read_committed readers", async () => {
    const topics = await createTestTopics(endpoints.kafkaBrokers, "eos", 4);
    const env = scorerEnv(endpoints, topics, randomBytes(32).toString("hex"), {
      KAFKA_EXACTLY_ONCE: "true",
      KAFKA_GROUP_INSTANCE_ID: "scorer-eos",
      KAFKA_SESSION_TIMEOUT_MS: "60000",
    });
    const txs = makeTransactions(2_000, { cards: 100, prefix: "eos" });
    const committed = new DecisionsCollector(endpoints.kafkaBrokers, topics.decisions, "read_committed");
    await committed.start();
    let scorer = await ScorerChild.start({ env });
    await whileScorerRuns(
      () => scorer,
      async () => {
        // Paced traffic with a SIGKILL at five points mid-stream, each right after a chunk was
        // sent (so the scorer is likely inside a transaction), and a new scorer started at once.
        const chunk = 10;
        const killPoints = new Set(
          [1, 2, 3, 4, 5].map((k) => Math.floor((txs.length / chunk) * (k / 6)) * chunk),
        );
        for (let i = 0; i < txs.length; i += chunk) {
          await producer.publish(
            txs
              .slice(i, i + chunk)
              .map((tx) => ({ topic: topics.transactions, key: tx.cardId, value: delimitedRecord(tx) })),
          );
          await sleep(20);
          if (killPoints.has(i)) {
            await scorer.stop("SIGKILL");
            scorer = await ScorerChild.start({ env });
          }
        }
        await committed.waitForDistinct(txs.length, 180_000);
        // Let anything a duplicate would need to show up arrive before counting.
        await sleep(2_000);
      },
      { cleanup: () => committed.stop() },
    );
    const perTransaction = new Map<string, number>();
    for (const r of committed.records) perTransaction.set(r.key, (perTransaction.get(r.key) ?? 0) + 1);
    const duplicates = [...perTransaction.values()].filter((n) => n > 1).length;
    console.log(
      `exactly-once: ${committed.records.length} committed decisions for ${txs.length} transactions, ` +
        `${duplicates} duplicated, after 5 SIGKILLs`,
    );
    expect(new Set(perTransaction.keys())).toEqual(new Set(txs.map((t) => t.transactionId)));
    expect(duplicates).toBe(0);
    expect(committed.records).toHaveLength(txs.length);
  }, 480_000); // five process restarts, each a few seconds on a quiet machine, far more on a busy one

  it("commits decisions while a stopped Redis leaves the card-state work unanswered, and the model is back once Redis continues", async () => {
    // A private Redis: this one is stopped (SIGSTOP: connections stay open, nothing answers).
    const redis = await startPrivateRedis();
    const topics = await createTestTopics(endpoints.kafkaBrokers, "eosfrozen", 4);
    const env = scorerEnv(endpoints, topics, randomBytes(32).toString("hex"), {
      KAFKA_EXACTLY_ONCE: "true",
      KAFKA_GROUP_INSTANCE_ID: "scorer-eos-frozen",
      REDIS_URL: redis.url,
    });
    const txs = makeTransactions(600, { cards: 60, prefix: "eosf" });
    const [before, during, after] = [txs.slice(0, 200), txs.slice(200, 400), txs.slice(400)];
    const committed = new DecisionsCollector(endpoints.kafkaBrokers, topics.decisions, "read_committed");
    await committed.start();
    const scorer = await ScorerChild.start({ env });
    await whileScorerRuns(
      () => scorer,
      async () => {
        await sendPaced(topics.transactions, before);
        await committed.waitForDistinct(before.length, 60_000);
        redis.freeze();
        await sendPaced(topics.transactions, during);
        // Committed while Redis is still stopped. Before, each delivery's commit waited for the card
        // state work deferred for it, which waited for Redis (up to the lane's 30 s per call).
        await committed.waitForDistinct(before.length + during.length, 20_000);
        const stopped = during.map((tx) => committed.byTransaction.get(tx.transactionId)!);
        expect(stopped.filter((d) => !d.fallback)).toEqual([]); // no state, no model: the rules'
        expect(new Set(stopped.map((d) => d.fallbackCause))).not.toContain(
          FallbackCause.FALLBACK_CAUSE_UNSPECIFIED,
        );
        redis.thaw();
        await sleep(3_000); // the lane applies what waited, the breakers close
        await sendPaced(topics.transactions, after);
        await committed.waitForDistinct(txs.length, 60_000);
        await sleep(1_000); // anything a duplicate would need
      },
      { cleanup: async () => Promise.all([committed.stop(), redis.stop()]) },
    );
    const resumed = after.filter((tx) => !committed.byTransaction.get(tx.transactionId)!.fallback);
    console.log(
      `exactly-once, Redis stopped: ${committed.records.length} committed decisions for ${txs.length} ` +
        `transactions; after it continued, the model decided ${resumed.length} of ${after.length}`,
    );
    expect(committed.records).toHaveLength(txs.length); // none twice
    expect(resumed.length).toBeGreaterThanOrEqual(after.length * 0.9);
  }, 240_000);
});
