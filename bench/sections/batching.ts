// 3. Batching: the product's continuous micro-batching (src/stream/scoringQueue.ts) against
// "wait until N arrive or T ms pass" (dynamicBatcher.ts), both feeding the real scoreBatch with
// the real model and an in-memory card-state store, driven by the same open-loop arrival
// schedule. Time to decision runs from an item's scheduled arrival to its decision's publish.
import { setTimeout as sleep } from "node:timers/promises";
import type { DecisionInit } from "../../src/codec/messages.js";
import { MemoryCardStateStore } from "../../src/features/memoryCardStateStore.js";
import { decideBatch, scoreBatch, type ScoringItem } from "../../src/scoring/scoreBatch.js";
import { ScoringQueue } from "../../src/stream/scoringQueue.js";
import { configKeyDefault } from "../../src/ops/configSchema.js";
import type { BenchContext } from "../support/benchContext.js";
import {
  loadScoringParts,
  scoringContext,
  scoringItems,
  type ScoringParts,
} from "../support/inProcessScoring.js";
import { LatencyHistogram, type LatencySummary } from "../../src/tools/latencyHistogram.js";
import { round1, round3 } from "../support/alternatingRounds.js";
import { DynamicBatcher } from "./dynamicBatcher.js";

type BatcherKind = "continuous" | "dynamic";

export interface BatcherRun {
  readonly timeToDecision: LatencySummary;
  readonly meanBatch: number;
  readonly fallbackShare: number;
}

export interface BatchingLoad {
  readonly name: "low" | "high";
  readonly ratePerSecond: number;
  readonly continuous: BatcherRun;
  readonly dynamic: BatcherRun;
  /** dynamic ÷ continuous */
  readonly p50Ratio: number;
  readonly p99Ratio: number;
}

export interface BatchingResult {
  readonly maxBatch: number;
  readonly dynamicMaxWaitMs: number;
  /** The product's linger (scoring.lingerMs), which the continuous side runs with. */
  readonly lingerMs?: number;
  /** Back-to-back batches of maxBatch, no waiting: what this machine scores per second. */
  readonly capacityPerSecond: number;
  readonly loads: readonly BatchingLoad[];
}

const REPETITIONS = 2;
const PRODUCT_LINGER_MS = configKeyDefault("scoring.lingerMs") as number;

export async function batching(ctx: BenchContext): Promise<BatchingResult> {
  const plan = ctx.plan.batching;
  const parts = await loadScoringParts(ctx.root);
  try {
    const capacity = await measureCapacity(ctx, parts);
    // "High" must stay below saturation, or both batchers only measure an ever-growing queue.
    const highRate = Math.min(plan.highRate, Math.max(plan.lowRate * 2, Math.round(capacity * 0.5)));
    ctx.log(
      `batching: capacity ≈ ${Math.round(capacity)} tx/s in process; low ${plan.lowRate} tx/s, high ${highRate} tx/s; ` +
        `dynamic = wait for ${plan.maxBatch} or ${plan.dynamicMaxWaitMs} ms`,
    );
    const loads: BatchingLoad[] = [];
    for (const [name, rate] of [
      ["low", plan.lowRate],
      ["high", highRate],
    ] as const) {
      const count = Math.max(50, Math.round(rate * (plan.warmupS + plan.measureS)));
      const items = scoringItems(ctx.traffic.take(count), count);
      const runs: Record<BatcherKind, Recorded[]> = { continuous: [], dynamic: [] };
      for (let r = 0; r < (ctx.plan.smoke ? 1 : REPETITIONS); r++) {
        const order: BatcherKind[] = r % 2 === 0 ? ["continuous", "dynamic"] : ["dynamic", "continuous"];
        for (const kind of order) runs[kind].push(await runBatcher(kind, items, rate, parts, ctx));
      }
      const continuous = merge(runs.continuous);
      const dynamic = merge(runs.dynamic);
      loads.push({
        name,
        ratePerSecond: rate,
        continuous,
        dynamic,
        p50Ratio: round3(dynamic.timeToDecision.p50Ms / continuous.timeToDecision.p50Ms),
        p99Ratio: round3(dynamic.timeToDecision.p99Ms / continuous.timeToDecision.p99Ms),
      });
      ctx.log(
        `  ${name} ${rate} tx/s: continuous p50 ${continuous.timeToDecision.p50Ms} / p99 ${continuous.timeToDecision.p99Ms} ms, ` +
          `dynamic p50 ${dynamic.timeToDecision.p50Ms} / p99 ${dynamic.timeToDecision.p99Ms} ms`,
      );
    }
    return {
      maxBatch: plan.maxBatch,
      dynamicMaxWaitMs: plan.dynamicMaxWaitMs,
      lingerMs: PRODUCT_LINGER_MS,
      capacityPerSecond: Math.round(capacity),
      loads,
    };
  } finally {
    await parts.model.close();
  }
}

