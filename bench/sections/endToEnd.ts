// 1. End to end through the real stack: `fraud-scorer serve` as a child process, the load
// generator (src/tools/traffic/produceTraffic.ts) sending open-loop at fixed rates, latency from each
// transaction's scheduled send time to its decision's broker append time. Then a search for the
// highest rate whose p99 stays inside the budget.
import type { LoopClock } from "../../src/tools/traffic/openLoopSchedule.js";
import { produceTraffic, type ProduceSummary } from "../../src/tools/traffic/produceTraffic.js";
import type { BenchContext } from "../support/benchContext.js";
import type { BenchTopics } from "../support/benchKafka.js";
import { DecisionLatencyCollector, LatencySink, type LatencyReport } from "../support/decisionLatencies.js";
import { ScorerChild } from "../../src/tools/scorerChild.js";
import { scorerEnv } from "../support/benchScorer.js";
import { wallClock } from "../support/wallClock.js";
import { configKeyDefault } from "../../src/ops/configSchema.js";

export interface RateStep extends LatencyReport {
  readonly targetRate: number;
  /** Seconds measured after the warm-up (absent in results written before it was recorded). */
  readonly measureS?: number;
  /** Records the broker acknowledged per second of sending. */
  readonly achievedRate: number;
  readonly generatorMaxLagMs: number;
  readonly generatorStalls: number;
  /**
   * The scorer process's CPU over the measured window (prom-client's process_cpu_seconds_total,
   * every thread, the Kafka client included), as a share of one core and per transaction sent.
   */
  readonly scorerCpu?: { readonly corePercent: number; readonly usPerTransaction: number };
  /** p99 within the budget and nothing left undecided. */
  readonly withinBudget: boolean;
  /** At most MAX_FALLBACK_SHARE of the decisions were the rules' (state or model skipped). */
  readonly modelDecides: boolean;
  /** Both: what the rate search looks for. */
  readonly passes: boolean;
}

export interface EndToEndResult {
  readonly budgetMs: number;
  /** serve's scoring.maxBatch and scoring.lingerMs defaults (absent in results from before 2026-12-03). */
  readonly maxBatch?: number;
  readonly lingerMs?: number;
  readonly partitions: number;
  readonly warmupS: number;
  readonly measureS: number;
  readonly fixedRates: readonly RateStep[];
  readonly search: {
    /** Highest rate probed with p99 ≤ budget, nothing undecided and the model deciding ≥ 99 %. */
    readonly highestRateUnderBudget: number;
    readonly maxFallbackShare: number;
    readonly probes: readonly RateStep[];
  };
  readonly scorerStarts: number;
}

/** The scorer with its own topics, state namespace and a collector on its decisions. */
export class ScorerRig {
  /** A step left a backlog or degraded mode behind: the next step needs a fresh scorer. */
  dirty = false;

  private constructor(
    readonly topics: BenchTopics,
    readonly scorer: ScorerChild,
    readonly collector: DecisionLatencyCollector,
  ) {}

  /** `env`: settings beyond the bench's (exactly-once, say), as serve's environment variables. */
  static async start(ctx: BenchContext, n: number, env: Record<string, string> = {}): Promise<ScorerRig> {
    const { partitions } = ctx.plan.endToEnd;
    const topics = await ctx.topics.scorerTopics(`e2e${n}`, partitions);
    const collector = new DecisionLatencyCollector(ctx.endpoints.kafkaBrokers, topics.decisions);
    await collector.start();
    const scorer = await ScorerChild.start({
      root: ctx.root,
      env: scorerEnv({
        endpoints: ctx.endpoints,
        topics,
        namespace: ctx.namespace("e2e"),
        overrides: { BUDGET_MS: String(ctx.plan.endToEnd.budgetMs), ...env },
      }),
      logFile: ctx.logFile(`e2e-scorer-${n}`),
    });
    return new ScorerRig(topics, scorer, collector);
  }

