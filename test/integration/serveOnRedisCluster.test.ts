// `serve` pointed at a Redis Cluster through REDIS_CLUSTER_NODES: a private 3-master cluster on
// spare ports, the shared broker and registry, a few hundred transactions. The model decides
// every one of them (a misrouted or CROSSSLOT-refused script would show up as fallbacks) and
// card state lands on every master. Then one master is killed: only its cards fall back, the
// other masters' cards are still the model's.
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditDecisions } from "../../chaos/decisionAudit.js";
import { parseConfluentFrame } from "../../src/codec/confluent.js";
import { decodeDecisionPayload, FallbackCause } from "../../src/codec/messages.js";
import { createRunTopics, deleteRunTopics, type RunTopics } from "../../chaos/runTopics.js";
import { readWholeTopic } from "../../chaos/topicReader.js";
import { ScorerChild, scorerEnvironment } from "../../src/tools/scorerChild.js";
import { committedModelDir } from "../support/committedModel.js";
import { testEndpoints } from "./endpoints.js";
import { startPrivateRedisCluster, type PrivateRedisCluster } from "../../stack/privateRedis.js";
import { chaosPort } from "../../chaos/runTopics.js";
import { clusterSlot } from "../../src/state/redisRoundTrip.js";
import { setTimeout as sleep } from "node:timers/promises";
import {
  makeTransactions,
  produceTransactions,
  publishAndAwaitDecisions,
} from "./support/transactionTraffic.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const endpoints = testEndpoints();
const TRANSACTIONS = 300;
const CARDS = 60;

let cluster: PrivateRedisCluster;
let topics: RunTopics;

beforeAll(async () => {
  [cluster, topics] = await Promise.all([
    startPrivateRedisCluster(),
    createRunTopics(endpoints.kafkaBrokers, "rcluster", { partitions: 2 }),
  ]);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  if (topics !== undefined) await deleteRunTopics(endpoints.kafkaBrokers, topics);
});

async function stateKeysOn(port: number, namespace: string): Promise<number> {
  const node = new Redis(port, "127.0.0.1");
  try {
    return (await node.keys(`${namespace}:cardstate:*`)).length;
  } finally {
    node.disconnect();
  }
}

function decoded(value: Buffer) {
  const frame = parseConfluentFrame(value);
  const decision = frame.ok ? decodeDecisionPayload(frame.value.payload) : undefined;
  if (decision?.ok !== true) throw new Error("a decision that does not decode");
  return decision.value;
}

function fallbackCauses(values: readonly Buffer[]): Record<string, number> {
  const causes: Record<string, number> = {};
  for (const value of values) {
    const frame = parseConfluentFrame(value);
    const decision = frame.ok ? decodeDecisionPayload(frame.value.payload) : undefined;
    if (decision?.ok !== true) throw new Error("a decision that does not decode");
    if (!decision.value.fallback) continue;
    const cause = FallbackCause[decision.value.fallbackCause] ?? String(decision.value.fallbackCause);
    causes[cause] = (causes[cause] ?? 0) + 1;
  }
  return causes;
}

