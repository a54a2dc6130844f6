// Card states kept in memory (src/features/cachedCardStateStore.ts) against partitions that move:
// instance A decides every card, B joins and takes half the partitions and advances their cards,
// B leaves and A takes them back. Had A kept what it held before B joined, its later decisions on
// those cards would start from states that miss B's transactions, and differ from an audit
// replay of the topic. Every model decision must match replay, A's memory must have served reads
// after it took the partitions back, and B must have decided some of the cards in between.
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { Transaction } from "../../src/codec/messages.js";
import { ScorerChild } from "../../src/tools/scorerChild.js";
import { testEndpoints } from "./endpoints.js";
import { DecisionsCollector } from "./support/decisionsCollector.js";
import { createTestTopics, testKafka } from "./support/kafkaTestTopics.js";
import { expectReplayMatchesLive } from "./support/replayComparison.js";
import { scorerEnv } from "./support/scorerEnv.js";
import { makeTransactions, produceTransactions } from "./support/transactionTraffic.js";

const endpoints = testEndpoints();
const MODEL_DECIDED = { fallback_cause: "none" };
const CACHE_HITS = { outcome: "hit" };

const joinsOf = (scorer: ScorerChild) =>
  scorer
    .logTail(1_000)
    .split("\n")
    .filter((line) => line.includes("joined the consumer group")).length;

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe("card states in memory while partitions move between instances", () => {
  it("an instance that gets partitions back reads their cards from the store, and decides as replay does", async () => {
    const topics = await createTestTopics(endpoints.kafkaBrokers, "statecache", 4);
    const txs = makeTransactions(900, { cards: 30, prefix: "sc" });
    const phases = [txs.slice(0, 300), txs.slice(300, 600), txs.slice(600)];
    // Info: the joins are read from A's log.
    const env = scorerEnv(endpoints, topics, randomBytes(32).toString("hex"), { LOG_LEVEL: "info" });
    const decisions = new DecisionsCollector(endpoints.kafkaBrokers, topics.decisions);
    await decisions.start();
    const producer = testKafka(endpoints.kafkaBrokers).sink();
    // Paced, so no instance is asked to decide a backlog.
    const send = async (phase: readonly Transaction[], decided: number) => {
      for (let i = 0; i < phase.length; i += 15) {
        await produceTransactions(producer, topics.transactions, phase.slice(i, i + 15), 15);
        await sleep(30);
      }
      await decisions.waitForDistinct(decided, 60_000);
    };
    const a = await ScorerChild.start({ env });
    let b: ScorerChild | undefined;
    try {
      await a.withLogTail(async () => {
        await send(phases[0]!, 300);
        // Ready once joined: A has rejoined with half the partitions by then.
        b = await ScorerChild.start({ env });
        await send(phases[1]!, 600);
        const decidedByB = await b.metric("fraud_decisions_total", MODEL_DECIDED);
        await b.stop();
        b = undefined;
        // A's third join: it holds every partition again (sent before, the phase would be late).
        await waitUntil(() => joinsOf(a) >= 3, "A to rejoin after B left");
        const hitsBefore = await a.metric("fraud_card_state_cache_reads_total", CACHE_HITS);
        await send(phases[2]!, 900);
        const hitsAfter = await a.metric("fraud_card_state_cache_reads_total", CACHE_HITS);
        console.log(
          `B decided ${decidedByB} with the model; A's memory served ${hitsBefore} card reads before B left, ${hitsAfter - hitsBefore} after`,
        );
        expect(decidedByB).toBeGreaterThan(0);
        expect(hitsAfter).toBeGreaterThan(hitsBefore);
      });
    } finally {
      await b?.stop();
      await a.stop();
      await producer.close();
      await decisions.stop();
    }
    const { compared } = await expectReplayMatchesLive(
      endpoints.kafkaBrokers,
      topics.transactions,
      decisions,
      txs.length,
    );
    // The third phase's cards went through B's hands and came back: they must be compared too.
    const comparedInPhase3 = phases[2]!.filter((tx) => compared.has(tx.transactionId)).length;
    expect(comparedInPhase3).toBeGreaterThan(phases[2]!.length * 0.8);
  });
});
