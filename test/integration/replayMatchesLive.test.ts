// An audit replay of a topic the live scorer has decided reproduces the live decisions for the
// same model and rules: the same action and the same float32 score, to the last bit, although
// live and replay batch the transactions differently (the model's scores do not depend on their
// batch neighbours: test/unit/modelBatchIndependence.test.ts). The only decisions allowed to differ are the live scorer's fallbacks (late or degraded), which replay, with its
// data clock and in-memory state, never has; they are counted, not hidden.
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, it } from "vitest";
import { ScorerChild } from "../../src/tools/scorerChild.js";
import { testEndpoints } from "./endpoints.js";
import { DecisionsCollector } from "./support/decisionsCollector.js";
import { createTestTopics, testKafka } from "./support/kafkaTestTopics.js";
import { expectReplayMatchesLive } from "./support/replayComparison.js";
import { scorerEnv } from "./support/scorerEnv.js";
import { makeTransactions, produceTransactions } from "./support/transactionTraffic.js";

const endpoints = testEndpoints();

describe("audit replay against the live scorer", () => {
  it("reproduces the live decisions of a topic range for the same model and rules", async () => {
    const topics = await createTestTopics(endpoints.kafkaBrokers, "replaylive", 4);
    const txs = makeTransactions(400, { cards: 40, prefix: "rl" });
    const decisions = new DecisionsCollector(endpoints.kafkaBrokers, topics.decisions);
    await decisions.start();
    const scorer = await ScorerChild.start({
      env: scorerEnv(endpoints, topics, randomBytes(32).toString("hex")),
    });
    const producer = testKafka(endpoints.kafkaBrokers).sink();
    try {
      // Paced, so the live scorer is not asked to decide a backlog.
      for (let i = 0; i < txs.length; i += 20) {
        await produceTransactions(producer, topics.transactions, txs.slice(i, i + 20), 20);
        await sleep(20);
      }
      await decisions.waitForDistinct(txs.length, 60_000);
    } finally {
      await producer.close();
      await scorer.stop();
      await decisions.stop();
    }

    await expectReplayMatchesLive(endpoints.kafkaBrokers, topics.transactions, decisions, txs.length);
  });
});
