// One scenario shape for a dependency slowed by a delaying TCP proxy (chaos/delayProxy.ts):
// open-loop load at 1,000 tx/s through a route that adds `delayMs` each way, and the decisions'
// p99 held to the budget. Kafka and Redis differ only in how their route is set up.
import { configKeyDefault } from "../../src/ops/configSchema.js";
import type { DecisionAudit } from "../decisionAudit.js";
import { faultRun, type FaultRunOptions } from "../faultRun.js";
import { ms, outcome } from "../outcome.js";
import { check, type Scenario, type ScenarioContext, type TargetCheck } from "../scenario.js";

const BUDGET_MS = 200;
const RATE = 1_000;
/** Below this much budget left when picked, the scorer's rules decide by design (scoring.minBudgetForModelMs). */
const MIN_BUDGET_FOR_MODEL_MS = configKeyDefault("scoring.minBudgetForModelMs") as number;
/** Of the transactions picked with that much budget left, the model must decide at least this share. */
const MODEL_SHARE_WHEN_AFFORDABLE = 0.95;

/** Where the run's scorers and load go instead of the direct endpoint, and how to take it down. */
export interface SlowRoute {
  readonly endpoints: Pick<FaultRunOptions, "kafkaBrokers" | "suiteBrokers" | "redisUrl">;
  close(): Promise<void>;
}

/**
 * How much of a decision's latency the slow link alone forces, when the link is Kafka: every
 * Kafka client of the run (the load generator too) goes through the proxy, and the latency is
 * measured from the record's scheduled send time to the decision's broker append time. On that
 * path: the generator's produce request (d), the scorer's fetch answer (d), and the decision's
 * produce request (d): 3d at best. A consumer has one fetch in flight per broker (the next
 * fetch's offsets come from this one's answer), and at 1,000 tx/s the broker answers each fetch
 * as soon as it arrives, so fetches cycle every 2d: a record appended just after an answer left
 * waits for that answer's trip back and the next fetch's trip there, 2d more. The p99 floor is
 * therefore ≈ 5d (+ the scorer's own milliseconds): 250 ms at +50 ms, 2.5 s at +500 ms — past a
 * 200 ms budget before the scorer has done anything.
 */
export const kafkaLinkFloor = (delayMs: number) => ({ minMs: 3 * delayMs, p99Ms: 5 * delayMs });

/** Share of the transactions picked with at least `MIN_BUDGET_FOR_MODEL_MS` left that the model decided. */
function modelShareWhenAffordable(d: DecisionAudit): { share: number; affordable: number } {
  let affordable = 0;
  let model = 0;
  for (const [arrivalMs, fallback] of d.arrivalsAndFallbacks) {
    if (BUDGET_MS - arrivalMs < MIN_BUDGET_FOR_MODEL_MS) continue;
    affordable++;
    if (!fallback) model++;
  }
  return { share: affordable === 0 ? 1 : model / affordable, affordable };
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
        const legs =
          `latency legs p50/p99: record timestamp → picked ${ms(d.legs.arrival.p50Ms)}/${ms(d.legs.arrival.p99Ms)}, ` +
          `decided → appended ${ms(d.legs.publish.p50Ms)}/${ms(d.legs.publish.p99Ms)}`;
        return outcome(
          `${RATE} tx/s × ${durationS} s, ${dependency} +${delayMs} ms`,
          result,
          dependency === "Kafka" ? kafkaTargets(d, delayMs) : [budgetCheck(d)],
          [legs],
        );
      } finally {
        await slow.close();
      }
    },
  };
}

const budgetCheck = (d: DecisionAudit): TargetCheck =>
  check(`p99 inside the ${BUDGET_MS} ms budget`, d.p99Ms <= BUDGET_MS, ms(d.p99Ms));

/**
 * Slow Kafka: the literal target (p99 ≤ 200 ms) is below the link's own floor (see
 * kafkaLinkFloor), so the scorer is held to the budget on top of that floor, and to letting the
 * model decide whatever arrives with budget for it.
 */
function kafkaTargets(d: DecisionAudit, delayMs: number): TargetCheck[] {
  const floor = kafkaLinkFloor(delayMs);
  const model = modelShareWhenAffordable(d);
  return [
    check(
      `p99 ≤ ${BUDGET_MS} ms budget + the link's p99 floor ≈ 5 × ${delayMs} ms (at best 3 × ${delayMs} ms; see slowDependency.ts)`,
      d.p99Ms <= BUDGET_MS + floor.p99Ms,
      `${ms(d.p99Ms)} (limit ${ms(BUDGET_MS + floor.p99Ms)}, floor ${ms(floor.minMs)}–${ms(floor.p99Ms)})`,
    ),
    check(
      `the model decides ≥ ${100 * MODEL_SHARE_WHEN_AFFORDABLE} % of what is picked with ≥ ${MIN_BUDGET_FOR_MODEL_MS} ms of budget left`,
      model.share >= MODEL_SHARE_WHEN_AFFORDABLE,
      `${(100 * model.share).toFixed(1)} % of ${model.affordable}`,
    ),
  ];
}
