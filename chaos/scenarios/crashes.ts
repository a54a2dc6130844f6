// Scorer processes that die: a SIGKILL loop (at-least-once and exactly-once) and rebalances of a
// three-instance group. Static membership (KAFKA_GROUP_INSTANCE_ID, set by the fleet) is what
// lets a restarted instance take its partitions back before the session times out.
import { stallsByEvent, type RunEvent } from "../decisionAudit.js";
import { faultRun } from "../faultRun.js";
import { ms, outcome } from "../outcome.js";
import { check, requirement, type Scenario, type ScenarioContext } from "../scenario.js";

const STALL_TARGET_MS = 3_000;

/** `count` moments in [from, to), sorted, each at least `gapMs` after the previous. */
export function killMoments(
  count: number,
  fromMs: number,
  toMs: number,
  gapMs: number,
  random = Math.random,
): number[] {
  const span = toMs - fromMs - gapMs * (count - 1);
  if (span <= 0) throw new Error(`no room for ${count} kills ${gapMs} ms apart in ${toMs - fromMs} ms`);
  const offsets = Array.from({ length: count }, () => random() * span).sort((a, b) => a - b);
  return offsets.map((offset, i) => Math.round(fromMs + offset + i * gapMs));
}

function sigkillLoop(exactlyOnce: boolean): Scenario {
  return {
    name: exactlyOnce ? "sigkill-loop-exactly-once" : "sigkill-loop",
    summary: exactlyOnce
      ? "the SIGKILL loop with --exactly-once (KAFKA_EXACTLY_ONCE), decisions read with read_committed"
      : "10 SIGKILLs at random moments over 5 minutes at 2,000 tx/s, restarted each time",
    async run(ctx: ScenarioContext) {
      const rate = 2_000;
      const durationS = Math.max(20, Math.round(300 * ctx.scale));
      const kills = Math.max(1, Math.round(10 * ctx.scale));
      // A restart takes a few seconds; kills closer than that would hit a starting process.
      const moments = killMoments(kills, 5_000, (durationS - 5) * 1000, 8_000);
      let restarts = 0;
      const result = await faultRun(
        ctx,
        {
          label: exactlyOnce ? "killeos" : "kill",
          ratePerSecond: rate,
          durationS,
          ...(exactlyOnce ? { scorerEnv: { KAFKA_EXACTLY_ONCE: "true" } } : {}),
        },
        async ({ fleet, at, elapsedMs }) => {
          for (const moment of moments) {
            await at(moment);
            await fleet.stop("i1", "SIGKILL");
            ctx.log(`  SIGKILL at ${(elapsedMs() / 1000).toFixed(1)} s`);
            await fleet.start("i1");
            restarts++;
          }
        },
      );
      const d = result.decisions;
      return outcome(
        `${rate} tx/s × ${durationS} s, ${kills} SIGKILLs`,
        result,
        [
          exactlyOnce
            ? requirement("0 duplicates (read_committed)", d.duplicates === 0, String(d.duplicates))
            : check("duplicates counted (at-least-once)", true, String(d.duplicates)),
          requirement(
            `longest partition stall ≤ ${STALL_TARGET_MS / 1000} s`,
            d.longestStallMs <= STALL_TARGET_MS,
            ms(d.longestStallMs),
          ),
        ],
        [`${restarts} restarts, each waited until /readyz`],
      );
    },
  };
}

export const sigkillLoopScenario = sigkillLoop(false);
export const sigkillLoopExactlyOnceScenario = sigkillLoop(true);

export const rebalanceScenario: Scenario = {
  name: "rebalances",
  summary:
    "3 instances in one group; a 4th added, one stopped (SIGTERM), one SIGKILLed and restarted at once",
  async run(ctx) {
    const rate = 1_000;
    const durationS = Math.max(30, Math.round(120 * ctx.scale));
    const step = (durationS * 1000) / 4;
    // Each event's stall is measured on its own: an event never starts before the group has
    // had this long to settle after the previous one finished (a start slowed by a loaded
    // machine once put the stop and the SIGKILL inside one rebalance, which then waited out the
    // killed member's session: neither event's own stall).
    const settleMs = Math.min(10_000, step / 2);
    const events: RunEvent[] = [];
    const notes: string[] = [];
    const result = await faultRun(
      ctx,
      { label: "rebal", ratePerSecond: rate, durationS, instances: 3 },
      async ({ fleet, at, elapsedMs }) => {
        const after = async (plannedMs: number) => {
          const settledMs = elapsedMs() + settleMs;
          if (settledMs > plannedMs)
            notes.push(`event planned at ${ms(plannedMs)} moved to ${ms(settledMs)}`);
          await at(Math.max(plannedMs, settledMs));
        };
        await at(step);
        events.push({ name: "i4 added", atMs: Date.now() });
        const added = await fleet.start("i4");
        notes.push(`i4 ready ${ms(added.timeline.readyMs)} after spawn`);
        await after(2 * step);
        events.push({ name: "i2 stopped", atMs: Date.now() });
        await fleet.stop("i2", "SIGTERM");
        await after(3 * step);
        // An orchestrator restarts a killed instance; with static membership it takes its own
        // partitions back, no rebalance. A member gone for good waits out the session timeout
        // instead: test/integration/membership.test.ts measures that takeover.
        events.push({ name: "i3 SIGKILLed and restarted", atMs: Date.now() });
        await fleet.stop("i3", "SIGKILL");
        const restarted = await fleet.start("i3");
        const t = restarted.timeline;
        notes.push(
          `i3 ready ${ms(t.readyMs)} after spawn (${Object.entries(t.conditionsMetMs)
            .map(([name, at]) => `${name} ${ms(at)}`)
            .join(", ")})`,
        );
      },
    );
    const d = result.decisions;
    // Which event the longest stall came from: the figure to cut.
    for (const s of stallsByEvent(d.decidedTransactions, events))
      notes.push(
        s.event === "steady"
          ? `longest stall before any event: ${ms(s.longestMs)}`
          : `longest stall after "${s.event}": ${ms(s.longestMs)} (partition ${s.partition}, from ${ms(s.startedAfterMs)} after it)`,
      );
    notes.forEach((note) => ctx.log(`  ${note}`));
    return outcome(
      `${rate} tx/s × ${durationS} s, 3 → 4 → 3 instances, one SIGKILLed and restarted`,
      result,
      [
        requirement(
          `longest partition stall ≤ ${STALL_TARGET_MS / 1000} s`,
          d.longestStallMs <= STALL_TARGET_MS,
          ms(d.longestStallMs),
        ),
        check("duplicates counted (at-least-once)", true, String(d.duplicates)),
      ],
      [events.map((e) => e.name).join(", "), ...notes],
    );
  },
};
