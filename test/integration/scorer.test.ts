// `fraud-scorer serve` as a real process against the real broker, registry and Redis.
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import type { RecordSink } from "../../src/stream/kafkaPort.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeConfluentFrame } from "../../src/codec/confluent.js";
import { joinDelimitedFrames } from "../../src/codec/delimited.js";
import {
  Action,
  encodeTransactionPayload,
  FallbackCause,
  type Transaction,
} from "../../src/codec/messages.js";
import { SchemaRegistry, transactionProtoText } from "../../src/codec/schemaRegistry.js";
import { decodeCardState } from "../../src/features/cardStateCodec.js";
import { RedisCardStateStore } from "../../src/state/redisCardStateStore.js";
import { FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import { testEndpoints } from "./endpoints.js";
import { DecisionsCollector, TopicCollector } from "./support/decisionsCollector.js";
import { createTestTopics, testKafka, type TestTopics } from "./support/kafkaTestTopics.js";
import { committedModelVersion } from "../support/committedModel.js";
import { ScorerChild } from "../../src/tools/scorerChild.js";
import { scorerEnv as scorerEnvFor } from "./support/scorerEnv.js";
import { whileScorerRuns } from "./support/scorerLog.js";
import { startPrivateRedis } from "../../stack/privateRedis.js";
import { delimitedRecord, makeTransactions, produceTransactions } from "./support/transactionTraffic.js";

const endpoints = testEndpoints();
const hmacKeyHex = randomBytes(32).toString("hex");

const scorerEnv = (topics: TestTopics, overrides: Record<string, string> = {}) =>
  scorerEnvFor(endpoints, topics, hmacKeyHex, overrides);

/** The scorer's card-state store, as the scorer process configures it. */
const stateStore = (redis: Redis, env: Record<string, string>) =>
  new RedisCardStateStore({
    redis,
    namespace: env.REDIS_NAMESPACE!,
    modelVersion: committedModelVersion(),
    featureSchemaVersion: FEATURE_SCHEMA_VERSION,
    hmacKey: Buffer.from(hmacKeyHex, "hex"),
  });

let producer: RecordSink;

beforeAll(() => {
  producer = testKafka(endpoints.kafkaBrokers).sink();
});

afterAll(async () => {
  await producer?.close();
});

async function withScorer<T>(
  topics: TestTopics,
  env: Record<string, string>,
  body: (scorer: ScorerChild, decisions: DecisionsCollector) => Promise<T>,
): Promise<T> {
  const decisions = new DecisionsCollector(endpoints.kafkaBrokers, topics.decisions);
  await decisions.start();
  const scorer = await ScorerChild.start({ env: scorerEnv(topics, env) });
  return whileScorerRuns(
    () => scorer,
    () => body(scorer, decisions),
    { cleanup: () => decisions.stop(), logLines: 60 },
  );
}

describe("fraud-scorer serve on the real stack", () => {
  it("decides each of 10,000 transactions exactly once", async () => {
    const topics = await createTestTopics(endpoints.kafkaBrokers, "tenk", 12);
    const txs = makeTransactions(10_000, { cards: 1_000, prefix: "tenk" });
    await withScorer(topics, {}, async (_scorer, decisions) => {
      await produceTransactions(producer, topics.transactions, txs);
      const decided = await decisions.waitForDistinct(10_000, 150_000);
      const produced = new Set(txs.map((t) => t.transactionId));
      expect(decided).toHaveLength(10_000);
      expect(decided.every((d) => produced.has(d.transactionId))).toBe(true);
      // Keys are transaction ids, so consumers can deduplicate.
      expect(decisions.records.every((r) => produced.has(r.key))).toBe(true);
      expect(decided.every((d) => d.action !== Action.ACTION_UNSPECIFIED)).toBe(true);
    });
  });

  it("sends each malformed record to the DLQ with its reason and still decides every good one", async () => {
    const topics = await createTestTopics(endpoints.kafkaBrokers, "dlq");
    const good = makeTransactions(200, { cards: 20, prefix: "dlq" });
    const cardless = {
      ...good[0]!.toJSON(),
      transactionId: "bad-no-card",
      cardId: "",
    } as unknown as Transaction;
    const bad: Array<{ reason: string; value: Buffer }> = [
      { reason: "malformed_message", value: joinDelimitedFrames([Buffer.from([0x0a, 0x7f, 0x01])]) },
      { reason: "truncated_frame", value: delimitedRecord(good[1]!).subarray(0, 10) },
      { reason: "missing_required_field", value: joinDelimitedFrames([encodeTransactionPayload(cardless)]) },
      {
        reason: "unknown_schema_id",
        value: encodeConfluentFrame({
          schemaId: 987_654,
          messageIndexes: [0],
          payload: encodeTransactionPayload(good[2]!),
        }),
      },
      { reason: "empty_record", value: Buffer.alloc(0) },
    ];
    const dlq = new TopicCollector(endpoints.kafkaBrokers, topics.dlq);
    await dlq.start();
    try {
      await withScorer(topics, {}, async (_scorer, decisions) => {
        const topic = topics.transactions;
        const messages = good.map((tx) => ({ topic, key: tx.cardId, value: delimitedRecord(tx) }));
        bad.forEach((b, i) => messages.splice(20 + i * 37, 0, { topic, key: `bad-${i}`, value: b.value }));
        await producer.publish(messages);
        const decided = await decisions.waitForDistinct(good.length, 60_000);
        await dlq.waitFor(() => dlq.records.length >= bad.length, 30_000, "dead letters");
        expect(new Set(decided.map((d) => d.transactionId))).toEqual(
          new Set(good.map((t) => t.transactionId)),
        );
        const reasons = dlq.records.map((r) => r.headers["dlq.reason"]).sort();
        expect(reasons).toEqual(bad.map((b) => b.reason).sort());
        for (const letter of dlq.records) {
          expect(letter.headers["dlq.source.topic"]).toBe(topics.transactions);
          expect(Number(letter.headers["dlq.source.offset"])).toBeGreaterThanOrEqual(0);
          const original = bad.find((b) => b.reason === letter.headers["dlq.reason"])!;
          expect(letter.value.equals(original.value)).toBe(true); // original bytes kept
        }
      });
    } finally {
      await dlq.stop();
    }
  });

  it("decides a record framed with a schema id registered after it started, in its card's order", async () => {
    const topics = await createTestTopics(endpoints.kafkaBrokers, "newid");
    const txs = makeTransactions(12, { cards: 3, prefix: "newid" });
    // The same contract under a subject of its own: an id the scorer has not seen, which the
    // registry says holds fraud.v1.Transaction. The comment makes the content (so the id) new.
    const registry = new SchemaRegistry({ url: endpoints.schemaRegistryUrl });
    const newId = await registry.register(
      `${topics.transactions}-other-value`,
      `${transactionProtoText()}\n// ${randomBytes(8).toString("hex")}\n`,
    );
    const env = scorerEnv(topics);
    await withScorer(topics, {}, async (_scorer, decisions) => {
      const topic = topics.transactions;
      // Each card's first transaction carries the new id; its later ones, delimited, must wait
      // behind it (the state CAS on the offset would skip it if it were applied after them).
      await producer.publish(
        txs.map((tx, i) => ({
          topic,
          key: tx.cardId,
          value:
            i < 3
              ? encodeConfluentFrame({
                  schemaId: newId,
                  messageIndexes: [0],
                  payload: encodeTransactionPayload(tx),
                })
              : delimitedRecord(tx),
        })),
      );
      const decided = await decisions.waitForDistinct(txs.length, 60_000);
      expect(new Set(decided.map((d) => d.transactionId))).toEqual(new Set(txs.map((t) => t.transactionId)));
    });
    const redis = new Redis(endpoints.redisUrl);
    try {
      const cardIds = [...new Set(txs.map((t) => t.cardId))];
      const { states } = await stateStore(redis, env).readBatch({
        cardIds,
        deviceTouches: [],
        nowMs: Date.now(),
      });
      cardIds.forEach((cardId, k) => {
        expect(states[k], `state of ${cardId}`).toBeDefined();
        expect(decodeCardState(states[k]!.bytes).txCount, `transactions applied to ${cardId}`).toBe(4);
      });
    } finally {
      redis.disconnect();
    }
  });

  it("keeps deciding by rules inside the budget while Redis is down, and returns to the model when it is back", async () => {
    const topics = await createTestTopics(endpoints.kafkaBrokers, "redisdown");
    const redis = await startPrivateRedis();
    const redisPort = redis.port;
    const phase = (name: string, n: number) => makeTransactions(n, { cards: 30, prefix: `rd-${name}` });
    const [before, during, after] = [phase("a", 150), phase("b", 150), phase("c", 150)];
    try {
      await withScorer(
        topics,
        { REDIS_URL: `redis://127.0.0.1:${redisPort}` },
        async (_scorer, decisions) => {
          // One decision first, so phase A does not wait on the consumer's first fetch.
          await produceTransactions(producer, topics.transactions, phase("warm", 1));
          await decisions.waitForDistinct(1, 60_000);
          await produceTransactions(producer, topics.transactions, before, 10);
          await decisions.waitForDistinct(151, 60_000);
          const byId = () => decisions.byTransaction;
          // The model path is live (how many of these are model decisions depends on how loaded
          // the machine is: late ones are the rules', by design).
          expect(before.some((t) => byId().get(t.transactionId)?.fallback === false)).toBe(true);

          await redis.kill();
          await produceTransactions(producer, topics.transactions, during, 10);
          await decisions.waitForDistinct(301, 60_000);
          const degraded = during.map((t) => byId().get(t.transactionId)!);
          expect(degraded.every((d) => d.fallback)).toBe(true);
          // Each says why the rules decided: the store, or (on a machine loaded by the rest of the
          // suite) a transaction that waited in the queue past what the model needs, as in phase A.
          // None may say the model failed or a cause the outage cannot produce.
          const causes = new Set(degraded.map((d) => d.fallbackCause as number));
          for (const cause of causes) {
            expect([
              FallbackCause.FALLBACK_CAUSE_STATE_UNAVAILABLE,
              FallbackCause.FALLBACK_CAUSE_TIMEOUT,
              FallbackCause.FALLBACK_CAUSE_BREAKER_OPEN,
              FallbackCause.FALLBACK_CAUSE_BUDGET_EXHAUSTED,
            ]).toContain(cause);
          }
          // The outage itself was seen: at least one was decided by the rules for the store's sake.
          const storeCaused = degraded.filter(
            (d) => d.fallbackCause !== FallbackCause.FALLBACK_CAUSE_BUDGET_EXHAUSTED,
          ).length;
          expect(storeCaused).toBeGreaterThan(0);
          // Decided without waiting on the dead store: the time spent in the scorer after the
          // queue is a small part of the 200 ms budget. (End-to-end latency, queue included,
          // depends on the machine's load and is measured by the benchmarks, not asserted here.)
          const inScorerUs = degraded.map(
            (d) => (d.timings?.totalUs ?? Infinity) - (d.timings?.queueUs ?? 0),
          );
          expect(Math.max(...inScorerUs)).toBeLessThan(200_000);
          // The reads failed at once rather than waiting out a timeout (up to the ~160 ms of
          // budget left): their median is far below that, even on a machine loaded by the rest
          // of the suite, where one read's wall time can include a long event-loop turn.
          const stateReadsUs = degraded.map((d) => d.timings?.stateReadUs ?? Infinity).sort((a, b) => a - b);
          expect(stateReadsUs[Math.floor(stateReadsUs.length / 2)]).toBeLessThan(50_000);

          await redis.restart();
          await sleep(6_000); // breakers' reset timeout (5 s)
          await produceTransactions(producer, topics.transactions, after, 10);
          await decisions.waitForDistinct(451, 60_000);
          const recovered = after.map((t) => byId().get(t.transactionId)!);
          expect(recovered.some((d) => !d.fallback)).toBe(true);
          const all = [...before, ...during, ...after].map((t) => t.transactionId);
          expect(all.every((id) => byId().has(id))).toBe(true);
        },
      );
    } finally {
      await redis.stop();
    }
  });

  it("after a SIGKILL and restart every transaction is decided and no card state applied one twice", async () => {
    const topics = await createTestTopics(endpoints.kafkaBrokers, "sigkill");
    const txs = makeTransactions(4_000, { cards: 40, prefix: "kill" });
    const env = scorerEnv(topics);
    const decisions = new DecisionsCollector(endpoints.kafkaBrokers, topics.decisions);
    await decisions.start();
    try {
      const first = await ScorerChild.start({ env });
      const producing = produceTransactions(producer, topics.transactions, txs, 50);
      await decisions.waitFor(() => decisions.decisions().length >= 800, 60_000, "some decisions");
      await first.stop("SIGKILL");
      await producing;
      const second = await ScorerChild.start({ env });
      try {
        await decisions.waitForDistinct(4_000, 120_000);
      } finally {
        await second.stop("SIGTERM");
      }
      expect(decisions.decisions()).toHaveLength(4_000);

      const redis = new Redis(endpoints.redisUrl);
      try {
        const store = stateStore(redis, env);
        const cardIds = [...new Set(txs.map((t) => t.cardId))];
        const { states } = await store.readBatch({ cardIds, deviceTouches: [], nowMs: Date.now() });
        const perCard = new Map<string, number>();
        for (const t of txs) perCard.set(t.cardId, (perCard.get(t.cardId) ?? 0) + 1);
        cardIds.forEach((cardId, k) => {
          const stored = states[k];
          expect(stored, `state of ${cardId}`).toBeDefined();
          // Each transaction applied exactly once: records replayed after the restart were
          // skipped by the state CAS, and none was forgotten (offsets are committed only after
          // their state work, even work deferred by a slow Redis, has landed).
          expect(decodeCardState(stored!.bytes).txCount, `transactions applied to ${cardId}`).toBe(
            perCard.get(cardId),
          );
        });
      } finally {
        redis.disconnect();
      }
    } finally {
      await decisions.stop();
    }
  });

  it("treats a tampered state value as absent, counts it, rebuilds it, and decides as if untouched", async () => {
    const topics = await createTestTopics(endpoints.kafkaBrokers, "tamper");
    // Twin cards: the same history on two card ids; one's stored state gets tampered with.
    const startMs = Date.now() - 600_000;
    const a = makeTransactions(6, { cards: 1, prefix: "tamper-a", startMs });
    const b = makeTransactions(6, { cards: 1, prefix: "tamper-b", startMs });
    await withScorer(topics, {}, async (scorer, decisions) => {
      await produceTransactions(producer, topics.transactions, [...a.slice(0, 5), ...b.slice(0, 5)]);
      await decisions.waitForDistinct(10, 60_000);
      const redis = new Redis(endpoints.redisUrl);
      try {
        const stateKey = stateStore(redis, scorerEnv(topics)).stateKey(a[0]!.cardId);
        const value = await redis.getBuffer(stateKey);
        expect(value, `state under ${stateKey}`).not.toBeNull();
        value![8] = value![8]! ^ 0xff; // the first state byte, after the position
        await redis.set(stateKey, value!, "KEEPTTL");
      } finally {
        redis.disconnect();
      }
      await produceTransactions(producer, topics.transactions, [a[5]!, b[5]!]);
      await decisions.waitForDistinct(12, 60_000);
      expect(await scorer.metric("fraud_card_state_total", { outcome: "tampered" })).toBeGreaterThanOrEqual(
        1,
      );
      expect(await scorer.metric("fraud_card_state_total", { outcome: "rebuild" })).toBeGreaterThanOrEqual(1);
      const tampered = decisions.byTransaction.get(a[5]!.transactionId)!;
      const intact = decisions.byTransaction.get(b[5]!.transactionId)!;
      expect(tampered.fallback).toBe(false);
      expect(tampered.action).toBe(intact.action);
      expect(Math.abs(tampered.score - intact.score)).toBeLessThan(1e-4);
    });
  });
});
