// Thirty minutes at half the highest sustainable rate: memory must not grow past 10 %, the
// consumer lag must not grow, and p99 must be steady (each sixth of the run's p99 within 1.5 ×
// the first's). Only with --soak.
import { setTimeout as sleep } from "node:timers/promises";
import { p99ByWindow } from "../decisionAudit.js";
import { faultRun } from "../faultRun.js";
import { ms, outcome } from "../outcome.js";
import { check, type Scenario } from "../scenario.js";

export function soakScenario(ratePerSecond: number): Scenario {
  return {
    name: "soak",
    summary: `30 minutes at ${ratePerSecond} tx/s (half the highest sustainable rate)`,
    soakOnly: true,
    async run(ctx) {
      const durationS = Math.max(60, Math.round(1_800 * ctx.scale));
      const rss: number[] = [];
      const lag: number[] = [];
      const result = await faultRun(
        ctx,
        { label: "soak", ratePerSecond, durationS },
        async ({ fleet, elapsedMs }) => {
          while (elapsedMs() < durationS * 1000 - 15_000) {
            await sleep(15_000);
            const scorer = fleet.instance("i1");
            if (scorer === undefined) break;
            rss.push(await scorer.metric("process_resident_memory_bytes"));
            lag.push(await scorer.metric("fraud_consumer_lag"));
          }
        },
      );
      // Growth is judged after warm-up (the first minute: JIT, model, connection pools).
      const settled = rss.slice(4);
      const rssStart = settled[0] ?? Number.NaN;
      const rssEnd = Math.max(...settled.slice(-4));
      const growth = (rssEnd - rssStart) / rssStart;
      const lagEnd = Math.max(...lag.slice(-4));
      const lagStart = Math.max(...lag.slice(0, 4));
      const d = result.decisions;
      const windows = p99ByWindow(d.timeline, Math.max(60_000, (durationS * 1000) / 6));
      const steady = windows.every((p99) => p99 <= Math.max(1.5 * windows[0]!, 50));
      return outcome(
        `${ratePerSecond} tx/s × ${durationS} s`,
        result,
        [
          check(
            "RSS growth ≤ 10 %",
            growth <= 0.1,
            `${(rssStart / 2 ** 20).toFixed(0)} → ${(rssEnd / 2 ** 20).toFixed(0)} MiB (${(growth * 100).toFixed(1)} %)`,
          ),
          check(
            "no lag growth",
            lagEnd <= Math.max(lagStart, 2 * ratePerSecond * 0.2),
            `lag ${lagStart} → ${lagEnd} records`,
          ),
          check("p99 inside the budget", d.p99Ms <= 200, ms(d.p99Ms)),
          check("p99 steady (each sixth within 1.5 × the first)", steady, windows.map(ms).join(", ")),
        ],
        [`RSS samples every 15 s: ${rss.map((b) => (b / 2 ** 20).toFixed(0)).join(" ")} MiB`],
      );
    },
  };
}
