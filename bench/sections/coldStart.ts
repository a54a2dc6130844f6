// 7. Cold start: `serve` from spawn to ready (model verified, warmed, schemas registered, group
// joined: /readyz polled every 20 ms), then the latency of its first decisions, with the model
// warm-up and without it (MODEL_WARM_UP=false). Runs alternate between the two.
import { produceTraffic } from "../../src/tools/traffic/produceTraffic.js";
import type { BenchContext } from "../support/benchContext.js";
import { median, round1, round3 } from "../support/alternatingRounds.js";
import { DecisionLatencyCollector, LatencySink, type Stage } from "../support/decisionLatencies.js";
import type { LatencySummary } from "../../src/tools/latencyHistogram.js";
import { ScorerChild, type StartTimeline } from "../../src/tools/scorerChild.js";
import { scorerEnv } from "../support/benchScorer.js";
import { wallClock } from "../support/wallClock.js";

export interface ColdStartRun {
  readonly warmUp: boolean;
  readonly timeline: StartTimeline;
  /** The first decision to reach the decisions topic: end to end, and its batch's model stage. */
  readonly firstDecisionMs: number;
  readonly firstDecisionModelUs: number;
  /** The first decision's own stage timings. */
  readonly firstDecisionStagesMs: Readonly<Record<Stage, number>>;
  readonly firstDecisions: LatencySummary;
  readonly undecided: number;
}

export interface ColdStartVariant {
  readonly startToReadyMs: number;
  readonly firstDecisionMs: number;
  readonly firstDecisionModelUs: number;
  readonly firstDecisionsP50Ms: number;
  readonly firstDecisionsMaxMs: number;
}

export interface ColdStartResult {
  readonly transactions: number;
  readonly ratePerSecond: number;
  readonly runs: readonly ColdStartRun[];
  /** Medians over the runs of each variant. */
  readonly withWarmUp: ColdStartVariant;
  readonly withoutWarmUp: ColdStartVariant;
  /** without ÷ with: what skipping the warm-up costs the first decision. */
  readonly firstDecisionWithoutOverWith: number;
  readonly firstModelStageWithoutOverWith: number;
  readonly startToReadyWithOverWithout: number;
}

export async function coldStart(ctx: BenchContext): Promise<ColdStartResult> {
  const { runsPerVariant, transactions, rate } = ctx.plan.coldStart;
  ctx.log(
    `cold start: ${runsPerVariant} starts with and without warm-up, then ${transactions} transactions at ${rate} tx/s`,
  );
  const runs: ColdStartRun[] = [];
  for (let r = 0; r < runsPerVariant; r++) {
    for (const warmUp of r % 2 === 0 ? [true, false] : [false, true]) {
      const run = await startOnce(ctx, warmUp, runs.length);
      runs.push(run);
      ctx.log(
        `  warm-up ${warmUp ? "on " : "off"}: ready in ${run.timeline.readyMs} ms, first decision ${run.firstDecisionMs} ms ` +
          `(model ${run.firstDecisionModelUs} µs), first ${transactions} p50 ${run.firstDecisions.p50Ms} ms`,
      );
    }
  }
  const variant = (warmUp: boolean): ColdStartVariant => {
    const of = runs.filter((r) => r.warmUp === warmUp);
    return {
      startToReadyMs: round1(median(of.map((r) => r.timeline.readyMs))),
      firstDecisionMs: round3(median(of.map((r) => r.firstDecisionMs))),
      firstDecisionModelUs: median(of.map((r) => r.firstDecisionModelUs)),
      firstDecisionsP50Ms: round3(median(of.map((r) => r.firstDecisions.p50Ms))),
      firstDecisionsMaxMs: round3(median(of.map((r) => r.firstDecisions.maxMs))),
    };
  };
  const withWarmUp = variant(true);
  const withoutWarmUp = variant(false);
  return {
    transactions,
    ratePerSecond: rate,
    runs,
    withWarmUp,
    withoutWarmUp,
    firstDecisionWithoutOverWith: round3(withoutWarmUp.firstDecisionMs / withWarmUp.firstDecisionMs),
    firstModelStageWithoutOverWith: round3(
      Math.max(1, withoutWarmUp.firstDecisionModelUs) / Math.max(1, withWarmUp.firstDecisionModelUs),
    ),
    startToReadyWithOverWithout: round3(withWarmUp.startToReadyMs / withoutWarmUp.startToReadyMs),
  };
}

async function startOnce(ctx: BenchContext, warmUp: boolean, n: number): Promise<ColdStartRun> {
  const { transactions, rate } = ctx.plan.coldStart;
  const topics = await ctx.topics.scorerTopics(`cold${n}`, ctx.plan.endToEnd.partitions);
  const collector = new DecisionLatencyCollector(ctx.endpoints.kafkaBrokers, topics.decisions);
  await collector.start();
  const sink = new LatencySink(ctx.plan.endToEnd.budgetMs);
  let scorer: ScorerChild | undefined;
  try {
    scorer = await ScorerChild.start({
      root: ctx.root,
      env: scorerEnv({
        endpoints: ctx.endpoints,
        topics,
        namespace: ctx.namespace("cold"),
        overrides: warmUp ? {} : { MODEL_WARM_UP: "false" },
      }),
      logFile: ctx.logFile(`cold-${n}-${warmUp ? "warm" : "cold"}`),
    });
    const clock = wallClock();
    const startMs = clock.nowMs() + 100;
    const intervalMs = 1000 / rate;
    await produceTraffic({
      kafka: ctx.port,
      topic: topics.transactions,
      source: ctx.traffic.take(transactions),
      ratePerSecond: rate,
      count: transactions,
      startMs,
      clock,
      onScheduled: ({ index, transactionId }) =>
        collector.expect(transactionId, startMs + index * intervalMs, sink),
    });
    await collector.drain(sink, Date.now() + 15_000);
    if (!sink.first) throw new Error(`no decision within 15 s of ${transactions} transactions`);
    const { endToEndMs, stagesMs } = sink.first;
    return {
      warmUp,
      timeline: scorer.timeline,
      firstDecisionMs: round3(endToEndMs),
      firstDecisionModelUs: Math.round(stagesMs.model * 1000),
      firstDecisionStagesMs: stagesMs,
      firstDecisions: sink.endToEnd.summary(),
      undecided: sink.undecided,
    };
  } finally {
    await scorer?.stop();
    await collector.stop();
  }
}
