// 12. Across a promote: `serve` runs 1.0.0 at a steady rate (1,000 tx/s by default) while the
// bench promotes 1.1.0 through the control topic part-way; decisions are bucketed by second of
// scheduled send, so the p99 and max of the 5 s after the switch (the first second in which a
// decision carries the new version) compare with the 5 s before. New state keys come with the
// new version: every card's first transaction after the switch rebuilds its state from
// history. The scorer's own counters, polled every 250 ms, give how many cards were rebuilt in the
// first minute. What a rebuild costs in CPU is measured in process beforehand (a loaded machine
// makes the child's CPU per transaction too noisy to subtract): the same transactions scored
// against state that is there (hits) and against a new version's empty keys over the same
// history (rebuilds), in alternating rounds, CPU time by process.cpuUsage.
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Decision } from "../../src/codec/messages.js";
import { promoteModel } from "../../src/control/promotionRecords.js";
import { FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import { KafkaControlChannel } from "../../src/stream/kafkaControlChannel.js";
import type { BenchContext } from "../support/benchContext.js";
import { LatencySink, type LatencyReport } from "../support/decisionLatencies.js";
import { MODEL_DIR } from "../support/benchScorer.js";
import { wallClock } from "../support/wallClock.js";
import { processCpuUs } from "../support/drainCpu.js";
import { ScorerRig, START_LEAD_MS } from "./endToEnd.js";
import { MemoryCardStateStore } from "../../src/features/memoryCardStateStore.js";
import type { CardStateStore } from "../../src/scoring/ports.js";
import { scoreBatch } from "../../src/scoring/scoreBatch.js";
import { loadScoringParts, scoringContext, scoringItems } from "../support/inProcessScoring.js";
import { median } from "../support/alternatingRounds.js";

const NEW_MODEL_DIR = "models/fraud-lstm/1.1.0";
const POLL_MS = 250;

export interface PromoteWindow extends LatencyReport {
  /** Seconds of scheduled send, relative to the switch second. */
  readonly fromS: number;
  readonly toS: number;
}

export interface PromoteResult {
  readonly rate: number;
  readonly from: string;
  readonly to: string;
  readonly publishedAtS: number;
  /** From publishing the control record to the scorer's switch counter (verify, load, warm). */
  readonly publishToSwitchMs: number;
  /** Seconds after the send start of the first decision with the new version. */
  readonly switchAtS: number;
  readonly before: PromoteWindow;
  readonly after: PromoteWindow;
  readonly whole: LatencyReport;
  readonly rebuild: {
    /** How long after the switch the counters were read (≤ 60 s: the rest of the run). */
    readonly windowS: number;
    /** Cards the scorer rebuilt from history in that time, and the transactions it decided. */
    readonly cards: number;
    readonly transactions: number;
  } & RebuildCost;
}

/** In process: CPU per transaction on state hits vs on rebuilds, and so per rebuilt card. */
export interface RebuildCost {
  readonly measuredTransactions: number;
  readonly rounds: number;
  readonly cardsPerRound: number;
  /** History entries stepped per rebuilt card, on average. */
  readonly historyEntriesPerCard: number;
  readonly cpuUsPerTxHit: number;
  readonly cpuUsPerTxRebuild: number;
  readonly cpuUsPerRebuild: number;
}

async function rebuildCost(ctx: BenchContext): Promise<RebuildCost> {
  const { historyTransactions, measuredTransactions, rounds } = ctx.plan.promote;
  const parts = await loadScoringParts(ctx.root);
  const store = new MemoryCardStateStore();
  const base = scoringContext(parts, store);
  const batches = (items: ReturnType<typeof scoringItems>) =>
    Array.from({ length: Math.ceil(items.length / 64) }, (_, i) => items.slice(i * 64, i * 64 + 64));
  try {
    const history = scoringItems(ctx.traffic.take(historyTransactions), historyTransactions);
    for (const batch of batches(history)) {
      const now = Date.now();
      await scoreBatch(
        batch.map((item) => ({ ...item, budgetStartMs: now })),
        base,
      );
    }
    const measured = scoringItems(ctx.traffic.take(measuredTransactions), measuredTransactions);
    // Neither side writes: every round reads the same state and history.
    let entries = 0;
    const readOnly = (rebuild: boolean): CardStateStore => ({
      async readBatch(request) {
        const read = await store.readBatch(request);
        return rebuild ? { ...read, states: read.states.map(() => undefined), histories: undefined } : read;
      },
      async readHistories(cardIds) {
        const histories = await store.readHistories(cardIds);
        for (const h of histories) entries += h.length;
        return histories;
      },
      writeBatch: async (writes) => writes.map(() => "applied" as const),
    });
    let rebuilt = 0;
    const side = (rebuild: boolean) => async () => {
      const ctxOf = {
        ...base,
        store: readOnly(rebuild),
        events: { stateOutcome: (o: string, n: number) => void (o === "rebuild" && (rebuilt += n)) },
      };
      const cpu0 = processCpuUs();
      for (const batch of batches(measured)) {
        const now = Date.now();
        await scoreBatch(
          batch.map((item) => ({ ...item, budgetStartMs: now })),
          ctxOf,
        );
      }
      return (processCpuUs() - cpu0) / measured.length;
    };
    const hit = side(false);
    const rebuild = side(true);
    await hit();
    await rebuild(); // warm-up of both
    const hits: number[] = [];
    const rebuilds: number[] = [];
    [rebuilt, entries] = [0, 0];
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        hits.push(await hit());
        rebuilds.push(await rebuild());
      } else {
        rebuilds.push(await rebuild());
        hits.push(await hit());
      }
    }
    const cardsPerRound = rebuilt / rounds;
    const cpuUsPerTxHit = median(hits);
    const cpuUsPerTxRebuild = median(rebuilds);
    return {
      measuredTransactions,
      rounds,
      cardsPerRound: Math.round(cardsPerRound),
      historyEntriesPerCard: rebuilt === 0 ? 0 : Math.round((entries / rebuilt) * 10) / 10,
      cpuUsPerTxHit: Math.round(cpuUsPerTxHit * 10) / 10,
      cpuUsPerTxRebuild: Math.round(cpuUsPerTxRebuild * 10) / 10,
      cpuUsPerRebuild:
        cardsPerRound === 0
          ? 0
          : Math.round(((cpuUsPerTxRebuild - cpuUsPerTxHit) * measuredTransactions) / cardsPerRound),
    };
  } finally {
    base.shutdown();
    await parts.model.close();
  }
}

