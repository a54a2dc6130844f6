// Shadow scoring on the real stack: a `serve` child runs 1.0.0 live; the test publishes 1.1.0 as
// a shadow candidate on the control topic, sends traffic, and finds a shadow decision for every
// live one except those the scorer counted as skipped. The candidate keeps state under its own
// version's keys and never appends to the shared card history. `shadow report` is then run over
// the traffic's time range and its figures are checked against what the two topics hold.
import { execFile } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Decision, Transaction } from "../../src/codec/messages.js";
import { shadowModel } from "../../src/control/promotionRecords.js";
import { actionName } from "../../src/decisions/decisionJson.js";
import { FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import { shadowTopicOf } from "../../src/ops/config.js";
import type { ShadowComparison } from "../../src/replay/shadowComparison.js";
import type { RecordSink } from "../../src/stream/kafkaPort.js";
import { KafkaControlChannel } from "../../src/stream/kafkaControlChannel.js";
import { ScorerChild } from "../../src/tools/scorerChild.js";
import { testEndpoints } from "./endpoints.js";
import { DecisionsCollector } from "./support/decisionsCollector.js";
import { createTestTopics, testKafka, type TestTopics } from "./support/kafkaTestTopics.js";
import { scorerEnv } from "./support/scorerEnv.js";
import { delimitedRecord, makeTransactions } from "./support/transactionTraffic.js";
import { manifestVersion, NEW_MODEL_DIR, OLD_MODEL_DIR, verifyWith } from "../support/signedModels.js";

const run = promisify(execFile);
const endpoints = testEndpoints();
const LIVE_DIR = resolve(OLD_MODEL_DIR);
const CANDIDATE_DIR = resolve(NEW_MODEL_DIR);
const CARDS = 100;

let topics: TestTopics;
let channel: KafkaControlChannel;
let producer: RecordSink;
let live: DecisionsCollector;
let shadow: DecisionsCollector;
let scorer: ScorerChild;
let redis: Redis;
let scratch: string;
let liveVersion: string;
let candidateVersion: string;

/** Sends the transactions at about 500 tx/s and waits until every one is decided live. */
async function flow(txs: readonly Transaction[]): Promise<void> {
  for (let i = 0; i < txs.length; i += 50) {
    const tick = sleep(100);
    await producer.publish(
      txs
        .slice(i, i + 50)
        .map((tx) => ({ topic: topics.transactions, key: tx.cardId, value: delimitedRecord(tx) })),
    );
    await tick;
  }
  await live.waitFor(
    () => (live.decisions(), txs.every((t) => live.byTransaction.has(t.transactionId))),
    90_000,
    "every transaction decided live",
  );
}

const shadowMetricTotal = async () =>
  (await scorer.metric("fraud_shadow_decisions_total")) + (await scorer.metric("fraud_shadow_skipped_total"));

beforeAll(async () => {
  [liveVersion, candidateVersion] = [await manifestVersion(LIVE_DIR), await manifestVersion(CANDIDATE_DIR)];
  scratch = await mkdtemp(join(tmpdir(), "shadow-test-"));
  topics = await createTestTopics(endpoints.kafkaBrokers, "shadow", 4, { shadow: true });
  const controlTopic = `control-${topics.transactions}`;
  channel = new KafkaControlChannel({ port: testKafka(endpoints.kafkaBrokers), topic: controlTopic });
  await channel.ensureTopic();
  producer = testKafka(endpoints.kafkaBrokers).sink();
  live = new DecisionsCollector(endpoints.kafkaBrokers, topics.decisions);
  shadow = new DecisionsCollector(endpoints.kafkaBrokers, shadowTopicOf(topics.decisions));
  await Promise.all([live.start(), shadow.start()]);
  redis = new Redis(endpoints.redisUrl);
  scorer = await ScorerChild.start({
    env: scorerEnv(endpoints, topics, randomBytes(32).toString("hex"), {
      MODEL_DIR: LIVE_DIR,
      KAFKA_CONTROL_TOPIC: controlTopic,
      LOG_LEVEL: "info",
    }),
  });
}, 120_000);

afterAll(async () => {
  await scorer?.stop("SIGTERM");
  await Promise.all([live?.stop(), shadow?.stop()]);
  await producer?.close();
  redis?.disconnect();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("shadow scoring", () => {
  const txs = makeTransactions(1_000, { cards: CARDS, prefix: `sh-${randomUUID().slice(0, 6)}` });
  let fromMs = 0;
  let toMs = 0;

  it("writes a shadow decision for every live one, minus the skips it counts, on state of its own", async () => {
    expect(liveVersion).not.toBe(candidateVersion);
    await scorer.withLogTail(async () => {
      await shadowModel(CANDIDATE_DIR, { channel, issuedBy: "test", ...verifyWith });
      await scorer.waitForMetric("fraud_promotions_total", { kind: "shadow", outcome: "switched" }, 1);
      fromMs = Date.now();
      await flow(txs);
      // Every transaction is either shadow-decided or counted as skipped (or failed).
      const deadline = Date.now() + 60_000;
      while ((await shadowMetricTotal()) < txs.length && Date.now() < deadline) await sleep(200);
      const written = await scorer.metric("fraud_shadow_decisions_total");
      const skipped = await scorer.metric("fraud_shadow_skipped_total");
      expect(written + skipped).toBe(txs.length);
      expect(await scorer.metric("fraud_shadow_skipped_total", { reason: "failed" })).toBe(0);
      await shadow.waitFor(() => shadow.decisions().length >= written, 60_000, `${written} shadow decisions`);
      toMs = Date.now() + 1;

      const liveDecisions = txs.map((t) => live.byTransaction.get(t.transactionId)!);
      const shadowDecisions = txs.flatMap((t) => shadow.byTransaction.get(t.transactionId) ?? []);
      expect(shadowDecisions.length).toBe(written);
      expect(written).toBeGreaterThan(0);
      expect(new Set(liveDecisions.map((d) => d.modelVersion))).toEqual(new Set([liveVersion]));
      expect(new Set(shadowDecisions.map((d) => d.modelVersion))).toEqual(new Set([candidateVersion]));
      console.log(`shadow: ${written} decisions, ${skipped} skipped, of ${txs.length}`);
      // 1.1.0 is 1.0.0's weights re-issued with training distributions: on state of its own,
      // rebuilt from the shared history where it skipped, it must score exactly as live
      // (where neither fell back to the rules: a live timeout on this loaded machine is not one).
      const modelDecided = shadowDecisions.filter(
        (s) => !s.fallback && !live.byTransaction.get(s.transactionId)!.fallback,
      );
      expect(modelDecided.length).toBeGreaterThan(0);
      for (const s of modelDecided) {
        const l = live.byTransaction.get(s.transactionId)!;
        expect({ id: s.transactionId, action: s.action, score: s.score }).toEqual({
          id: l.transactionId,
          action: l.action,
          score: l.score,
        });
      }

      // State: the candidate's cards sit under its own version's keys; the live model's too; and
      // the shared history holds each transaction once (the shadow never appends to it).
      const ns = `test-${topics.transactions}`;
      const card = txs[0]!.cardId;
      expect(
        await redis.exists(`${ns}:cardstate:${FEATURE_SCHEMA_VERSION}:${candidateVersion}:{${card}}`),
      ).toBe(1);
      expect(await redis.exists(`${ns}:cardstate:${FEATURE_SCHEMA_VERSION}:${liveVersion}:{${card}}`)).toBe(
        1,
      );
      const perCard = txs.filter((t) => t.cardId === card).length;
      expect(await redis.llen(`${ns}:hist:${FEATURE_SCHEMA_VERSION}:{${card}}`)).toBe(perCard);
    });
  }, 240_000);

  it("`shadow report` joins both topics over the range and its figures match them", async () => {
    await scorer.withLogTail(async () => {
      // Every tenth transaction labelled fraud: enough to give both models a recall and precision.
      const labelsFile = join(scratch, "labels.csv");
      await writeFile(
        labelsFile,
        ["transaction_id,is_fraud", ...txs.map((t, i) => `${t.transactionId},${i % 10 === 0 ? 1 : 0}`)].join(
          "\n",
        ),
      );
      const jsonFile = join(scratch, "report.json");
      const { stdout } = await run(process.execPath, [
        "bin/fraud-scorer.js",
        "shadow",
        "report",
        "--from",
        String(fromMs),
        "--to",
        String(toMs),
        "--kafka-brokers",
        endpoints.kafkaBrokers,
        "--decisions-topic",
        topics.decisions,
        "--labels",
        labelsFile,
        "--json",
        jsonFile,
      ]);
      console.log(stdout);
      const report = JSON.parse(await readFile(jsonFile, "utf8")) as ShadowComparison;

      const pairs = txs.flatMap((t, i) => {
        const s = shadow.byTransaction.get(t.transactionId);
        return s ? [{ live: live.byTransaction.get(t.transactionId)!, shadow: s, fraud: i % 10 === 0 }] : [];
      });
      expect(report.live).toBe(txs.length);
      expect(report.compared).toBe(pairs.length);
      expect(report.withoutShadow).toBe(txs.length - pairs.length);
      expect(report.liveVersions).toEqual([liveVersion]);
      expect(report.shadowVersions).toEqual([candidateVersion]);
      const action = (d: Decision) => actionName(d.action);
      const agreed = pairs.filter((p) => action(p.live) === action(p.shadow)).length;
      expect(report.agreed).toBe(agreed);
      for (const from of ["APPROVE", "REVIEW", "DECLINE"] as const)
        for (const to of ["APPROVE", "REVIEW", "DECLINE"] as const)
          expect(report.agreement[from][to]).toBe(
            pairs.filter((p) => action(p.live) === from && action(p.shadow) === to).length,
          );
      const diffs = pairs.map((p) => Math.abs(p.live.score - p.shadow.score));
      expect(report.maxAbsScoreDiff).toBeCloseTo(Math.max(...diffs), 9);
      expect(report.meanAbsScoreDiff).toBeCloseTo(diffs.reduce((a, b) => a + b, 0) / diffs.length, 9);
      expect(report.changes.changed).toBe(pairs.length - agreed);

      const flagged = (d: Decision) => action(d) !== "APPROVE";
      const truePositives = (pick: (p: (typeof pairs)[number]) => Decision) =>
        pairs.filter((p) => p.fraud && flagged(pick(p))).length;
      expect(report.labelled!.transactions).toBe(pairs.length);
      expect(report.labelled!.live.truePositives).toBe(truePositives((p) => p.live));
      expect(report.labelled!.shadow.truePositives).toBe(truePositives((p) => p.shadow));
      expect(report.labelled!.shadow.falseNegatives).toBe(
        pairs.filter((p) => p.fraud && !flagged(p.shadow)).length,
      );
      expect(stdout).toContain(`${pairs.length} transactions compared of ${txs.length}`);
    });
  }, 120_000);

  it("`model shadow --stop` stops it: later traffic gets no shadow decision", async () => {
    await scorer.withLogTail(async () => {
      await shadowModel(undefined, { channel, issuedBy: "test", ...verifyWith });
      await scorer.waitForMetric("fraud_promotions_total", { kind: "shadow", outcome: "switched" }, 2);
      const before = await shadowMetricTotal();
      const later = makeTransactions(100, { cards: 20, prefix: `sh-after-${randomUUID().slice(0, 6)}` });
      await flow(later);
      await sleep(1_000);
      expect(await shadowMetricTotal()).toBe(before);
      expect(later.some((t) => shadow.byTransaction.has(t.transactionId))).toBe(false);
    });
  }, 120_000);
});
