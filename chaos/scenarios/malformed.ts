// A malformed corpus mixed into good traffic: every bad record in the dead-letter topic with a
// reason, no scorer crash, and good traffic's p99 within 20 % of a clean run of the same load
// (run first, in the same scenario, so both see the same machine).
import { setTimeout as sleep } from "node:timers/promises";
import type { OutgoingRecord } from "../../src/stream/kafkaPort.js";
import { MALFORMED_HEADER } from "../decisionAudit.js";
import { faultRun } from "../faultRun.js";
import { malformedCorpus, type MalformedRecord } from "../malformedCorpus.js";
import { ms, outcome } from "../outcome.js";
import { chaosPort } from "../runTopics.js";
import { check, requirement, type Scenario } from "../scenario.js";

const P99_TOLERANCE = 1.2;

export const malformedScenario: Scenario = {
  name: "malformed",
  summary: "100,000 malformed records mixed into good traffic",
  async run(ctx) {
    const rate = 1_000;
    const durationS = Math.max(20, Math.round(60 * ctx.scale));
    const badCount = Math.max(1_000, Math.round(100_000 * ctx.scale));
    const nearLimit = Math.max(2, Math.round(10 * ctx.scale));

    const clean = await faultRun(ctx, { label: "clean", ratePerSecond: rate, durationS }, async () => {});
    ctx.log(`  clean run: p99 ${ms(clean.decisions.p99Ms)}`);

    let dead: string[] = [];
    const mixed = await faultRun(
      ctx,
      { label: "malformed", ratePerSecond: rate, durationS },
      async ({ fleet, topics, brokers, at }) => {
        const sink = chaosPort(brokers).sink();
        try {
          // Spread over the first 80 % of the load, in slices, so bad and good records interleave.
          const slices = 40;
          const perSlice = Math.ceil(badCount / slices);
          const corpus = malformedCorpus(badCount, { nearLimit });
          for (let slice = 0; slice < slices; slice++) {
            await at(((slice * 0.8) / slices) * durationS * 1000);
            const batch: MalformedRecord[] = [];
            for (let k = 0; k < perSlice; k++) {
              const next = corpus.next();
              if (next.done) break;
              batch.push(next.value);
            }
            // The sink sends a ~1 MB record alone: a request of several would pass the broker's limit.
            await sink.publish(batch.map((r) => toMessage(topics.transactions, r)));
          }
        } finally {
          await sink.close();
        }
        await sleep(2_000);
        dead = await fleet.dead();
      },
    );
    const d = mixed.decisions;
    return outcome(`${rate} tx/s × ${durationS} s + ${badCount} malformed`, mixed, [
      requirement(
        "100 % of malformed records in the DLQ",
        d.malformedSent === badCount && d.malformedInDlq === badCount,
        `${d.malformedInDlq} of ${d.malformedSent} (${badCount} produced)`,
      ),
      requirement(
        "every DLQ record has a reason header",
        d.malformedWithoutReason === 0,
        `${d.malformedWithoutReason} without`,
      ),
      requirement(
        "0 scorer crashes",
        dead.length === 0,
        dead.length === 0 ? "0" : `dead: ${dead.join(", ")}`,
      ),
      check(
        "good traffic p99 within 20 % of a clean run",
        d.p99Ms <= clean.decisions.p99Ms * P99_TOLERANCE,
        `${ms(d.p99Ms)} vs clean ${ms(clean.decisions.p99Ms)}`,
      ),
    ]);
  },
};

const toMessage = (topic: string, r: MalformedRecord): OutgoingRecord => ({
  topic,
  key: r.key,
  value: r.value,
  headers: { [MALFORMED_HEADER]: r.kind },
});
