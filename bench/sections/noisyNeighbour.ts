// 9. Noisy neighbour: the steady end-to-end run (1,000 tx/s by default) twice, side by side on
// fresh scorers: alone, then beside a CPU hog (another process spinning on one core at normal
// priority, as a compiler or a second service on the host would). The scorer, Kafka, Redis and
// the load generator share the remaining core.
import type { BenchContext } from "../support/benchContext.js";
import { startCpuHog } from "../support/cpuHog.js";
import { ScorerRig, runStep, type RateStep } from "./endToEnd.js";

export interface NoisyNeighbourResult {
  readonly rate: number;
  readonly alone: RateStep;
  readonly besideHog: RateStep;
}

export async function noisyNeighbour(ctx: BenchContext): Promise<NoisyNeighbourResult> {
  const { rate } = ctx.plan.noisyNeighbour;
  ctx.log(`noisy neighbour: ${rate} tx/s end to end, alone and beside a CPU hog`);
  const run = async (label: string, n: number, hog: boolean): Promise<RateStep> => {
    const rig = await ScorerRig.start(ctx, 100 + n);
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
  return { rate, alone, besideHog };
}