/** One second of scheduled sends: its latencies, and how many of its decisions were the new model's. */
class SecondSink extends LatencySink {
  newVersion = 0;
  constructor(
    budgetMs: number,
    readonly newModelVersion: string,
  ) {
    super(budgetMs);
  }
  override record(decision: Decision, endToEndMs: number, seenMs: number, appendMs: number): void {
    if (decision.modelVersion === this.newModelVersion) this.newVersion++;
    super.record(decision, endToEndMs, seenMs, appendMs);
  }
}

interface CounterSample {
  readonly atMs: number;
  readonly rebuilds: number;
  readonly decisions: number;
  readonly switched: number;
}

const versionOf = async (dir: string) =>
  (JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as { modelVersion: string }).modelVersion;

export async function promote(ctx: BenchContext): Promise<PromoteResult> {
  const { rate, beforeS, afterS, windowS } = ctx.plan.promote;
  const cost = await rebuildCost(ctx);
  ctx.log(
    `  in process: ${cost.cpuUsPerTxHit} µs CPU/tx on hits, ${cost.cpuUsPerTxRebuild} on rebuilds ` +
      `(${cost.cardsPerRound} cards of ${cost.historyEntriesPerCard} entries): ${cost.cpuUsPerRebuild} µs per rebuilt card`,
  );
  const { budgetMs, drainS } = ctx.plan.endToEnd;
  const [from, to] = [
    await versionOf(resolve(ctx.root, MODEL_DIR)),
    await versionOf(resolve(ctx.root, NEW_MODEL_DIR)),
  ];
  ctx.log(`promote: ${rate} tx/s, ${from} → ${to} after ${beforeS} s, then ${afterS} s`);
  const rig = await ScorerRig.start(ctx, 200);
  const channel = new KafkaControlChannel({ port: ctx.port, topic: `${rig.topics.transactions}.control` });
  const verify = {
    trustedKeysDir: join(ctx.root, "models/trusted-keys"),
    expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
  };
  const samples: CounterSample[] = [];
  let polling = true;
  const poll = (async () => {
    while (polling) {
      const [rebuilds, decisions, switched] = await Promise.all([
        rig.scorer.metric("fraud_card_state_total", { outcome: "rebuild" }),
        rig.scorer.metric("fraud_decisions_total"),
        rig.scorer.metric("fraud_promotions_total", { kind: "model", outcome: "switched" }),
      ]);
      samples.push({ atMs: Date.now(), rebuilds, decisions, switched });
      await sleep(POLL_MS);
    }
  })();
  try {
    // The running model is recorded first, so the promotion below has a `previous`.
    await promoteModel(resolve(ctx.root, MODEL_DIR), { channel, issuedBy: "bench", ...verify });
    const seconds = beforeS + afterS;
    const count = Math.round(rate * seconds);
    const clock = wallClock();
    const startMs = clock.nowMs() + START_LEAD_MS;
    const sinks = Array.from({ length: seconds }, () => new SecondSink(budgetMs, to));
    const whole = new LatencySink(budgetMs);
    let publishedAtMs = 0;
    const promotion = sleep(Math.max(0, startMs + beforeS * 1000 - Date.now())).then(async () => {
      publishedAtMs = Date.now();
      await promoteModel(resolve(ctx.root, NEW_MODEL_DIR), { channel, issuedBy: "bench", ...verify });
    });
    const sending = rig.sendOpenLoop(ctx, {
      rate,
      count,
      startMs,
      clock,
      sinkFor: (due) => sinks[Math.min(seconds - 1, Math.floor((due - startMs) / 1000))],
    });
    // Both finish before either's failure is thrown: the channel closes only after the promotion.
    await Promise.allSettled([sending, promotion]);
    await promotion;
    await sending;
    const deadline = Date.now() + drainS * 1000;
    for (const sink of sinks) await rig.collector.drain(sink, deadline);
    polling = false;
    await poll;

    const switchSecond = sinks.findIndex((s) => s.newVersion > 0);
    if (switchSecond < 0) throw new Error(`no decision carried ${to}: the promotion did not switch`);
    const merged = (fromS: number, toS: number): PromoteWindow => {
      const sink = new LatencySink(budgetMs);
      for (const s of sinks.slice(Math.max(0, switchSecond + fromS), Math.max(0, switchSecond + toS))) {
        sink.endToEnd.add(s.endToEnd);
        sink.seenByConsumer.add(s.seenByConsumer);
        for (const [stage, h] of Object.entries(s.stages)) sink.stages[stage as keyof typeof s.stages].add(h);
        sink.expected += s.expected;
        sink.decided += s.decided;
        sink.undecided += s.undecided;
        for (const [cause, n] of s.fallbacks) sink.fallbacks.set(cause, (sink.fallbacks.get(cause) ?? 0) + n);
      }
      return { fromS, toS, ...sink.report() };
    };
    for (const s of sinks) whole.endToEnd.add(s.endToEnd);

    const switchesBefore = samples.filter((s) => s.atMs <= publishedAtMs).at(-1)?.switched ?? 0;
    const switchedAt = samples.find((s) => s.atMs > publishedAtMs && s.switched > switchesBefore);
    if (switchedAt === undefined) throw new Error("the scorer never counted the switch");
    const lastSample = samples.filter((s) => s.atMs <= switchedAt.atMs + 60_000).at(-1)!;
    const result: PromoteResult = {
      rate,
      from,
      to,
      publishedAtS: Math.round((publishedAtMs - startMs) / 100) / 10,
      publishToSwitchMs: Math.round(switchedAt.atMs - publishedAtMs),
      switchAtS: switchSecond,
      before: merged(-windowS, 0),
      after: merged(0, windowS),
      whole: whole.report(),
      rebuild: {
        windowS: Math.round((lastSample.atMs - switchedAt.atMs) / 100) / 10,
        cards: lastSample.rebuilds - switchedAt.rebuilds,
        transactions: lastSample.decisions - switchedAt.decisions,
        ...cost,
      },
    };
    ctx.log(
      `  switch ${result.publishToSwitchMs} ms after publishing; p99 ${result.before.endToEnd.p99Ms} → ${result.after.endToEnd.p99Ms} ms, ` +
        `max ${result.before.endToEnd.maxMs} → ${result.after.endToEnd.maxMs} ms; ${result.rebuild.cards} cards rebuilt in ${result.rebuild.windowS} s`,
    );
    return result;
  } finally {
    polling = false;
    await poll.catch(() => undefined);
    rig.dirty = true;
    await rig.stop();
  }
}
