// Shadow scoring in the core, on in-memory stores: a candidate that computes what the live model
// computes must decide exactly as live, also for cards whose earlier transactions it skipped
// (their shadow state is rebuilt from the shared history) — and it never appends to that history.
import { describe, expect, it } from "vitest";
import {
  encodeTransactionPayload,
  type DecisionInit,
  type TransactionInit,
} from "../../src/codec/messages.js";
import { MemoryCardStateStore } from "../../src/features/memoryCardStateStore.js";
import { computeFeatureHashes } from "../../src/ingest/featureHashes.js";
import { ruleEvaluator } from "../../src/rules/ruleEvaluator.js";
import { loadRuleSet } from "../../src/rules/ruleSet.js";
import { GuardedCall } from "../../src/scoring/guardedCall.js";
import { streamPosition, type CardStateStore, type Clock } from "../../src/scoring/ports.js";
import { scoreBatch, type ScoringContext, type ScoringItem } from "../../src/scoring/scoreBatch.js";
import { ShadowScoring, type ShadowSkipReason } from "../../src/scoring/shadowScoring.js";
import { fakeModel } from "../support/fakeModel.js";
import { sampleTransaction } from "../support/transactions.js";

const T0 = 1_795_000_000_000;
const clock: Clock = { nowMs: () => T0 + 5, monotonicUs: () => performance.now() * 1000 };
const guards = () => ({
  stateRead: new GuardedCall({ name: "state_read", timeoutMs: 1_000 }),
  model: new GuardedCall({ name: "model", timeoutMs: 1_000 }),
  stateWrite: new GuardedCall({ name: "state_write", timeoutMs: 1_000 }),
});

let offset = 0;
const item = (cardId: string, overrides: Partial<TransactionInit> = {}, budgetStartMs = T0): ScoringItem => {
  const n = offset++;
  const tx = sampleTransaction({
    transactionId: `tx-${n}`,
    cardId,
    amountMinor: 1_000 + ((n * 7919) % 90_000),
    merchantId: `m-${n % 7}`,
    eventTimeMs: T0 - 3_600_000 + n * 60_000,
    ...overrides,
  });
  return {
    tx,
    payload: encodeTransactionPayload(tx),
    hashes: computeFeatureHashes(tx),
    position: streamPosition(n, 0),
    budgetStartMs,
    decodeUs: 0,
  };
};

/** The candidate's own states over the live store's history, as Redis keys them. */
function candidateStore(live: MemoryCardStateStore): { store: CardStateStore; own: MemoryCardStateStore } {
  const own = new MemoryCardStateStore();
  return {
    own,
    store: {
      async readBatch(request) {
        const read = await own.readBatch(request);
        const histories = await live.readHistories(request.cardIds);
        return { ...read, histories: read.states.map((s, k) => (s ? undefined : histories[k])) };
      },
      readHistories: (cardIds) => live.readHistories(cardIds),
      writeBatch: (writes) => own.writeBatch(writes),
    },
  };
}

describe("shadow scoring", () => {
  it("decides exactly as a live model with the same function, across skipped transactions", async () => {
    const rules = ruleEvaluator(await loadRuleSet());
    const liveStore = new MemoryCardStateStore();
    const live: ScoringContext = {
      store: liveStore,
      model: fakeModel({ modelVersion: "live-1" }),
      rules,
      thresholds: { review: 0.5, decline: 0.85 },
      budgetMs: 200,
      minBudgetForModelMs: 40,
      guards: guards(),
      clock,
    };
    const candidate = { model: fakeModel({ modelVersion: "candidate-1" }), ...candidateStore(liveStore) };
    const written: DecisionInit[] = [];
    const skipped: Array<[ShadowSkipReason, number]> = [];
    const shadow = new ShadowScoring({
      candidate: () => candidate,
      context: () => ({ ...live, guards: guards() }),
      publish: async (d) => void written.push(...d),
      maxPending: 4,
      events: { skipped: (reason, n) => skipped.push([reason, n]) },
    });
    const liveDecisions = new Map<string, DecisionInit>();
    const step = async (items: ScoringItem[]) => {
      for (const d of await scoreBatch(items, live)) liveDecisions.set(d.transactionId!, d);
      shadow.offer(items);
      await shadow.idle();
    };

    await step([item("a"), item("b"), item("a")]);
    // Five at once is more than may wait: the whole batch is skipped as backlog.
    await step([item("a"), item("b"), item("c"), item("a"), item("b")]);
    // Out of budget when offered: skipped, and decided by the rules live.
    await step([item("c", {}, T0 - 190)]);
    await step([item("a"), item("b"), item("c")]);
    await step([item("c"), item("a")]);

    expect(skipped).toEqual([
      ["backlog", 5],
      ["budget", 1],
    ]);
    expect(written).toHaveLength(3 + 3 + 2);
    for (const d of written) {
      const l = liveDecisions.get(d.transactionId!)!;
      expect(d.modelVersion).toBe("candidate-1");
      expect({ tx: d.transactionId, action: d.action, score: d.score }).toEqual({
        tx: l.transactionId,
        action: l.action,
        score: l.score,
      });
    }
    // The history holds each transaction once: the candidate never appended to it.
    const histories = await liveStore.readHistories(["a", "b", "c"]);
    expect(histories.map((h) => h.length)).toEqual([6, 4, 4]);
    // And its own states are of its cards, at their last transaction's position.
    const own = await candidate.own.readBatch({ cardIds: ["a", "b", "c"], deviceTouches: [], nowMs: T0 });
    expect(own.states.every((s) => s !== undefined)).toBe(true);
  });

  it("does nothing while no candidate is shadowed", async () => {
    const offered: ShadowSkipReason[] = [];
    const shadow = new ShadowScoring({
      candidate: () => undefined,
      context: () => {
        throw new Error("not asked without a candidate");
      },
      publish: async () => {
        throw new Error("nothing to publish");
      },
      maxPending: 1,
      events: { skipped: (reason) => offered.push(reason) },
    });
    shadow.offer([item("a"), item("b")]);
    await shadow.idle();
    expect(offered).toEqual([]);
  });
});
