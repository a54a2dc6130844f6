// scoreBatch with the committed signed model on ONNX Runtime, the in-memory card-state store
// and the default rules: the scoring core's behaviour without Kafka or Redis.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Channel, FallbackCause, Transaction, type TransactionInit } from "../../src/codec/messages.js";
import { decodeCardState } from "../../src/features/cardStateCodec.js";
import { MemoryCardStateStore } from "../../src/features/memoryCardStateStore.js";
import { FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import { computeFeatureHashes } from "../../src/ingest/featureHashes.js";
import { loadModelRunner, type ModelRunner } from "../../src/model/loadModelRunner.js";
import { ruleEvaluator } from "../../src/rules/ruleEvaluator.js";
import { loadRuleSet } from "../../src/rules/ruleSet.js";
import { DeferredStateLane } from "../../src/scoring/deferredStateLane.js";
import { GuardedCall } from "../../src/scoring/guardedCall.js";
import type { CardStateStore, Clock, ModelStepper, RuleEvaluator } from "../../src/scoring/ports.js";
import { streamPosition } from "../../src/scoring/ports.js";
import { StateWritesInFlight } from "../../src/scoring/stateWritesInFlight.js";
import {
  applyStateOnly,
  decideBatch,
  scoreBatch,
  type ScoringContext,
  type ScoringItem,
} from "../../src/scoring/scoreBatch.js";
import { committedModelDir } from "../support/committedModel.js";
import { encodeTransactionPayload } from "../../src/codec/messages.js";

const T0 = 1_795_000_000_000;
let model: ModelRunner;
let rules: RuleEvaluator;

beforeAll(async () => {
  model = await loadModelRunner({
    dir: committedModelDir(),
    trustedKeysDir: "models/trusted-keys",
    provider: "cpu",
    expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
  });
  rules = ruleEvaluator(await loadRuleSet());
});

afterAll(async () => {
  await model?.close();
});

/** Wall clock fixed at `nowMs` (record timestamps are on it); monotonic clock real. */
const fixedClock = (nowMs: number): Clock => ({
  nowMs: () => nowMs,
  monotonicUs: () => performance.now() * 1000,
});

const guards = (timeoutMs = 1_000) => ({
  stateRead: new GuardedCall({ name: "state_read", timeoutMs }),
  model: new GuardedCall({ name: "model", timeoutMs }),
  stateWrite: new GuardedCall({ name: "state_write", timeoutMs }),
});

function context(overrides: Partial<ScoringContext> = {}): ScoringContext {
  return {
    store: new MemoryCardStateStore(),
    model,
    rules,
    thresholds: { review: 0.5, decline: 0.85 },
    budgetMs: 200,
    minBudgetForModelMs: 40,
    guards: guards(),
    clock: fixedClock(T0 + 5),
    explainTopFeatures: 3,
    ...overrides,
  };
}

let offset = 0;
function item(overrides: Partial<TransactionInit> = {}, budgetStartMs = T0): ScoringItem {
  const tx = Transaction.create({
    transactionId: `tx-${offset}`,
    cardId: "card-1",
    amountMinor: 4_200,
    currency: "EUR",
    merchantId: "m-grocer",
    mcc: 5411,
    merchantCountry: "DE",
    cardCountry: "DE",
    channel: Channel.CHANNEL_CONTACTLESS,
    eventTimeMs: T0 - 60_000 + offset * 1_000,
    ...overrides,
  });
  const position = streamPosition(offset++, 0);
  return {
    tx,
    payload: encodeTransactionPayload(tx),
    hashes: computeFeatureHashes(tx),
    position,
    budgetStartMs,
    decodeUs: 3,
  };
}

const history = (cardId: string, n: number) =>
  Array.from({ length: n }, (_, i) => item({ cardId, amountMinor: 1_000 + i * 350 }));

describe("scoreBatch", () => {
  it("decides every transaction with the model when state and model answer", async () => {
    const items = [item({ cardId: "a" }), item({ cardId: "b" }), item({ cardId: "c" })];
    const decisions = await scoreBatch(items, context());
    expect(decisions.map((d) => d.transactionId)).toEqual(items.map((i) => i.tx.transactionId));
    for (const d of decisions) {
      expect(d.fallback).toBe(false);
      expect(d.score).toBeGreaterThanOrEqual(0);
      expect(d.score).toBeLessThanOrEqual(1);
      expect(d.modelVersion).toBe(model.modelVersion);
      expect(d.rulesVersion).toBe(rules.version);
      expect(d.timings?.totalUs).toBeGreaterThan(0);
    }
  });

  it("steps a card seen twice in one batch in order, as if the two came in separate batches", async () => {
    const [first, second] = history("twice", 2);
    const together = await scoreBatch([first!, second!], context());
    const store = new MemoryCardStateStore();
    const apart = [
      ...(await scoreBatch([first!], context({ store }))),
      ...(await scoreBatch([second!], context({ store }))),
    ];
    expect(together.map((d) => d.score)).toEqual(apart.map((d) => d.score));
    expect(together[0]!.score).not.toBe(together[1]!.score);
  });

  it("carries card state between batches and applies a replayed position only once", async () => {
    const store = new MemoryCardStateStore();
    const items = history("replayed", 3);
    for (const i of items) await scoreBatch([i], context({ store }));
    await scoreBatch([items[2]!], context({ store })); // the same record again, after a crash
    const { states } = await store.readBatch({ cardIds: ["replayed"], deviceTouches: [], nowMs: T0 });
    expect(decodeCardState(states[0]!.bytes).txCount).toBe(3);
    expect(states[0]!.position).toBe(items[2]!.position);
  });

  it("rebuilds lost state from the card's history and scores as if nothing was lost", async () => {
    const intact = new MemoryCardStateStore();
    const lost = new MemoryCardStateStore();
    const items = history("rebuilt", 6);
    for (const i of items.slice(0, 5)) {
      await scoreBatch([i], context({ store: intact }));
      await scoreBatch([i], context({ store: lost }));
    }
    // Forget the state but keep the history, as after a model promotion or a tampered value.
    const forgetful: CardStateStore = {
      readBatch: async (req) => {
        const read = await lost.readBatch(req);
        return { ...read, states: read.states.map(() => undefined) };
      },
      readHistories: (ids) => lost.readHistories(ids),
      writeBatch: (writes) => lost.writeBatch(writes),
    };
    const outcomes: string[] = [];
    const [fromIntact] = await scoreBatch([items[5]!], context({ store: intact }));
    const [fromRebuilt] = await scoreBatch(
      [items[5]!],
      context({ store: forgetful, events: { stateOutcome: (o) => outcomes.push(o) } }),
    );
    expect(outcomes).toContain("rebuild");
    expect(Math.abs(fromRebuilt!.score! - fromIntact!.score!)).toBeLessThan(1e-5);
  });

  it("hands transactions with too little budget left to the rules", async () => {
    const late = item({ cardId: "late" }, T0 - 190); // 195 ms of 200 spent
    const [d] = await scoreBatch([late], context());
    expect(d!.fallback).toBe(true);
    expect(d!.fallbackCause).toBe(FallbackCause.FALLBACK_CAUSE_BUDGET_EXHAUSTED);
  });

  it("falls back to rules with the cause when the state store fails, times out, or its breaker is open", async () => {
    const failing: CardStateStore = {
      readBatch: () => Promise.reject(new Error("connection refused")),
      readHistories: () => Promise.reject(new Error("connection refused")),
      writeBatch: () => Promise.reject(new Error("connection refused")),
    };
    const hanging: CardStateStore = { ...failing, readBatch: () => new Promise(() => {}) };
    const g = guards(20);
    const causes: number[] = [];
    for (let n = 0; n < 8; n++) {
      const [d] = await scoreBatch([item({ cardId: `f-${n}` })], context({ store: failing, guards: g }));
      expect(d!.fallback).toBe(true);
      causes.push(d!.fallbackCause as number);
    }
    expect(causes[0]).toBe(FallbackCause.FALLBACK_CAUSE_STATE_UNAVAILABLE);
    expect(causes.at(-1)).toBe(FallbackCause.FALLBACK_CAUSE_BREAKER_OPEN);
    const [timedOut] = await scoreBatch(
      [item({ cardId: "slow" })],
      context({ store: hanging, guards: guards(20) }),
    );
    expect(timedOut!.fallbackCause).toBe(FallbackCause.FALLBACK_CAUSE_TIMEOUT);
  });

  it("runs a half-open breaker's trial read beside the batch, which the rules decide at once; its answer brings the model back", async () => {
    const store = new MemoryCardStateStore();
    let mode: "fail" | "hold" | "pass" = "fail";
    const held: Array<() => void> = [];
    const trials: Array<Parameters<CardStateStore["readBatch"]>[0]> = [];
    const flaky: CardStateStore = {
      readBatch: (request) => {
        if (mode === "fail") return Promise.reject(new Error("connection refused"));
        if (mode === "pass") return store.readBatch(request);
        trials.push(request);
        return new Promise((resolve) => held.push(() => resolve(store.readBatch(request))));
      },
      readHistories: (cardIds) => store.readHistories(cardIds),
      writeBatch: (writes) => store.writeBatch(writes),
    };
    const g = {
      ...guards(),
      stateRead: new GuardedCall({
        name: "state_read",
        timeoutMs: 1_000,
        resetTimeoutMs: 50,
        volumeThreshold: 1,
      }),
    };
    const ctx = context({ store: flaky, guards: g });
    await scoreBatch([item({ cardId: "t-0" })], ctx);
    expect(g.stateRead.state).toBe("open");
    await sleep(80);
    expect(g.stateRead.trialDue).toBe(true);

    mode = "hold";
    // Decided while the trial read is still unanswered: nothing waited for it.
    const [during] = await scoreBatch([item({ cardId: "t-1", deviceId: "dev-9" })], ctx);
    expect(during!.fallbackCause).toBe(FallbackCause.FALLBACK_CAUSE_BREAKER_OPEN);
    expect(trials).toHaveLength(1);
    expect(trials[0]).toMatchObject({ cardIds: ["t-1"], deviceTouches: [] });
    expect(held).toHaveLength(1);

    mode = "pass";
    held[0]!();
    await sleep(0);
    expect(g.stateRead.state).toBe("closed");
    const [after] = await scoreBatch([item({ cardId: "t-2" })], ctx);
    expect(after!.fallback).toBe(false);
  });

  it("on a store with one dead node, the rules decide only that node's cards, and the breaker stays closed", async () => {
    const store = new MemoryCardStateStore();
    // Cards named dead-* live on the failed node: the store reports them per card, as the Redis
    // store does for one master of a Cluster down, and writes nothing of theirs.
    const isDead = (cardId: string) => cardId.startsWith("dead-");
    const oneNodeDown: CardStateStore = {
      readBatch: async (req) => {
        const read = await store.readBatch(req);
        const unavailable = req.cardIds.flatMap((cardId, k) => (isDead(cardId) ? [k] : []));
        return {
          ...read,
          states: read.states.map((s, k) => (unavailable.includes(k) ? undefined : s)),
          unavailable,
        };
      },
      readHistories: (ids) => store.readHistories(ids),
      writeBatch: async (writes) => {
        const outcomes = await store.writeBatch(writes.filter((w) => !isDead(w.cardId)));
        return writes.map((w) => (isDead(w.cardId) ? "unavailable" : outcomes.shift()!));
      },
    };
    const base = context({ store: oneNodeDown, guards: guards() });
    const deferred: string[] = [];
    const stateLane = new DeferredStateLane({
      apply: (items, laneGuards) => {
        deferred.push(...items.map((i) => i.tx.cardId));
        return applyStateOnly(items, { ...base, guards: laneGuards });
      },
    });
    const ctx: ScoringContext = { ...base, stateLane };
    for (let round = 0; round < 10; round++) {
      const decisions = await scoreBatch(
        [item({ cardId: `live-${round}` }), item({ cardId: `dead-${round}` })],
        ctx,
      );
      expect(decisions.map((d) => d.fallbackCause)).toEqual([
        FallbackCause.FALLBACK_CAUSE_UNSPECIFIED,
        FallbackCause.FALLBACK_CAUSE_STATE_UNAVAILABLE,
      ]);
      // The dead node's card alone in a batch is not a store outage either.
      const [alone] = await scoreBatch([item({ cardId: `dead-alone-${round}` })], ctx);
      expect(alone!.fallbackCause).toBe(FallbackCause.FALLBACK_CAUSE_STATE_UNAVAILABLE);
    }
    expect(base.guards.stateRead.state).toBe("closed");
    await stateLane.drained();
    expect(deferred.every(isDead)).toBe(true);
    const { states } = await store.readBatch({ cardIds: ["live-9", "dead-9"], deviceTouches: [], nowMs: T0 });
    expect(decodeCardState(states[0]!.bytes).txCount).toBe(1);
    expect(states[1]).toBeUndefined();
    stateLane.shutdown();
  });

  it("tells the lane when a batch is decided live, and not when a backlog's batch is handed to it", async () => {
    const base = context();
    const stateLane = new DeferredStateLane({
      apply: (items, laneGuards) => applyStateOnly(items, { ...base, guards: laneGuards }),
    });
    const live = vi.spyOn(stateLane, "liveBatchDecided");
    const ctx: ScoringContext = { ...base, stateLane, backlog: () => 50_000, backlogForLane: 10_000 };
    // Late through and through, with a backlog behind it: the lane's, decided by the rules.
    const late = await scoreBatch(
      [item({ cardId: "old-1" }, T0 - 10_000), item({ cardId: "old-2" }, T0 - 10_000)],
      ctx,
    );
    expect(late.every((d) => d.fallbackCause === FallbackCause.FALLBACK_CAUSE_BUDGET_EXHAUSTED)).toBe(true);
    expect(live).not.toHaveBeenCalled();
    const [fresh] = await scoreBatch([item({ cardId: "fresh" })], ctx);
    expect(fresh!.fallback).toBe(false);
    expect(live).toHaveBeenCalledTimes(1);
    await stateLane.drained();
    stateLane.shutdown();
  });

  it("decides by rules when a state read outlasts the budget, and still applies the state later, in order", async () => {
    const store = new MemoryCardStateStore();
    let slow = true;
    const sometimesSlow: CardStateStore = {
      readBatch: async (req) => {
        if (slow) await sleep(120);
        return store.readBatch(req);
      },
      readHistories: (ids) => store.readHistories(ids),
      writeBatch: (writes) => store.writeBatch(writes),
    };
    // 100 ms of budget, 5 ms gone, 40 ms kept for the rest: the read may take 55 ms.
    const base = context({ store: sometimesSlow, budgetMs: 100 });
    const stateLane = new DeferredStateLane({
      apply: (items, laneGuards) => applyStateOnly(items, { ...base, guards: laneGuards }),
      stallMs: 1_000, // as exactly-once sets it
    });
    const ctx: ScoringContext = { ...base, stateLane };
    const [a, b, c] = history("slow", 3);
    const [first] = await scoreBatch([a!], ctx); // times out: rules decide, state work deferred
    // Cut short by the batch's budget, not by the store: commits still wait for the lane.
    expect(stateLane.behind).toBe(false);
    const [second] = await scoreBatch([b!], ctx); // lane busy: rules decide, queued behind
    expect([first!.fallbackCause, second!.fallbackCause]).toEqual([
      FallbackCause.FALLBACK_CAUSE_TIMEOUT,
      FallbackCause.FALLBACK_CAUSE_TIMEOUT,
    ]);
    expect(stateLane.busy).toBe(true);
    await stateLane.drained();
    const { states } = await store.readBatch({ cardIds: ["slow"], deviceTouches: [], nowMs: T0 });
    expect(decodeCardState(states[0]!.bytes).txCount).toBe(2);
    expect(states[0]!.position).toBe(b!.position);
    slow = false;
    const [third] = await scoreBatch([c!], ctx);
    expect(third!.fallback).toBe(false);
    stateLane.shutdown();
  });

  it("scores other cards with the model while the lane catches up on one", async () => {
    const store = new MemoryCardStateStore();
    let slowCard: string | undefined = "held";
    const slowForOneCard: CardStateStore = {
      readBatch: async (req) => {
        if (slowCard !== undefined && req.cardIds.includes(slowCard))
          await new Promise((r) => setTimeout(r, 120));
        return store.readBatch(req);
      },
      readHistories: (ids) => store.readHistories(ids),
      writeBatch: (writes) => store.writeBatch(writes),
    };
    const base = context({ store: slowForOneCard, budgetMs: 100 });
    let releaseLane!: () => void;
    const laneGate = new Promise<void>((r) => (releaseLane = r));
    const stateLane = new DeferredStateLane({
      apply: async (items, laneGuards) => {
        await laneGate;
        return applyStateOnly(items, { ...base, guards: laneGuards });
      },
    });
    const ctx: ScoringContext = { ...base, stateLane };
    const [h1, h2, h3] = history("held", 3);
    const [free] = history("free", 1);
    const [first] = await scoreBatch([h1!], ctx); // times out: the card's work goes to the lane
    expect(first!.fallbackCause).toBe(FallbackCause.FALLBACK_CAUSE_TIMEOUT);
    slowCard = undefined;
    const [held, other] = await scoreBatch([h2!, free!], ctx);
    expect(held!.fallbackCause).toBe(FallbackCause.FALLBACK_CAUSE_TIMEOUT); // queued behind its card
    expect(other!.fallback).toBe(false); // nothing of its card pending: the model decides
    releaseLane();
    await stateLane.drained();
    const [third] = await scoreBatch([h3!], ctx);
    expect(third!.fallback).toBe(false); // the lane applied the card's work: back to the model
    const { states } = await store.readBatch({ cardIds: ["held"], deviceTouches: [], nowMs: T0 });
    expect(decodeCardState(states[0]!.bytes).txCount).toBe(3);
    stateLane.shutdown();
  });

  it("while the store leaves the lane's call unanswered (exactly-once), other cards are the rules' without a read, and the model's once it answers", async () => {
    const store = new MemoryCardStateStore();
    let reads = 0;
    let thaw!: () => void;
    const thawed = new Promise<void>((r) => (thaw = r));
    let frozen = true;
    const freezable: CardStateStore = {
      readBatch: async (req) => {
        reads++;
        if (frozen) await thawed; // a stopped Redis: no answer, no error
        return store.readBatch(req);
      },
      readHistories: (ids) => store.readHistories(ids),
      writeBatch: (writes) => store.writeBatch(writes),
    };
    // 100 ms of budget, 5 ms gone, 40 ms kept for the rest: 55 ms left, so a live read gets the
    // guard's own 50 ms (a timeout of the store, not of the batch's budget).
    const base = context({ store: freezable, budgetMs: 100, guards: guards(50) });
    const stateLane = new DeferredStateLane({
      apply: (items, laneGuards) => applyStateOnly(items, { ...base, guards: laneGuards }),
      stallMs: 20,
    });
    const ctx: ScoringContext = { ...base, stateLane };
    const [a] = history("first", 1);
    const [first] = await scoreBatch([a!], ctx); // the read times out: rules, work to the lane
    expect(first!.fallbackCause).toBe(FallbackCause.FALLBACK_CAUSE_TIMEOUT);
    expect(stateLane.behind).toBe(true); // the store had a live call's time: no commit waits
    await sleep(40); // the lane's own read unanswered past stallMs
    expect(stateLane.storeStalled).toBe(true);
    const readsBefore = reads;
    const [b] = history("other", 1);
    const [second] = await scoreBatch([b!], ctx);
    expect(second!.fallbackCause).toBe(FallbackCause.FALLBACK_CAUSE_STATE_UNAVAILABLE);
    expect(reads).toBe(readsBefore); // no read sent to a store that does not answer
    frozen = false;
    thaw();
    await stateLane.drained();
    expect([stateLane.behind, stateLane.storeStalled]).toEqual([false, false]);
    const [c] = history("third", 1);
    const [third] = await scoreBatch([c!], ctx);
    expect(third!.fallback).toBe(false);
    // Both rules-decided transactions' state was applied by the lane once the store answered.
    const { states } = await store.readBatch({ cardIds: ["first", "other"], deviceTouches: [], nowMs: T0 });
    expect(states.map((st) => decodeCardState(st!.bytes).txCount)).toEqual([1, 1]);
    stateLane.shutdown();
  });

  it("shows the drift tap each decided row's features and score once, not explanation or state-only rows", async () => {
    const seen: { rows: number; features: number; scores: number[] }[] = [];
    const events = {
      modelStepped: (x: Float32Array, score: Float32Array, rows: number) =>
        seen.push({ rows, features: x.length / rows, scores: [...score.subarray(0, rows)] }),
    };
    const items = [item({ cardId: "tap-a" }), item({ cardId: "tap-b" })];
    // A review threshold of 0 flags both, so the explanation step runs its leave-one-out rows too.
    const decisions = await scoreBatch(items, context({ events, thresholds: { review: 0, decline: 0.99 } }));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.rows).toBe(2);
    // The model's own width: a model of an earlier feature schema is fed its prefix.
    expect(seen[0]!.features).toBe(model.featureCount);
    expect(seen[0]!.scores.map((s) => Math.fround(s))).toEqual(
      decisions.map((d) => Math.fround(d.score ?? NaN)),
    );
    await applyStateOnly(history("tap-state-only", 2), context({ events }));
    expect(seen).toHaveLength(1);
  });

  it("the state-only path applies state without evaluating a rule", async () => {
    const store = new MemoryCardStateStore();
    let evaluations = 0;
    const counting: RuleEvaluator = {
      version: rules.version,
      evaluate: (input) => {
        evaluations++;
        return rules.evaluate(input);
      },
    };
    const txs = history("state-only", 3);
    expect(await applyStateOnly(txs, context({ store, rules: counting }))).toBe(true);
    expect(evaluations).toBe(0);
    const { states } = await store.readBatch({ cardIds: ["state-only"], deviceTouches: [], nowMs: T0 });
    expect(decodeCardState(states[0]!.bytes).txCount).toBe(3);
  });

  it("falls back to rules when the model fails, and says so", async () => {
    const broken: ModelStepper = { ...model, step: () => Promise.reject(new Error("session lost")) };
    const [d] = await scoreBatch([item({ cardId: "m" })], context({ model: broken }));
    expect(d!.fallback).toBe(true);
    expect(d!.fallbackCause).toBe(FallbackCause.FALLBACK_CAUSE_MODEL_UNAVAILABLE);
    const [none] = await scoreBatch([item({ cardId: "n" })], context({ model: undefined }));
    expect(none!.fallbackCause).toBe(FallbackCause.FALLBACK_CAUSE_MODEL_UNAVAILABLE);
  });

  it("names rules and the features that pushed the score most on flagged transactions", async () => {
    // Card testing: tiny e-commerce charges at new merchants, then a large one.
    const store = new MemoryCardStateStore();
    const burst = Array.from({ length: 6 }, (_, i) =>
      item({
        cardId: "tested",
        amountMinor: 100,
        channel: Channel.CHANNEL_ECOMMERCE,
        merchantId: `new-${i}`,
        mcc: 5816,
      }),
    );
    for (const i of burst) await scoreBatch([i], context({ store }));
    const [cashout] = await scoreBatch(
      [
        item({
          cardId: "tested",
          amountMinor: 90_000,
          channel: Channel.CHANNEL_ECOMMERCE,
          merchantId: "new-x",
          mcc: 5732,
        }),
      ],
      context({ store, thresholds: { review: 0.01, decline: 0.99 } }),
    );
    const reasons = cashout!.reasonCodes ?? [];
    expect(reasons.some((r) => r.startsWith("rule:"))).toBe(true);
    expect(reasons.filter((r) => r.startsWith("feature:")).length).toBeGreaterThan(0);
  });
});

