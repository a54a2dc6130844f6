// One scenario shape for a dependency slowed by a delaying TCP proxy (chaos/delayProxy.ts):
// open-loop load at 1,000 tx/s through a route that adds `delayMs` each way, and the decisions'
// p99 held to the budget. Kafka and Redis differ only in how their route is set up.
import { faultRun, type FaultRunOptions } from "../faultRun.js";
import { ms, outcome } from "../outcome.js";
import { check, type Scenario, type ScenarioContext } from "../scenario.js";

const BUDGET_MS = 200;
const RATE = 1_000;

/** Where the run's scorers and load go instead of the direct endpoint, and how to take it down. */
export interface SlowRoute {
  readonly endpoints: Pick<FaultRunOptions, "kafkaBrokers" | "suiteBrokers" | "redisUrl">;
  close(): Promise<void>;
}

export function slowDependency(
  dependency: "Kafka" | "Redis",
  delayMs: number,
  route: (ctx: ScenarioContext, delayMs: number) => Promise<SlowRoute>,
): Scenario {
  const name = dependency.toLowerCase();
  return {
    name: `slow-${name}-${delayMs}ms`,
    summary: `every ${dependency} round trip +${delayMs} ms each way, through a delaying TCP proxy`,
    async run(ctx) {
      const durationS = Math.max(20, Math.round(60 * ctx.scale));
      const slow = await route(ctx, delayMs);
      try {
        const result = await faultRun(
          ctx,
          { label: `slow${name}${delayMs}`, ratePerSecond: RATE, durationS, ...slow.endpoints },
          async () => {},
        );
        const d = result.decisions;
        return outcome(`${RATE} tx/s × ${durationS} s, ${dependency} +${delayMs} ms`, result, [
          check(`p99 inside the ${BUDGET_MS} ms budget`, d.p99Ms <= BUDGET_MS, ms(d.p99Ms)),
        ]);
      } finally {
        await slow.close();
      }
    },
  };
}
