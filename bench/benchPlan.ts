// How much of everything a run does: the full run (`npm run bench`, about ten minutes on a
// 2-core machine) and the smoke run (`npm run bench -- --smoke`, under a minute, which only
// proves the harness still works; its numbers mean little).
import { configKeyDefault } from "../src/ops/configSchema.js";

/** The steady rate of the product's promise (bench section 8's steady runs), tx/s. */
const STEADY_RATE = 1_000;

/**
 * A batch at STEADY_RATE and the idle before the next (section 5's afterIdle): the product's
 * batch linger apart, and as many transactions as arrive in it.
 */
const STEADY_BATCH = (() => {
  const lingerMs = configKeyDefault("scoring.lingerMs") as number;
  return { batchSize: Math.max(1, Math.round((STEADY_RATE * lingerMs) / 1_000)), gapMs: lingerMs };
})();

export interface BenchPlan {
  readonly smoke: boolean;
  readonly traffic: { readonly transactions: number; readonly seed: number };
  readonly endToEnd: {
    readonly rates: readonly number[];
    readonly warmupS: number;
    readonly measureS: number;
    /**
     * The product's promise (1,000 tx/s, p99 ≤ 50 ms, the model deciding) is judged over a minute,
     * not over the fixed rates' shorter window: this fixed rate is measured for `measureS` seconds.
     */
    readonly sustained: { readonly rate: number; readonly measureS: number };
    /** After the last send, how long decisions may take before the rest count as undecided. */
    readonly drainS: number;
    readonly searchProbes: number;
    readonly partitions: number;
    readonly budgetMs: number;
  };
  readonly decode: { readonly messages: number; readonly rounds: number };
  readonly batching: {
    readonly lowRate: number;
    readonly highRate: number;
    readonly warmupS: number;
    readonly measureS: number;
    readonly maxBatch: number;
    readonly dynamicMaxWaitMs: number;
  };
  readonly state: {
    readonly batchSizes: readonly number[];
    readonly rounds: number;
    readonly transactionsPerRound: number;
  };
  readonly model: {
    readonly batchSizes: readonly number[];
    readonly rounds: number;
    readonly stepsPerRound: number;
    /** One fp32 step after an idle gap against back to back (section 5's afterIdle). */
    readonly afterIdle: { readonly batchSize: number; readonly gapMs: number; readonly samples: number };
  };
  readonly ceiling: {
    readonly records: number;
    readonly perfRecords: number;
    readonly partitions: number;
    /** Drains of each kind, the order reversed every other round (bench/sections/ceiling.ts). */
    readonly rounds: number;
  };
  readonly noisyNeighbour: { readonly rate: number };
  /**
   * A promote at a steady rate: seconds before it and after it, and the p99 windows' width; and
   * the in-process rebuild cost: transactions scored to build histories, then measured ones.
   */
  readonly promote: {
    readonly rate: number;
    readonly beforeS: number;
    readonly afterS: number;
    readonly windowS: number;
    readonly historyTransactions: number;
    readonly measuredTransactions: number;
    readonly rounds: number;
  };
  readonly hotPath: {
    readonly drainTransactions: number;
    readonly warmupTransactions: number;
    readonly maxBatch: number;
    readonly steadyRate: number;
    readonly steadyS: number;
    readonly steadyWarmupS: number;
    /**
     * The state cache's cards in the issuer-scale pass, which pays a warm-up transaction on
     * about 2 × as many cards: serve's default (redis.stateCacheCards) unless told; the smoke
     * run's is small, so that its warm-up is.
     */
    readonly issuerScaleCachedCards?: number;
  };
  readonly kafkaClients: { readonly records: number; readonly partitions: number; readonly rounds: number };
  readonly coldStart: {
    readonly runsPerVariant: number;
    readonly transactions: number;
    readonly rate: number;
  };
  readonly loadGenerator: {
    /** Target rates, tx/s: up to ≥ 2× the highest the end-to-end search asks for. */
    readonly rates: readonly number[];
    readonly seconds: number;
    readonly warmupSeconds: number;
    readonly perRecord: readonly number[];
    readonly lingerMs: number;
    readonly partitions: number;
    readonly distinctTransactions: number;
  };
}