describe("serve on a Redis Cluster", () => {
  it("decides every transaction with the model and writes card state on all three masters; with one master killed, only its cards fall back", async () => {
    const namespace = `rcluster-${topics.transactions.slice(-8)}`;
    const scorer = await ScorerChild.start({
      root,
      env: scorerEnvironment({
        kafkaBrokers: endpoints.kafkaBrokers,
        schemaRegistryUrl: endpoints.schemaRegistryUrl,
        // Unused for its host: the seeds below are; a wrong host here proves it.
        redisUrl: "redis://127.0.0.1:1",
        topics,
        groupId: `scorer-${topics.transactions}`,
        namespace,
        modelDir: committedModelDir(),
        hmacKeyHex: randomBytes(32).toString("hex"),
        overrides: {
          REDIS_CLUSTER_NODES: cluster.ports.map((p) => `127.0.0.1:${p}`).join(","),
          // What is pinned is where state goes, not speed: 300 records at once on a shared
          // machine would spend a 200 ms budget queueing and send the rules to decide.
          BUDGET_MS: "5000",
          // What is pinned is the store's own isolation of a dead master. With the card states
          // serve keeps in memory, a card on that master is decided from memory until its first
          // write there fails (test/unit/cachedCardStateStore.test.ts: a failed or unavailable
          // write is not kept), and by the rules after it.
          STATE_CACHE_CARDS: "0",
        },
      }),
    });
    const txs = makeTransactions(TRANSACTIONS, { cards: CARDS, prefix: "rcl" });
    const afterKill = makeTransactions(TRANSACTIONS, { cards: CARDS, prefix: "rcl" }).map((tx) => ({
      ...tx,
      transactionId: `${tx.transactionId}-after-kill`,
    }));
    const slotMasters = await cluster.slotMasters();
    const KILLED = 2;
    let killedCardIds: Set<string>;
    let afterKillDecisions: ReturnType<typeof decoded>[] = [];
    try {
      await publishAndAwaitDecisions(endpoints.kafkaBrokers, topics, txs, { idleMs: 500 });
      // The first phase's decisions are counted before the kill (below, from the topic).
      await cluster.killNode(KILLED);
      killedCardIds = new Set(
        afterKill.map((tx) => tx.cardId).filter((id) => slotMasters[clusterSlot(`{${id}}`)] === KILLED),
      );
      const sink = chaosPort(endpoints.kafkaBrokers).sink();
      try {
        await produceTransactions(sink, topics.transactions, afterKill as typeof txs);
      } finally {
        await sink.close();
      }
      const deadline = Date.now() + 60_000;
      while (afterKillDecisions.length < TRANSACTIONS && Date.now() < deadline) {
        await sleep(1_000);
        afterKillDecisions = (await readWholeTopic(endpoints.kafkaBrokers, topics.decisions, { idleMs: 500 }))
          .map((r) => decoded(r.value))
          .filter((d) => d.transactionId.endsWith("-after-kill"));
      }
    } finally {
      await scorer.stop();
    }
    // One master of three down: its cards (and only they) are the rules', the rest the model's.
    expect(killedCardIds.size).toBeGreaterThan(0);
    expect(afterKillDecisions).toHaveLength(TRANSACTIONS);
    const liveFallbacks = afterKillDecisions.filter((d) => !killedCardIds.has(d.cardId) && d.fallback);
    const deadModel = afterKillDecisions.filter((d) => killedCardIds.has(d.cardId) && !d.fallback);
    expect(liveFallbacks.map((d) => FallbackCause[d.fallbackCause])).toEqual([]);
    expect(deadModel).toEqual([]);

    const decisions = (await readWholeTopic(endpoints.kafkaBrokers, topics.decisions)).filter(
      (r) => !decoded(r.value).transactionId.endsWith("-after-kill"),
    );
    const audit = auditDecisions(
      await readWholeTopic(endpoints.kafkaBrokers, topics.transactions),
      decisions,
    );
    // The topic holds both phases; only the first phase's decisions are audited here.
    expect(audit).toMatchObject({ sent: 2 * TRANSACTIONS, lost: TRANSACTIONS });
    // Named causes, so a failure says why the rules decided.
    expect(fallbackCauses(decisions.map((r) => r.value))).toEqual({});
    const live = cluster.ports.filter((_, i) => i !== KILLED);
    const keysPerLiveMaster = await Promise.all(live.map((p) => stateKeysOn(p, namespace)));
    expect(keysPerLiveMaster.every((n) => n > 0)).toBe(true);
    expect(keysPerLiveMaster.reduce((a, b) => a + b, 0)).toBe(CARDS - killedCardIds!.size);
  }, 180_000);
});
