import fc from "fast-check";
import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { BucketHistogram } from "../../../src/ops/bucketHistogram.js";

const BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1];

/** The same observations through prom-client's Histogram and through BucketHistogram. */
async function bothExpositions(
  observations: ReadonlyArray<{ stage: string; value: number }>,
  unlabelled: readonly number[],
  zeroed: readonly string[],
): Promise<[string, string]> {
  const reference = new Registry();
  const ours = new Registry();
  const refStage = new Histogram({
    name: "t_stage_seconds",
    help: "by stage",
    labelNames: ["stage"],
    buckets: BUCKETS,
    registers: [reference],
  });
  const refPlain = new Histogram({
    name: "t_plain_seconds",
    help: "plain",
    buckets: BUCKETS,
    registers: [reference],
  });
  const stage = new BucketHistogram({
    name: "t_stage_seconds",
    help: "by stage",
    labelNames: ["stage"],
    buckets: BUCKETS,
    registers: [ours],
  });
  const plain = new BucketHistogram({
    name: "t_plain_seconds",
    help: "plain",
    buckets: BUCKETS,
    registers: [ours],
  });
  for (const s of zeroed) {
    refStage.zero({ stage: s });
    stage.labels(s);
  }
  for (const { stage: s, value } of observations) {
    refStage.labels(s).observe(value);
    stage.labels(s).observe(value);
  }
  for (const value of unlabelled) {
    refPlain.observe(value);
    plain.observe(value);
  }
  return [await reference.metrics(), await ours.metrics()];
}

describe("BucketHistogram", () => {
  it("exports exactly what prom-client's Histogram exports for the same observations", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            stage: fc.constantFrom("model", "queue", "state_read"),
            // On the bounds, between them, above the last one.
            value: fc.oneof(fc.constantFrom(...BUCKETS, 0, 2.5), fc.double({ min: 0, max: 3, noNaN: true })),
          }),
          { maxLength: 60 },
        ),
        fc.array(fc.double({ min: 0, max: 3, noNaN: true }), { maxLength: 20 }),
        fc.subarray(["decode", "model", "produce"]),
        async (observations, unlabelled, zeroed) => {
          // Stage series in the reference appear in first-touch order; ours too.
          const [reference, ours] = await bothExpositions(observations, unlabelled, zeroed);
          expect(ours).toBe(reference);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("exports a histogram without labels at zero before anything is observed", async () => {
    const [reference, ours] = await bothExpositions([], [], []);
    expect(ours).toBe(reference);
    expect(ours).toContain('t_plain_seconds_bucket{le="+Inf"} 0');
  });

  it("refuses a value that is not a finite number, as prom-client does", () => {
    const h = new BucketHistogram({ name: "t_seconds", help: "t", buckets: BUCKETS });
    expect(() => h.observe(Number.NaN)).toThrow(TypeError);
    expect(() => h.observe(Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(() => new BucketHistogram({ name: "t2", help: "t", buckets: [1, 1] })).toThrow(RangeError);
    const labelled = new BucketHistogram({ name: "t3", help: "t", buckets: BUCKETS, labelNames: ["stage"] });
    expect(() => labelled.observe(0.01)).toThrow(TypeError);
    expect(() => labelled.labels()).toThrow(RangeError);
  });
});