export const FULL_PLAN: BenchPlan = {
  smoke: false,
  traffic: { transactions: 100_000, seed: 42 },
  endToEnd: {
    rates: [1_000, 5_000, 10_000, 20_000],
    warmupS: 5,
    measureS: 20,
    sustained: { rate: 1_000, measureS: 60 },
    drainS: 10,
    searchProbes: 5,
    partitions: 12,
    budgetMs: 200,
  },
  decode: { messages: 20_000, rounds: 30 },
  batching: { lowRate: 200, highRate: 3_000, warmupS: 2, measureS: 10, maxBatch: 64, dynamicMaxWaitMs: 10 },
  state: { batchSizes: [1, 16, 64], rounds: 8, transactionsPerRound: 2_048 },
  model: {
    batchSizes: [1, 16, 64, 256],
    rounds: 20,
    stepsPerRound: 1_000,
    afterIdle: { ...STEADY_BATCH, samples: 200 },
  },
  ceiling: { records: 300_000, perfRecords: 500_000, partitions: 12, rounds: 2 },
  noisyNeighbour: { rate: 1_000 },
  // 15 s before (5 s of them warm-up), then a minute after: the rebuild cost of the first minute.
  promote: {
    rate: 1_000,
    beforeS: 15,
    afterS: 60,
    windowS: 5,
    historyTransactions: 16_000,
    measuredTransactions: 2_000,
    rounds: 6,
  },
  hotPath: {
    drainTransactions: 200_000,
    // Per-batch code runs ~300 times a second in a drain; after 10k transactions (156 batches)
    // V8 was still optimizing it in the measured pass (34.2/34.5 against 28.6/31.7 µs/tx after
    // 60k, alternating runs).
    warmupTransactions: 60_000,
    // The product's batch cap (scoring.maxBatch): a drain's batches are full ones.
    maxBatch: configKeyDefault("scoring.maxBatch") as number,
    steadyRate: STEADY_RATE,
    steadyS: 20,
    // At 200 batches/s V8 is still optimizing the per-batch functions for the first ~15 s; with
    // 3 s of warm-up that compilation landed in the measured window (22.6/24.4 % of a core
    // against 17.2/18.6 % after 20 s, same code, alternating runs): a start-up cost, not a
    // steady one. Cold start has its own section.
    // 50 s, not 20: some 20,000 transactions into the run, the state path's optimized code is
    // thrown away at once (V8's --trace-deopt: "wrong map" in readCardStates, decodeCardState,
    // advanceCardState, writeCardStates and a dozen more, "not a Smi" in writeU64; not the
    // positions' size, which a run with positions past Smi range from the start also met) and
    // compiled again over the next ~15 s: a window starting at 20 s held 0.6 s of optimizing
    // compilation (--trace-opt), one starting at 50 s about 0.1 s. Scorer's share less the timer,
    // four pairs alternating on 2026-12-07 (the last two reading Redis's CPU from /proc,
    // drainCpu.ts's redisCpuUs): 12.5 / 15.9 / 15.1 / 9.7 % after 20 s, 10.2 / 8.4 / 11.2 / 9.8 %
    // after 50 s.
    steadyWarmupS: 50,
  },
  kafkaClients: { records: 200_000, partitions: 12, rounds: 3 },
  // The first 3 s at the rate the product promises: a scorer started into load.
  coldStart: { runsPerVariant: 3, transactions: 3_000, rate: 1_000 },
  loadGenerator: {
    rates: [1_000, 10_000, 50_000, 100_000],
    seconds: 4,
    // At the lowest rate (100 wake-ups a second) V8 takes seconds to optimize the send loop: with
    // 1 s of warm-up that work still landed in the 1,000 tx/s step.
    warmupSeconds: 5,
    perRecord: [1, 16],
    lingerMs: 5,
    partitions: 12,
    distinctTransactions: 20_000,
  },
};

export const SMOKE_PLAN: BenchPlan = {
  smoke: true,
  traffic: { transactions: 5_000, seed: 42 },
  endToEnd: {
    rates: [300],
    warmupS: 1,
    measureS: 2,
    sustained: { rate: 300, measureS: 3 },
    drainS: 5,
    searchProbes: 1,
    partitions: 4,
    budgetMs: 200,
  },
  decode: { messages: 2_000, rounds: 3 },
  batching: { lowRate: 100, highRate: 1_000, warmupS: 0.3, measureS: 1, maxBatch: 64, dynamicMaxWaitMs: 10 },
  state: { batchSizes: [1, 16], rounds: 2, transactionsPerRound: 128 },
  model: {
    batchSizes: [1, 64],
    rounds: 2,
    stepsPerRound: 20,
    afterIdle: { ...STEADY_BATCH, samples: 3 },
  },
  ceiling: { records: 3_000, perfRecords: 20_000, partitions: 4, rounds: 2 },
  noisyNeighbour: { rate: 300 },
  promote: {
    rate: 300,
    beforeS: 4,
    afterS: 6,
    windowS: 2,
    historyTransactions: 1_000,
    measuredTransactions: 200,
    rounds: 2,
  },
  hotPath: {
    drainTransactions: 5_000,
    warmupTransactions: 500,
    maxBatch: 64,
    steadyRate: STEADY_RATE,
    steadyS: 2,
    steadyWarmupS: 0.5,
    issuerScaleCachedCards: 1_000,
  },
  kafkaClients: { records: 5_000, partitions: 4, rounds: 1 },
  coldStart: { runsPerVariant: 1, transactions: 10, rate: 20 },
  loadGenerator: {
    rates: [2_000],
    seconds: 1,
    warmupSeconds: 0.3,
    perRecord: [1, 16],
    lingerMs: 5,
    partitions: 4,
    distinctTransactions: 2_000,
  },
};
