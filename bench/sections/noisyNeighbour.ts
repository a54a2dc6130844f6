// 9. Noisy neighbour: the steady end-to-end run (1,000 tx/s by default) twice, side by side on
// fresh scorers: alone, then beside a CPU hog (another process spinning on one core at normal
// priority, as a compiler or a second service on the host would). The scorer, Kafka, Redis and
// the load generator share the remaining core. Then once more alone with `--exactly-once`
// (consume, score and produce in Kafka transactions), whose every delivery waits for its
// transaction's commit before the next is taken.
import type { BenchContext } from "../support/benchContext.js";
import { startCpuHog } from "../support/cpuHog.js";
import { ScorerRig, runStep, type RateStep } from "./endToEnd.js";

export interface NoisyNeighbourResult {
  readonly rate: number;
  readonly alone: RateStep;
  readonly besideHog: RateStep;
  /** Alone, with --exactly-once (absent from reports before 2026-12-05). */
  readonly exactlyOnce?: RateStep;
}

export async function noisyNeighbour(ctx: BenchContext): Promise<NoisyNeighbourResult> {
  const { rate } = ctx.plan.noisyNeighbour;
  ctx.log(`noisy neighbour: ${rate} tx/s end to end, alone, beside a CPU hog, and with --exactly-once`);
  const run = async (
    label: string,
    n: number,
    hog: boolean,
    env?: Record<string, string>,
  ): Promise<RateStep> => {
    const rig = await ScorerRig.start(ctx, 100 + n, env);
    const stopHog = hog ? startCpuHog() : undefined;
    try {
      ctx.log(`  ${label}:`);
      return await runStep(ctx, rig, rate);
    } finally {
      await stopHog?.();
      rig.dirty = true;
      await rig.stop();
    }
  };
  const alone = await run("alone", 0, false);
  const besideHog = await run("beside a CPU hog", 1, true);
  const exactlyOnce = await run("alone, --exactly-once", 2, false, {
    KAFKA_EXACTLY_ONCE: "true",
    KAFKA_GROUP_INSTANCE_ID: `${ctx.namespace("e2e-eos")}-1`,
  });
  return { rate, alone, besideHog, exactlyOnce };
}
