// 8. Load generator: what `fraud-scorer produce` costs, so that it is never the bottleneck of
// the end-to-end numbers. Each combination of sink (discarding: the generator's own cost;
// Kafka: with the client) and transactions per record runs in a process of its own through
// the fixed rates; CPU is that process's process.cpuUsage from first send to last ack.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { ProduceSummary } from "../../src/tools/traffic/produceTraffic.js";
import type { BenchContext } from "../support/benchContext.js";
import type { LoadGeneratorChildPlan } from "./loadGeneratorChild.js";

export interface LoadGeneratorStep {
  readonly sink: "discard" | "kafka";
  readonly perRecord: number;
  readonly targetRate: number;
  readonly achievedRate: number;
  readonly transactionsPerRecord: number;
  readonly cpuMicrosPerTransaction: number;
  /** Share of one core the generator used at this rate. */
  readonly coreShare: number;
  readonly sendLagP50Ms: number;
  readonly sendLagP99Ms: number;
  readonly sendLagMaxMs: number;
  readonly stalls: number;
  readonly failed: number;
}

export interface LoadGeneratorResult {
  readonly seconds: number;
  readonly partitions: number;
  readonly lingerMs: number;
  readonly steps: readonly LoadGeneratorStep[];
}

export async function loadGenerator(ctx: BenchContext): Promise<LoadGeneratorResult> {
  const { rates, seconds, warmupSeconds, partitions, perRecord, lingerMs, distinctTransactions } =
    ctx.plan.loadGenerator;
  ctx.log(
    `load generator: ${rates.join(", ")} tx/s for ${seconds} s each, ${perRecord.join(" and ")} per record, discarding and Kafka sinks`,
  );
  const topic = await ctx.topics.topic("loadgen", partitions);
  const steps: LoadGeneratorStep[] = [];
  for (const sink of ["discard", "kafka"] as const)
    for (const n of perRecord) {
      const childPlan: LoadGeneratorChildPlan = {
        sink,
        brokers: ctx.endpoints.kafkaBrokers,
        topic,
        partitions,
        perRecord: n,
        lingerMs,
        rates,
        seconds,
        warmupSeconds,
        distinctTransactions,
      };
      for (const { rate, summary } of await runChild(ctx, childPlan)) {
        const step = stepOf(sink, n, rate, summary);
        steps.push(step);
        ctx.log(
          `  ${sink}, ${n} per record, ${rate} tx/s: sent at ${step.achievedRate} tx/s, ${step.cpuMicrosPerTransaction} µs CPU per tx ` +
            `(${(step.coreShare * 100).toFixed(0)} % of a core), lag p99 ${step.sendLagP99Ms} ms, ${step.transactionsPerRecord} per record`,
        );
      }
    }
  return { seconds, partitions, lingerMs, steps };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

function stepOf(
  sink: "discard" | "kafka",
  perRecord: number,
  rate: number,
  s: ProduceSummary,
): LoadGeneratorStep {
  return {
    sink,
    perRecord,
    targetRate: rate,
    achievedRate: Math.round(s.achievedRatePerSecond),
    transactionsPerRecord: round2(s.transactionsPerRecord),
    cpuMicrosPerTransaction: round2(s.cpuMicrosPerTransaction),
    coreShare: round2((s.cpuMicrosPerTransaction * s.acked) / 1e6 / Math.max(0.001, s.elapsedMs / 1000)),
    sendLagP50Ms: s.sendLag.p50Ms,
    sendLagP99Ms: s.sendLag.p99Ms,
    sendLagMaxMs: s.sendLag.maxMs,
    stalls: s.stalls,
    failed: s.failed,
  };
}

async function runChild(
  ctx: BenchContext,
  plan: LoadGeneratorChildPlan,
): Promise<Array<{ rate: number; summary: ProduceSummary }>> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "bench/sections/loadGeneratorChild.ts", JSON.stringify(plan)],
    { cwd: ctx.root, stdio: ["ignore", "pipe", "inherit"] },
  );
  const lines: Array<{ rate: number; summary: ProduceSummary }> = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (line.startsWith("{")) lines.push(JSON.parse(line) as { rate: number; summary: ProduceSummary });
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0)
    throw new Error(`load generator child (${plan.sink}, ${plan.perRecord} per record) exited ${code}`);
  return lines;
}