async function measureCapacity(ctx: BenchContext, parts: ScoringParts): Promise<number> {
  const { maxBatch } = ctx.plan.batching;
  const items = scoringItems(ctx.traffic.take(maxBatch * 40), maxBatch * 40);
  const scoring = scoringContext(parts);
  try {
    const now = Date.now();
    const started = performance.now();
    for (let i = 0; i < items.length; i += maxBatch)
      await scoreBatch(
        items.slice(i, i + maxBatch).map((item) => ({ ...item, budgetStartMs: now })),
        scoring,
      );
    return (items.length * 1000) / (performance.now() - started);
  } finally {
    scoring.shutdown();
  }
}

interface Recorded {
  readonly histogram: LatencyHistogram;
  readonly batches: number[];
  readonly fallbacks: number;
}

interface Batcher {
  submit(items: readonly ScoringItem[]): unknown;
  idle(): Promise<void>;
}

async function runBatcher(
  kind: BatcherKind,
  items: readonly ScoringItem[],
  rate: number,
  parts: ScoringParts,
  ctx: BenchContext,
): Promise<Recorded> {
  const { maxBatch, dynamicMaxWaitMs, warmupS } = ctx.plan.batching;
  const scoring = scoringContext(parts, new MemoryCardStateStore());
  const histogram = new LatencyHistogram();
  const batches: number[] = [];
  let fallbacks = 0;
  // Schedule and measurement on the monotonic clock; budgets on the wall clock, as records carry.
  const epochOffset = Date.now() - performance.now();
  const intervalMs = 1000 / rate;
  const startAt = performance.now() + 20;
  const measureFrom = startAt + warmupS * 1000;
  const dueAt = (i: number) => startAt + i * intervalMs;
  const indexById = new Map(items.map((item, i) => [item.tx.transactionId, i]));
  let outstanding = items.length;
  const publish = (decisions: readonly DecisionInit[]) => {
    const now = performance.now();
    outstanding -= decisions.length;
    for (const d of decisions) {
      const due = dueAt(indexById.get(d.transactionId ?? "")!);
      if (due < measureFrom) continue;
      histogram.recordMs(now - due);
      if (d.fallback) fallbacks++;
    }
  };
  const score = (batch: readonly ScoringItem[]) => scoreBatch(batch, scoring);
  const onBatch = (size: number) => batches.push(size);
  const batcher: Batcher =
    kind === "continuous"
      ? new ScoringQueue({
          maxBatch,
          lingerMs: PRODUCT_LINGER_MS,
          score: (batch) => decideBatch(batch, scoring),
          publish: async (d) => publish(d),
          onBatch,
        })
      : new DynamicBatcher({ maxBatch, maxWaitMs: dynamicMaxWaitMs, score, publish, onBatch });

  // Open loop: whatever is due is submitted, however far behind the scorer is.
  let next = 0;
  while (next < items.length) {
    const due = Math.min(items.length, Math.floor((performance.now() - startAt) / intervalMs) + 1);
    if (due > next) {
      const arriving = items
        .slice(next, due)
        .map((item, k) => ({ ...item, budgetStartMs: Math.floor(epochOffset + dueAt(next + k)) }));
      next = due;
      void batcher.submit(arriving);
    }
    await sleep(Math.max(1, dueAt(next) - performance.now()));
  }
  while (outstanding > 0) {
    await batcher.idle();
    if (outstanding > 0) await sleep(1);
  }
  scoring.shutdown();
  return { histogram, batches, fallbacks };
}

function merge(runs: readonly Recorded[]): BatcherRun {
  const histogram = new LatencyHistogram();
  let fallbacks = 0;
  const batches: number[] = [];
  for (const run of runs) {
    histogram.add(run.histogram);
    fallbacks += run.fallbacks;
    batches.push(...run.batches);
  }
  return {
    timeToDecision: histogram.summary(),
    meanBatch: round1(batches.reduce((a, b) => a + b, 0) / Math.max(1, batches.length)),
    fallbackShare: round3(fallbacks / Math.max(1, histogram.count)),
  };
}
