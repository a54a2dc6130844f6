import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fraud } from "../../src/codec/generated/fraud.js";
import { loadLabelledDataset } from "../../pipelines/dataset/labelledDataset.js";
import { readLabelsFile, writeLabelsFile, writeTransactionsFile } from "../../src/codec/transactionFiles.js";
import { simulatePayments } from "../../src/tools/simulate/simulatePayments.js";
import { writeSimulation } from "../../pipelines/simulate/writeSimulation.js";

describe("payment simulator", () => {
  it("the same seed produces the same payments, another seed different ones", () => {
    const a = simulatePayments({ seed: 5, cards: 60, days: 20 });
    const b = simulatePayments({ seed: 5, cards: 60, days: 20 });
    const c = simulatePayments({ seed: 6, cards: 60, days: 20 });
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
  });

  it("produces every fraud typology, ring devices shared across cards, and a fraud rate of 0.4–1.2 %", () => {
    const sim = simulatePayments({ seed: 9, cards: 800, days: 30 });
    const typologies = new Set(sim.map((s) => s.typology));
    expect([...typologies].sort()).toEqual([
      "account_takeover",
      "card_testing",
      "legit",
      "stolen_card_spree",
    ]);
    const fraudRate = sim.filter((s) => s.isFraud).length / sim.length;
    expect(fraudRate).toBeGreaterThan(0.004);
    expect(fraudRate).toBeLessThan(0.012);
    const cardsPerRingDevice = new Map<string, Set<string>>();
    for (const s of sim.filter((x) => x.ring)) {
      const cards = cardsPerRingDevice.get(s.tx.deviceId!) ?? new Set<string>();
      cards.add(s.tx.cardId!);
      cardsPerRingDevice.set(s.tx.deviceId!, cards);
    }
    expect(Math.max(...[...cardsPerRingDevice.values()].map((s) => s.size))).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < sim.length; i++)
      expect(sim[i]!.tx.eventTimeMs!).toBeGreaterThanOrEqual(sim[i - 1]!.tx.eventTimeMs!);
  });

  it("writes time-split delimited files whose splits do not overlap in time", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sim-"));
    try {
      const summary = await writeSimulation(
        dir,
        { seed: 2, cards: 80, days: 20 },
        { validationFromDay: 12, testFromDay: 16 },
      );
      const data = await loadLabelledDataset({ dir });
      expect(data.transactions.length).toBe(
        summary.splits.train.transactions +
          summary.splits.validation.transactions +
          summary.splits.test.transactions,
      );
      expect(data.unlabelled).toBe(0);
      const lastOf = (s: number) =>
        Math.max(
          ...data.transactions.filter((_, i) => data.split[i] === s).map((t) => Number(t.eventTimeMs)),
        );
      const firstOf = (s: number) =>
        Math.min(
          ...data.transactions.filter((_, i) => data.split[i] === s).map((t) => Number(t.eventTimeMs)),
        );
      expect(lastOf(0)).toBeLessThan(firstOf(1));
      expect(lastOf(1)).toBeLessThan(firstOf(2));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("bring-your-own labelled history", () => {
  it("a delimited Transaction file with a transaction_id,is_fraud CSV is split by time for training", async () => {
    const dir = await mkdtemp(join(tmpdir(), "byo-"));
    try {
      const txs: fraud.v1.ITransaction[] = Array.from({ length: 100 }, (_, i) => ({
        transactionId: `p-${i}`,
        cardId: `c-${i % 7}`,
        amountMinor: 1000 + i,
        currency: "EUR",
        merchantId: "m",
        eventTimeMs: 1_700_000_000_000 + (99 - i) * 60_000, // written newest first
      }));
      await writeTransactionsFile(join(dir, "history.pbd"), txs);
      await writeLabelsFile(
        join(dir, "labels.csv"),
        txs.slice(0, 95).map((t, i) => ({ transactionId: t.transactionId!, isFraud: i % 10 === 0 })),
      );
      expect((await readFile(join(dir, "labels.csv"), "utf8")).split("\n")[0]).toBe(
        "transaction_id,is_fraud",
      );
      expect((await readLabelsFile(join(dir, "labels.csv"))).get("p-10")).toBe(true);
      const data = await loadLabelledDataset({
        transactions: join(dir, "history.pbd"),
        labels: join(dir, "labels.csv"),
        validationFraction: 0.1,
        testFraction: 0.2,
      });
      expect(data.transactions).toHaveLength(100);
      expect(data.unlabelled).toBe(5);
      expect([...data.split].filter((s) => s === 2)).toHaveLength(20);
      expect([...data.split].filter((s) => s === 1)).toHaveLength(10);
      expect(data.transactions[0]!.transactionId).toBe("p-99");
      expect(data.split[0]).toBe(0);
      expect(data.split[99]).toBe(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