  /**
   * Sends `count` transactions open loop at `rate` a second from `startMs` (on `clock`), each
   * expected by the collector at its due time and counted by the sink `sinkFor` picks for that
   * time (none: sent, awaited, not measured). Throws when a send failed: the figures would be of
   * other traffic than planned. Returns what the generator achieved.
   */
  async sendOpenLoop(
    ctx: BenchContext,
    plan: {
      rate: number;
      count: number;
      startMs: number;
      clock: LoopClock;
      sinkFor: (dueMs: number) => LatencySink | undefined;
    },
  ): Promise<ProduceSummary> {
    const { rate, count, startMs, clock, sinkFor } = plan;
    const intervalMs = 1000 / rate;
    const sent = await produceTraffic({
      kafka: ctx.port,
      topic: this.topics.transactions,
      source: ctx.traffic.take(count),
      ratePerSecond: rate,
      count,
      startMs,
      clock,
      onScheduled: ({ index, transactionId }) => {
        const due = startMs + index * intervalMs;
        this.collector.expect(transactionId, due, sinkFor(due));
      },
    });
    if (sent.failed > 0) throw new Error(`load generator: ${sent.failed} sends failed: ${sent.firstError}`);
    return sent;
  }

  async stop(): Promise<void> {
    // A backlogged scorer would drain for minutes on SIGTERM: it only needs to be gone.
    await this.scorer.stop("SIGTERM", { graceMs: this.dirty ? 3_000 : 20_000 });
    await this.collector.stop();
  }
}

/** Time for the generator to set up, so the first sends are not already late. */
export const START_LEAD_MS = 500;
/**
 * A rate at which the rules decide instead of the model (a state call timed out, the deferred
 * state lane is catching up, the budget ran out) is inside the budget only by degrading; the
 * search does not count it as sustained.
 */
export const MAX_FALLBACK_SHARE = 0.01;

export async function runStep(
  ctx: BenchContext,
  rig: ScorerRig,
  rate: number,
  measureS = ctx.plan.endToEnd.measureS,
): Promise<RateStep> {
  const { warmupS, drainS, budgetMs } = ctx.plan.endToEnd;
  const count = Math.round(rate * (warmupS + measureS));
  const sink = new LatencySink(budgetMs);
  const clock = wallClock();
  const startMs = clock.nowMs() + START_LEAD_MS;
  const measureFromMs = startMs + warmupS * 1000;
  const cpuAtStart = sampleCpuAt(rig, measureFromMs);
  const sent = await rig.sendOpenLoop(ctx, {
    rate,
    count,
    startMs,
    clock,
    sinkFor: (due) => (due >= measureFromMs ? sink : undefined),
  });
  // The window ends with the last send: the scorer's CPU per transaction of steady traffic,
  // before the drain's idle wait dilutes the share.
  const cpuAtEnd = await cpuNow(rig);
  const cpuStart = await cpuAtStart;
  await rig.collector.drain(sink, Date.now() + drainS * 1000);
  const report = sink.report();
  const withinBudget = report.undecided === 0 && report.endToEnd.p99Ms <= budgetMs;
  const modelDecides = report.fallbackShare <= MAX_FALLBACK_SHARE;
  // A backlog, or a scorer still catching up on deferred state work, would carry into the next
  // step: that one gets a fresh scorer.
  if (!withinBudget || !modelDecides) rig.dirty = true;
  const step: RateStep = {
    targetRate: rate,
    measureS,
    achievedRate: Math.round(sent.achievedRatePerSecond),
    generatorMaxLagMs: Math.round(sent.maxIssueLagMs * 10) / 10,
    generatorStalls: sent.stalls,
    ...(cpuStart !== undefined && cpuAtEnd !== undefined && cpuAtEnd.atMs > cpuStart.atMs
      ? {
          scorerCpu: {
            corePercent:
              Math.round(
                ((cpuAtEnd.seconds - cpuStart.seconds) / ((cpuAtEnd.atMs - cpuStart.atMs) / 1000)) * 1000,
              ) / 10,
            usPerTransaction:
              Math.round(((cpuAtEnd.seconds - cpuStart.seconds) * 1e6 * 10) / (rate * measureS)) / 10,
          },
        }
      : {}),
    withinBudget,
    modelDecides,
    passes: withinBudget && modelDecides,
    ...report,
  };
  ctx.log(
    `  ${rate} tx/s for ${measureS} s: p50 ${step.endToEnd.p50Ms} ms, p99 ${step.endToEnd.p99Ms} ms, max ${step.endToEnd.maxMs} ms` +
      `, ${step.decided} decided, ${step.undecided} undecided, sent at ${step.achievedRate} tx/s` +
      (step.fallbackShare > 0 ? `, ${(step.fallbackShare * 100).toFixed(1)} % rules fallback` : ""),
  );
  return step;
}

