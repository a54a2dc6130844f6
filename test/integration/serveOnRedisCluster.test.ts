// `serve` pointed at a Redis Cluster through REDIS_CLUSTER_NODES: a private 3-master cluster on
// spare ports, the shared broker and registry, a few hundred transactions. The model decides
// every one of them (a misrouted or CROSSSLOT-refused script would show up as fallbacks) and
// card state lands on every master.
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
import { makeTransactions, publishAndAwaitDecisions } from "./support/transactionTraffic.js";

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
    return (await node.keys(`${namespace}:state:*`)).length;
  } finally {
    node.disconnect();
  }
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
  it("decides every transaction with the model and writes card state on all three masters", async () => {
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
        },
      }),
    });
    const txs = makeTransactions(TRANSACTIONS, { cards: CARDS, prefix: "rcl" });
    try {
      await publishAndAwaitDecisions(endpoints.kafkaBrokers, topics, txs, { idleMs: 500 });
    } finally {
      await scorer.stop();
    }

    const decisions = await readWholeTopic(endpoints.kafkaBrokers, topics.decisions);
    const audit = auditDecisions(
      await readWholeTopic(endpoints.kafkaBrokers, topics.transactions),
      decisions,
    );
    expect(audit).toMatchObject({ sent: TRANSACTIONS, lost: 0 });
    // Named causes, so a failure says why the rules decided.
    expect(fallbackCauses(decisions.map((r) => r.value))).toEqual({});
    const keysPerMaster = await Promise.all(cluster.ports.map((p) => stateKeysOn(p, namespace)));
    expect(keysPerMaster.every((n) => n > 0)).toBe(true);
    expect(keysPerMaster.reduce((a, b) => a + b, 0)).toBe(CARDS);
  }, 180_000);
});
