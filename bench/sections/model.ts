// 5. Model: the committed LSTM step, fp32 (model.onnx, what `serve` runs on every provider: its
// scores do not depend on batch neighbours) against int8 (model.int8.onnx, DynamicQuantizeLSTM,
// which quantizes each batch with that batch's own range), at the batch sizes of the plan, on ONNX
// Runtime's CPU provider with one intra-op thread as `serve` configures it. µs per transaction.
//
// Then the same fp32 step after the thread has been idle as long as a steady 1,000 tx/s leaves
// it between batches (the batch linger; bench/benchPlan.ts's STEADY_BATCH) against back to back:
// bench section 8's steady runs pay several times what a step costs in its drain, and this shows
// how much of that is the machine's, with no Redis, Kafka or scoring code around the step. A
// second kind of gap keeps the thread busy instead (a JavaScript loop reading the clock), so
// that the difference is not the thread having slept.
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { FP32_MODEL_FILE, INT8_MODEL_FILE, type Manifest } from "../../src/model/manifest.js";
import { OnnxStepSession } from "../../src/model/onnxStepSession.js";
import type { BenchContext } from "../support/benchContext.js";
import { alternatingRounds, median, round1, round3 } from "../support/alternatingRounds.js";
import { processCpuUs } from "../support/drainCpu.js";
import { verifyModelArtifact } from "../../src/model/verifyModelArtifact.js";
import { LatencyHistogram } from "../../src/tools/latencyHistogram.js";
import { MODEL_DIR } from "../support/benchScorer.js";

export interface ModelVariant {
  readonly precision: "fp32" | "int8";
  readonly batchSize: number;
  /** Median over rounds of each round's median step time, ÷ batch size: robust to the stalls a shared machine adds. */
  readonly usPerTransaction: number;
  /** Wall time over whole rounds ÷ transactions (median of rounds): stalls included. */
  readonly meanUsPerTransaction: number;
  readonly stepP50Us: number;
  readonly stepP99Us: number;
}

export interface ModelResult {
  readonly provider: "cpu";
  readonly featureCount: number;
  readonly hiddenSize: number;
  readonly variants: readonly ModelVariant[];
  /** fp32 ÷ int8 time per transaction, at batch 1 and at the largest batch. */
  readonly fp32OverInt8AtBatch1: number;
  readonly fp32OverInt8AtLargestBatch: number;
  /** batch 1 ÷ largest batch, time per transaction. */
  readonly batch1OverLargestInt8: number;
  readonly batch1OverLargestFp32: number;
  /** Absent from results recorded before it was measured. */
  readonly afterIdle?: StepAfterIdle;
}

/** One fp32 step's CPU (process CPU around it, µs), medians over `samples` of each kind. */
export interface StepAfterIdle {
  readonly batchSize: number;
  readonly gapMs: number;
  readonly samples: number;
  /** The last of a run of steps back to back. */
  readonly backToBackCpuUs: number;
  /** The first step after the thread slept `gapMs`. */
  readonly afterSleepCpuUs: number;
  /** The first step after the thread spun `gapMs` in a JavaScript loop. */
  readonly afterSpinCpuUs: number;
  readonly afterSleepOverBackToBack: number;
  readonly afterSpinOverBackToBack: number;
}

const openCpu = (file: string, { io, featureCount, hiddenSize }: Manifest) =>
  OnnxStepSession.open(file, {
    featureCount,
    hiddenSize,
    provider: "cpu",
    intraOpThreads: 1,
    names: {
      inputs: { x: io.inputs.x.name, h: io.inputs.h.name, c: io.inputs.c.name },
      outputs: { score: io.outputs.score.name, h: io.outputs.h.name, c: io.outputs.c.name },
    },
  });

type Step = (x: Float32Array, h: Float32Array, c: Float32Array, batch: number) => Promise<unknown>;

