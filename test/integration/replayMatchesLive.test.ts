// An audit replay of a topic the live scorer has decided reproduces the live decisions for the
// same model and rules: the same action and the same float32 score, to the last bit, although
// live and replay batch the transactions differently (the model's scores do not depend on their
// batch neighbours: test/unit/modelBatchIndependence.test.ts). The only decisions allowed to differ are the live scorer's fallbacks (late or degraded), which replay, with its
// data clock and in-memory state, never has; they are counted, not hidden.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { ScorerChild } from "../../src/tools/scorerChild.js";
import { committedModelDir } from "../support/committedModel.js";
import { testEndpoints } from "./endpoints.js";
import { DecisionsCollector } from "./support/decisionsCollector.js";
import { createTestTopics, testKafka } from "./support/kafkaTestTopics.js";
import { scorerEnv } from "./support/scorerEnv.js";
import { makeTransactions, produceTransactions } from "./support/transactionTraffic.js";

const run = promisify(execFile);
const endpoints = testEndpoints();

interface ReplayedLine {
  transaction_id: string;
  action: string;
  score: string;
  fallback: boolean;
}

const ACTION_NAMES = ["UNSPECIFIED", "APPROVE", "REVIEW", "DECLINE"];

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

    const dir = await mkdtemp(join(tmpdir(), "replay-live-"));
    const out = join(dir, "replayed.ndjson");
    await run(
      process.execPath,
      [
        "bin/fraud-scorer.js",
        "replay",
        "--topic",
        topics.transactions,
        "--from-time",
        "2000-01-01T00:00:00Z",
        "--to-time",
        String(Date.now() + 60_000),
        "--kafka-brokers",
        endpoints.kafkaBrokers,
        "--model-dir",
        committedModelDir(),
        "--rules-file",
        "rules/default.yaml",
        "--out",
        out,
      ],
      { maxBuffer: 1 << 24 },
    );
    const replayed = (await readFile(out, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as ReplayedLine);
    expect(replayed).toHaveLength(txs.length);

    let compared = 0;
    let liveFallbacks = 0;
    let differentScores = 0;
    for (const r of replayed) {
      const live = decisions.byTransaction.get(r.transaction_id)!;
      expect(live, r.transaction_id).toBeDefined();
      expect(r.fallback).toBe(false);
      if (live.fallback) {
        liveFallbacks++;
        continue;
      }
      compared++;
      // Replay prints the shortest decimal that reads back as the same float32.
      if (Math.fround(Number(r.score)) !== live.score) differentScores++;
      expect(Math.fround(Number(r.score)), r.transaction_id).toBe(live.score);
      expect(r.action, r.transaction_id).toBe(ACTION_NAMES[live.action]);
    }
    console.log(
      `replay vs live: ${compared} compared, ${liveFallbacks} live fallbacks left out, ${differentScores} scores differ`,
    );
    expect(compared).toBeGreaterThan(txs.length * 0.8);
  });
});