interface CpuSample {
  readonly seconds: number;
  readonly atMs: number;
}

/** The scorer's process CPU seconds now; undefined if its metrics did not answer. */
async function cpuNow(rig: ScorerRig): Promise<CpuSample | undefined> {
  try {
    const atMs = Date.now();
    return { seconds: await rig.scorer.metric("process_cpu_seconds_total"), atMs };
  } catch {
    return undefined;
  }
}

function sampleCpuAt(rig: ScorerRig, atMs: number): Promise<CpuSample | undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(cpuNow(rig)), Math.max(0, atMs - Date.now())));
}

export async function endToEnd(ctx: BenchContext): Promise<EndToEndResult> {
  const { rates, searchProbes, budgetMs, partitions, warmupS, measureS, sustained } = ctx.plan.endToEnd;
  let rig: ScorerRig | undefined;
  let starts = 0;
  const step = async (rate: number, seconds = measureS) => {
    if (rig?.dirty) {
      await rig.stop();
      rig = undefined;
    }
    rig ??= await ScorerRig.start(ctx, starts++);
    return runStep(ctx, rig, rate, seconds);
  };
  try {
    ctx.log(`end to end: fixed rates ${rates.join(", ")} tx/s, ${warmupS} s warm-up + ${measureS} s each`);
    const fixedRates: RateStep[] = [];
    for (const rate of rates)
      fixedRates.push(await step(rate, rate === sustained.rate ? sustained.measureS : measureS));

    // Bisect (geometrically) between the best passing and the worst failing rate seen so far.
    let lo = Math.max(0, ...fixedRates.filter((s) => s.passes).map((s) => s.targetRate));
    let hi = Math.min(
      Infinity,
      ...fixedRates.filter((s) => !s.passes && s.targetRate > lo).map((s) => s.targetRate),
    );
    const probes: RateStep[] = [];
    ctx.log(
      `end to end: searching for the highest rate with p99 ≤ ${budgetMs} ms and ≤ ${MAX_FALLBACK_SHARE * 100} % ` +
        `rules fallback (${searchProbes} probes)`,
    );
    for (let k = 0; k < searchProbes; k++) {
      const rate = roundRate(lo === 0 ? hi / 2 : hi === Infinity ? lo * 2 : Math.sqrt(lo * hi));
      if (rate === lo || rate === hi) break;
      const probe = await step(rate);
      probes.push(probe);
      if (probe.passes) lo = rate;
      else hi = rate;
    }
    return {
      budgetMs,
      maxBatch: configKeyDefault("scoring.maxBatch") as number,
      lingerMs: configKeyDefault("scoring.lingerMs") as number,
      partitions,
      warmupS,
      measureS,
      fixedRates,
      search: { highestRateUnderBudget: lo, maxFallbackShare: MAX_FALLBACK_SHARE, probes },
      scorerStarts: starts,
    };
  } finally {
    await rig?.stop();
  }
}

/** Two significant digits: 3700, not 3719. */
function roundRate(rate: number): number {
  const unit = 10 ** Math.max(1, Math.floor(Math.log10(rate)) - 1);
  return Math.max(10, Math.round(rate / unit) * unit);
}
