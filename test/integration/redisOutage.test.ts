// A 10 s Redis outage under steady traffic, through the scoring core as `serve` wires it (real
// model, real rules, RedisCardStateStore on a private redis-server, breakers, the deferred state
// lane, the scoring queue); Kafka is left out so what is asserted is the scorer's own doing.
import { setTimeout as sleep } from "node:timers/promises";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import {
  encodeTransactionPayload,
  FallbackCause,
  Transaction,
  type DecisionInit,
} from "../../src/codec/messages.js";
import { FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import { RedisCardStateStore } from "../../src/state/redisCardStateStore.js";
import { computeFeatureHashes } from "../../src/ingest/featureHashes.js";
import { loadModelRunner, type ModelRunner } from "../../src/model/loadModelRunner.js";
import { ruleEvaluator } from "../../src/rules/ruleEvaluator.js";
import { loadRuleSet } from "../../src/rules/ruleSet.js";
import { DeferredStateLane } from "../../src/scoring/deferredStateLane.js";
import { GuardedCall } from "../../src/scoring/guardedCall.js";
import { StateWritesInFlight } from "../../src/scoring/stateWritesInFlight.js";
import { streamPosition, systemClock } from "../../src/scoring/ports.js";
import {
  applyStateOnly,
  decideBatch,
  type ScoringContext,
  type ScoringItem,
} from "../../src/scoring/scoreBatch.js";
import { ScoringQueue } from "../../src/stream/scoringQueue.js";
import { simulatedTraffic } from "../../src/tools/traffic/trafficSource.js";
import { committedModelDir } from "../support/committedModel.js";
import { startPrivateRedis } from "../../stack/privateRedis.js";

const RATE = 200; // tx/s
const BEFORE_S = 3;
const OUTAGE_S = 10;
const AFTER_S = 4;
const BUDGET_MS = 200;
const OUTAGE_CAUSES: readonly number[] = [
  FallbackCause.FALLBACK_CAUSE_STATE_UNAVAILABLE,
  FallbackCause.FALLBACK_CAUSE_BREAKER_OPEN,
  FallbackCause.FALLBACK_CAUSE_TIMEOUT,
];

let model: ModelRunner;
beforeAll(async () => {
  model = await loadModelRunner({
    dir: committedModelDir(),
    trustedKeysDir: "models/trusted-keys",
    provider: "cpu",
    expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
  });
  await model.warmUp();
});
afterAll(async () => {
  await model?.close();
});

describe("a Redis outage under steady traffic", () => {
  it("decides every transaction inside the budget with the outage's cause, and the model is back within 2 s of Redis answering", async () => {
    const server = await startPrivateRedis();
    const port = server.port;
    // The client as `serve` configures it: no offline queue (fail fast while disconnected).
    const redis = new Redis(port, "127.0.0.1", {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 50, 250),
    });
    redis.on("error", () => {});
    const store = new RedisCardStateStore({
      redis,
      namespace: "outage",
      modelVersion: model.modelVersion,
      featureSchemaVersion: FEATURE_SCHEMA_VERSION,
      hmacKey: randomBytes(32),
    });
    // The breakers as `serve` builds them from its defaults (50 %, 1 s reset, volume 5).
    const guard = (name: string) =>
      new GuardedCall({
        name,
        timeoutMs: 40,
        errorThresholdPercentage: 50,
        resetTimeoutMs: 1_000,
        volumeThreshold: 5,
      });
    const guards = {
      stateRead: guard("state_read"),
      model: guard("model"),
      stateWrite: guard("state_write"),
    };
    const rules = ruleEvaluator(await loadRuleSet());
    const lane: DeferredStateLane = new DeferredStateLane({
      apply: (items, laneGuards) => applyStateOnly(items, { ...context, guards: laneGuards }),
    });
    const context: ScoringContext = {
      store,
      model,
      rules,
      thresholds: { review: 0.5, decline: 0.85 },
      budgetMs: BUDGET_MS,
      minBudgetForModelMs: 40,
      guards,
      clock: systemClock,
      explainTopFeatures: 3,
      stateLane: lane,
      backlog: () => queue.depth,
      backlogForLane: 0,
      writesInFlight: new StateWritesInFlight(),
    };
    const decided: DecisionInit[] = [];
    const queue = new ScoringQueue({
      maxBatch: 64,
      score: (items) => decideBatch(items, context),
      publish: async (decisions) => {
        decided.push(...decisions);
      },
    });

    const traffic = simulatedTraffic({ seed: 7, transactions: 4_000 });
    const total = RATE * (BEFORE_S + OUTAGE_S + AFTER_S);
    const arrivedAt = new Map<string, number>();
    let stoppedAtMs = Infinity;
    let restartedAtMs = Infinity;
    try {
      const started = Date.now();
      let sent = 0;
      const outage = (async () => {
        await sleep(BEFORE_S * 1000);
        await server.kill();
        stoppedAtMs = Date.now();
        await sleep(OUTAGE_S * 1000);
        await server.restart();
        restartedAtMs = Date.now(); // it answers PING from here on
      })();
      while (sent < total) {
        const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * RATE));
        const items: ScoringItem[] = [];
        for (; sent < due; sent++) {
          const tx = Transaction.create({ ...traffic.at(sent).tx, transactionId: `outage-${sent}` });
          const now = Date.now();
          arrivedAt.set(tx.transactionId, now);
          items.push({
            tx,
            payload: encodeTransactionPayload(tx),
            hashes: computeFeatureHashes(tx),
            position: streamPosition(sent, 0),
            budgetStartMs: now,
            decodeUs: 0,
          });
        }
        if (items.length > 0) void queue.submit(items);
        await sleep(5);
      }
      await outage;
      await queue.idle();
      await lane.drained();

      // Every transaction decided, once.
      expect(decided).toHaveLength(total);
      expect(new Set(decided.map((d) => d.transactionId)).size).toBe(total);

      // While Redis was down: the rules decided, naming the outage, without waiting on it.
      const during = decided.filter((d) => {
        const at = arrivedAt.get(d.transactionId!)!;
        return at > stoppedAtMs + 50 && at < restartedAtMs - 200;
      });
      expect(during.length).toBeGreaterThan(RATE * (OUTAGE_S - 1));
      expect(during.every((d) => d.fallback)).toBe(true);
      expect(new Set(during.map((d) => d.fallbackCause))).toSatisfy((causes: Set<number>) =>
        [...causes].every((c) => OUTAGE_CAUSES.includes(c)),
      );
      const inScorerUs = during.map((d) => (d.timings!.totalUs ?? 0) - (d.timings!.queueUs ?? 0));
      expect(Math.max(...inScorerUs)).toBeLessThanOrEqual(BUDGET_MS * 1000);
      // Once the breaker is open the rules decide at once: most decisions never touch Redis.
      expect(
        during.filter((d) => d.fallbackCause === FallbackCause.FALLBACK_CAUSE_BREAKER_OPEN).length,
      ).toBeGreaterThan(during.length / 2);

      // The model is back within 2 s of Redis answering.
      const firstModelDecision = decided.find(
        (d) => !d.fallback && arrivedAt.get(d.transactionId!)! >= restartedAtMs,
      );
      expect(firstModelDecision).toBeDefined();
      expect(Number(firstModelDecision!.decidedAtMs) - restartedAtMs).toBeLessThanOrEqual(2_000);
      const lastSecond = decided.filter((d) => arrivedAt.get(d.transactionId!)! >= restartedAtMs + 2_500);
      expect(lastSecond.length).toBeGreaterThan(0);
      expect(lastSecond.every((d) => !d.fallback)).toBe(true);
    } finally {
      lane.shutdown();
      for (const g of Object.values(guards)) g.shutdown();
      redis.disconnect();
      await server.stop();
    }
  }, 60_000);
});
