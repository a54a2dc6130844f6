// A static member SIGKILLed and restarted at once after the group settled from a rebalance gets
// its partitions back without a new rebalance (the broker hands the restarted instance the
// dead one's assignment). It must then decide the backlog those partitions hold: the chaos
// rebalances scenario saw a restarted member join with 4 partitions and decide nothing for 90 s.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Transaction } from "../../src/codec/messages.js";
import type { RecordSink } from "../../src/stream/kafkaPort.js";
import { ScorerChild } from "../../src/tools/scorerChild.js";
import { testEndpoints } from "./endpoints.js";
import { DecisionsCollector } from "./support/decisionsCollector.js";
import { createTestTopics, testKafka } from "./support/kafkaTestTopics.js";
import { scorerEnv } from "./support/scorerEnv.js";
import { delimitedRecord, makeTransactions } from "./support/transactionTraffic.js";

const endpoints = testEndpoints();
const hmacKeyHex = randomBytes(32).toString("hex");
let producer: RecordSink;

beforeAll(() => {
  producer = testKafka(endpoints.kafkaBrokers).sink();
});

afterAll(async () => {
  await producer?.close();
});

const publish = (topic: string, txs: readonly Transaction[]) =>
  producer.publish(txs.map((tx) => ({ topic, key: tx.cardId, value: delimitedRecord(tx) })));

it("a static member restarted into a settled group decides its partitions' backlog", async () => {
  const topics = await createTestTopics(endpoints.kafkaBrokers, "rejoin", 12);
  const envOf = (id: string) =>
    scorerEnv(endpoints, topics, hmacKeyHex, {
      KAFKA_GROUP_INSTANCE_ID: `scorer-rejoin-${id}`,
      KAFKA_SESSION_TIMEOUT_MS: "10000",
    });
  const decisions = new DecisionsCollector(endpoints.kafkaBrokers, topics.decisions);
  await decisions.start();
  const running = new Map<string, ScorerChild>();
  try {
    for (const id of ["a", "b", "c"]) running.set(id, await ScorerChild.start({ env: envOf(id) }));
    const first = makeTransactions(1_200, { cards: 300, prefix: "rejoin-first" });
    await publish(topics.transactions, first);
    await decisions.waitForDistinct(first.length, 60_000);

    // b leaves: a and c take its partitions in one rebalance, then the group is stable again.
    await running.get("b")!.stop("SIGTERM");
    running.delete("b");
    const second = makeTransactions(1_200, { cards: 300, prefix: "rejoin-second" });
    await publish(topics.transactions, second);
    await decisions.waitForDistinct(first.length + second.length, 60_000);

    // c dies and comes straight back as the same instance; what arrived meanwhile is its backlog.
    await running.get("c")!.stop("SIGKILL");
    running.delete("c");
    const backlog = makeTransactions(1_200, { cards: 300, prefix: "rejoin-backlog" });
    await publish(topics.transactions, backlog);
    const restarted = await ScorerChild.start({ env: envOf("c") });
    running.set("c", restarted);
    const readyAt = Date.now();

    const total = first.length + second.length + backlog.length;
    await decisions.waitForDistinct(total, 30_000).catch((err: unknown) => {
      throw new Error(
        `${decisions.decisions().length} of ${total} decided 30 s after the restart; restarted member's log:\n` +
          restarted.logTail(30),
        { cause: err },
      );
    });
    console.log(`backlog decided ${Date.now() - readyAt} ms after the restarted member was ready`);
    const ids = new Set(decisions.decisions().map((d) => d.transactionId));
    for (const tx of [...first, ...second, ...backlog]) expect(ids.has(tx.transactionId)).toBe(true);
  } finally {
    await Promise.all([...running.values()].map((s) => s.stop("SIGTERM")));
    await decisions.stop();
  }
}, 240_000);
