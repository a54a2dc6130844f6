// 7. Cold start: `serve` from spawn to ready (model verified, warmed, schemas registered, group
// joined: /readyz polled every 20 ms), then the latency and CPU of its first decisions at the
// product's promised rate, with the model warm-up and without it (MODEL_WARM_UP=false). Runs
// alternate between the two.
import { produceTraffic } from "../../src/tools/traffic/produceTraffic.js";
import type { BenchContext } from "../support/benchContext.js";
import { median, round1, round3 } from "../support/alternatingRounds.js";
import {
  DecisionLatencyCollector,
  LatencySink,
  slowestLine,
  type DecisionBreakdown,
  type Stage,
} from "../support/decisionLatencies.js";
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
  /** The scorer's CPU (every thread) from the first send until they were all decided, per transaction. */
  readonly cpuUsPerTransaction: number;
  /** The scorer's longest event-loop delay in that time. */
  readonly loopDelayMaxMs: number;
  /** The load generator's own lateness: how late its latest transaction was handed to the client. */
  readonly sendLagMaxMs: number;
  /** The slowest of them, `dueAtMs` counted from the load's first scheduled send. */
  readonly slowest: readonly DecisionBreakdown[];
  readonly undecided: number;
}

export interface ColdStartVariant {
  readonly startToReadyMs: number;
  readonly firstDecisionMs: number;
  readonly firstDecisionModelUs: number;
  readonly firstDecisionsP50Ms: number;
  readonly firstDecisionsP99Ms: number;
  readonly firstDecisionsMaxMs: number;
  readonly firstDecisionsCpuUsPerTx: number;
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
  /** without ÷ with: the p99 of the first transactions. */
  readonly firstDecisionsP99WithoutOverWith: number;
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
      const worst = run.slowest[0];
      ctx.log(
        `  warm-up ${warmUp ? "on " : "off"}: ready in ${run.timeline.readyMs} ms, first decision ${run.firstDecisionMs} ms ` +
          `(model ${run.firstDecisionModelUs} µs), first ${transactions} p50 ${run.firstDecisions.p50Ms} ms, ` +
          `p99 ${run.firstDecisions.p99Ms} ms, max ${run.firstDecisions.maxMs} ms, scorer ${run.cpuUsPerTransaction} µs CPU/tx` +
          (worst === undefined ? "" : `; the slowest ${slowestLine(worst)}`) +
          `; send lag max ${run.sendLagMaxMs} ms, scorer loop delay max ${run.loopDelayMaxMs} ms`,
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
      firstDecisionsP99Ms: round3(median(of.map((r) => r.firstDecisions.p99Ms))),
      firstDecisionsCpuUsPerTx: round1(median(of.map((r) => r.cpuUsPerTransaction))),
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
    firstDecisionsP99WithoutOverWith: round3(
      withoutWarmUp.firstDecisionsP99Ms / withWarmUp.firstDecisionsP99Ms,
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
    const cpuBeforeS = await scorer.metric("process_cpu_seconds_total");
    const sent = await produceTraffic({
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
    // prom-client resets its event-loop histogram at each scrape: this is since the one above.
    const loopDelayMaxMs = round1((await scorer.metric("nodejs_eventloop_lag_max_seconds")) * 1000);
    const cpuS = (await scorer.metric("process_cpu_seconds_total")) - cpuBeforeS;
    if (!sink.first) throw new Error(`no decision within 15 s of ${transactions} transactions`);
    const { endToEndMs, stagesMs } = sink.first;
    return {
      warmUp,
      timeline: scorer.timeline,
      firstDecisionMs: round3(endToEndMs),
      firstDecisionModelUs: Math.round(stagesMs.model * 1000),
      firstDecisionStagesMs: stagesMs,
      firstDecisions: sink.endToEnd.summary(),
      cpuUsPerTransaction: round1((cpuS * 1e6) / transactions),
      sendLagMaxMs: round1(sent.sendLag.maxMs),
      loopDelayMaxMs,
      slowest: sink.slowest.map((d) => ({ ...d, dueAtMs: round1(d.dueAtMs - startMs) })),
      undecided: sink.undecided,
    };
  } finally {
    await scorer?.stop();
    await collector.stop();
  }
}