export async function model(ctx: BenchContext): Promise<ModelResult> {
  const { batchSizes, rounds, stepsPerRound } = ctx.plan.model;
  const dir = join(ctx.root, MODEL_DIR);
  const manifest = await verifyModelArtifact(dir, { trustedKeysDir: join(ctx.root, "models/trusted-keys") });
  const { featureCount: F, hiddenSize: H } = manifest;
  const fp32 = await openCpu(join(dir, FP32_MODEL_FILE), manifest);
  const int8 = await openCpu(join(dir, INT8_MODEL_FILE), manifest);
  ctx.log(
    `model: fp32 vs int8, batch ${batchSizes.join(" vs ")}, ${rounds} rounds of ${stepsPerRound} steps`,
  );
  try {
    const variants = batchSizes.flatMap((batch) =>
      (
        [
          ["int8", (x, h, c, b) => int8.step(x, h, c, b)],
          ["fp32", (x, h, c, b) => fp32.step(x, h, c, b)],
        ] as const satisfies ReadonlyArray<readonly [string, Step]>
      ).map(([precision, step]) => {
        const random = (n: number, scale: number) =>
          Float32Array.from({ length: n }, () => (Math.random() * 2 - 1) * scale);
        const x = random(batch * F, 1);
        const h = random(batch * H, 0.5);
        const c = random(batch * H, 0.5);
        const histogram = new LatencyHistogram();
        const roundMediansUs: number[] = [];
        return {
          precision,
          batch,
          histogram,
          roundMediansUs,
          name: `${precision}-b${batch}`,
          round: async () => {
            const thisRound = new LatencyHistogram();
            for (let i = 0; i < stepsPerRound; i++) {
              const t0 = performance.now();
              await step(x, h, c, batch);
              thisRound.recordMs(performance.now() - t0);
            }
            histogram.add(thisRound);
            roundMediansUs.push(thisRound.percentileMs(50) * 1000);
            return stepsPerRound * batch;
          },
        };
      }),
    );
    const timings = await alternatingRounds(variants, rounds, {
      afterWarmUp: () =>
        variants.forEach((v) => {
          v.histogram.reset();
          v.roundMediansUs.length = 0;
        }),
    });
    const results: ModelVariant[] = variants.map((v, i) => ({
      precision: v.precision,
      batchSize: v.batch,
      usPerTransaction: round3(median(v.roundMediansUs) / v.batch),
      meanUsPerTransaction: round3(timings[i]!.nsPerUnit / 1000),
      stepP50Us: round1(v.histogram.percentileMs(50) * 1000),
      stepP99Us: round1(v.histogram.percentileMs(99) * 1000),
    }));
    const at = (precision: string, batch: number) =>
      results.find((r) => r.precision === precision && r.batchSize === batch)!.usPerTransaction;
    const smallest = Math.min(...batchSizes);
    const largest = Math.max(...batchSizes);
    const result: ModelResult = {
      provider: "cpu",
      featureCount: F,
      hiddenSize: H,
      variants: results,
      fp32OverInt8AtBatch1: round3(at("fp32", smallest) / at("int8", smallest)),
      fp32OverInt8AtLargestBatch: round3(at("fp32", largest) / at("int8", largest)),
      batch1OverLargestInt8: round3(at("int8", smallest) / at("int8", largest)),
      batch1OverLargestFp32: round3(at("fp32", smallest) / at("fp32", largest)),
    };
    for (const r of results)
      ctx.log(
        `  ${r.precision} batch ${r.batchSize}: ${r.usPerTransaction} µs/tx (step p50 ${r.stepP50Us} µs)`,
      );
    const afterIdle = await stepAfterIdle(fp32, F, H, ctx.plan.model.afterIdle);
    ctx.log(
      `  fp32 batch ${afterIdle.batchSize}: ${afterIdle.backToBackCpuUs} µs of CPU back to back, ${afterIdle.afterSleepCpuUs} after ${afterIdle.gapMs} ms asleep, ${afterIdle.afterSpinCpuUs} after ${afterIdle.gapMs} ms spinning`,
    );
    return { ...result, afterIdle };
  } finally {
    await fp32.close();
    await int8.close();
  }
}

/**
 * Each sample: a few steps back to back (the last one measured), then a sleep of `gapMs` and one
 * step, then a spin of `gapMs` and one step, so the three kinds share the machine's drift.
 */
async function stepAfterIdle(
  session: OnnxStepSession,
  F: number,
  H: number,
  { batchSize, gapMs, samples }: { batchSize: number; gapMs: number; samples: number },
): Promise<StepAfterIdle> {
  const x = Float32Array.from({ length: batchSize * F }, () => Math.random() * 2 - 1);
  const h = new Float32Array(batchSize * H);
  const c = new Float32Array(batchSize * H);
  const stepCpuUs = async () => {
    const t0 = processCpuUs();
    await session.step(x, h, c, batchSize);
    return processCpuUs() - t0;
  };
  const spin = (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end);
  };
  const backToBack: number[] = [];
  const afterSleep: number[] = [];
  const afterSpin: number[] = [];
  for (let i = 0; i < samples; i++) {
    for (let k = 0; k < BACK_TO_BACK_STEPS - 1; k++) await session.step(x, h, c, batchSize);
    backToBack.push(await stepCpuUs());
    await sleep(gapMs);
    afterSleep.push(await stepCpuUs());
    spin(gapMs);
    afterSpin.push(await stepCpuUs());
  }
  const [b, sl, sp] = [median(backToBack), median(afterSleep), median(afterSpin)];
  return {
    batchSize,
    gapMs,
    samples,
    backToBackCpuUs: round1(b),
    afterSleepCpuUs: round1(sl),
    afterSpinCpuUs: round1(sp),
    afterSleepOverBackToBack: round3(sl / b),
    afterSpinOverBackToBack: round3(sp / b),
  };
}

/** Steps run back to back before the one measured as such. */
const BACK_TO_BACK_STEPS = 10;