describe("decideBatch (write-behind)", () => {
  /** A memory store that holds the next write at a gate when armed (and fails it there if told). */
  function gatedStore() {
    const store = new MemoryCardStateStore();
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const state = { holdNext: true, failHeld: false, held: 0 };
    const gated: CardStateStore = {
      readBatch: (req) => store.readBatch(req),
      readHistories: (ids) => store.readHistories(ids),
      writeBatch: async (writes) => {
        if (state.holdNext) {
          state.holdNext = false;
          state.held++;
          await gate;
          state.held--;
          if (state.failHeld) throw new Error("write refused");
        }
        return store.writeBatch(writes);
      },
    };
    return { store, gated, state, release: () => open() };
  }

  const pending = async (p: Promise<unknown>) =>
    (await Promise.race([p.then(() => "settled"), sleep(20).then(() => "pending")])) === "pending";

  it("hands out the model's decisions before the batch's state write is answered", async () => {
    const { store, gated, state, release } = gatedStore();
    const ctx = context({ store: gated, writesInFlight: new StateWritesInFlight() });
    const items = [item({ cardId: "wb-a" }), item({ cardId: "wb-b" })];
    const { decisions, stateWritten } = await decideBatch(items, ctx);
    expect(decisions.map((d) => d.fallback)).toEqual([false, false]);
    expect(state.held).toBe(1);
    expect(await pending(stateWritten)).toBe(true);
    const before = await store.readBatch({ cardIds: ["wb-a"], deviceTouches: [], nowMs: T0 });
    expect(before.states[0]).toBeUndefined();
    release();
    await stateWritten;
    const after = await store.readBatch({ cardIds: ["wb-a", "wb-b"], deviceTouches: [], nowMs: T0 });
    expect(after.states.map((s) => s?.position)).toEqual(items.map((i) => i.position));
  });

  it("a card whose earlier write fails while the next batch reads it goes to the lane, and its state misses nothing", async () => {
    const { store, gated, state, release } = gatedStore();
    state.failHeld = true;
    const base = context({ store: gated, writesInFlight: new StateWritesInFlight() });
    const stateLane = new DeferredStateLane({
      apply: (items, laneGuards) => applyStateOnly(items, { ...base, guards: laneGuards }),
    });
    const ctx: ScoringContext = { ...base, stateLane };
    const [x1, x2] = history("wb-x", 2);
    const [y1] = history("wb-y", 1);
    const first = await decideBatch([x1!], ctx);
    expect(first.decisions[0]!.fallback).toBe(false);
    // The second batch reads (state without x1) while the first's write is out, then waits.
    const second = decideBatch([x2!, y1!], ctx);
    expect(await pending(second)).toBe(true);
    release(); // the first write fails: x1's state work goes to the lane, x2 must queue behind it
    const { decisions, stateWritten } = await second;
    expect(decisions[0]!.fallbackCause).toBe(FallbackCause.FALLBACK_CAUSE_TIMEOUT); // held by the lane
    expect(decisions[1]!.fallback).toBe(false); // nothing of its card pending: the model's
    await stateWritten;
    await stateLane.drained();
    const { states } = await store.readBatch({ cardIds: ["wb-x", "wb-y"], deviceTouches: [], nowMs: T0 });
    expect(decodeCardState(states[0]!.bytes).txCount).toBe(2);
    expect(states[0]!.position).toBe(x2!.position);
    expect(states[1]!.position).toBe(y1!.position);
    stateLane.shutdown();
  });

  it("scoreBatch returns only once the batch's state is written", async () => {
    const { store, gated, release } = gatedStore();
    const [z] = history("wb-z", 1);
    const scoring = scoreBatch([z!], context({ store: gated }));
    expect(await pending(scoring)).toBe(true);
    release();
    await scoring;
    const { states } = await store.readBatch({ cardIds: ["wb-z"], deviceTouches: [], nowMs: T0 });
    expect(states[0]!.position).toBe(z!.position);
  });
});
