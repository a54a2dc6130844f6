// 8. Hot path: where the CPU goes between the consumer and the producer, in process, against the
// real Redis, with the committed model and rule set. Two runs:
//   - a drain: a backlog scored as fast as the loop goes, CPU µs per transaction split by stage
//     (scoreBatch's own stage timer is handed a clock that reads process CPU time instead of the
//     wall, so its per-batch stage times become CPU times), plus the top self-time frames of a
//     CPU profile of the drain;
//   - steady rates (1,000 tx/s by default, alone and beside a CPU hog): share of a core, p99 from
//     arrival to decision, the model's share of decisions and the event-loop delay.
// Consume, produce and commit are the Kafka port's (src/stream/kafka/); their slots stay empty here.
import { Session } from "node:inspector/promises";
import {
  constants,
  monitorEventLoopDelay,
  PerformanceObserver,
  type PerformanceEntry,
} from "node:perf_hooks";
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { encodeDecisionRecord } from "../../src/codec/decisionRecord.js";
import { joinDelimitedFrames } from "../../src/codec/delimited.js";
import { encodeTransactionPayload, Transaction } from "../../src/codec/messages.js";
import type { DecisionInit } from "../../src/codec/messages.js";
import { CachedCardStateStore, withWrittenStatesCached } from "../../src/features/cachedCardStateStore.js";
import { FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import { RedisCardStateStore } from "../../src/state/redisCardStateStore.js";
import type { TransactionInit } from "../../src/codec/messages.js";
import type { TrafficSource } from "../../src/tools/traffic/trafficSource.js";
import { decodeTransactionRecord } from "../../src/ingest/decodeTransactionRecord.js";
import { computeFeatureHashes } from "../../src/ingest/featureHashes.js";
import { FALLBACK_CAUSE_LABELS, ScorerMetrics } from "../../src/ops/metrics.js";
import { streamPosition, systemClock, type Clock } from "../../src/scoring/ports.js";
import { decideBatch, type ScoringContext, type ScoringItem } from "../../src/scoring/scoreBatch.js";
import { ScoringQueue } from "../../src/stream/scoringQueue.js";
import { configKeyDefault } from "../../src/ops/configSchema.js";
import type { BenchContext } from "../support/benchContext.js";
import { round1, round3 } from "../support/alternatingRounds.js";
import { startCpuHog } from "../support/cpuHog.js";
import { loadScoringParts, scoringContext, type ScoringParts } from "../support/inProcessScoring.js";
import { LatencyHistogram } from "../../src/tools/latencyHistogram.js";
import { processCpuUs, redisCpuUs } from "../support/drainCpu.js";

/** CPU µs per transaction, by stage; null where the stage is not in this process's path. */
export interface StageCpu {
  readonly consume: null;
  readonly decodeAndHashes: number;
  readonly stateRead: number;
  readonly features: number;
  readonly model: number;
  readonly policy: number;
  readonly stateWrite: number;
  readonly encode: number;
  readonly metrics: number;
  /** Inside scoreBatch but outside its timed stages (triage, decisions, allocation). */
  readonly scoringOther: number;
  readonly produce: null;
  readonly commit: null;
}

export interface ProfileFrame {
  readonly name: string;
  readonly where: string;
  readonly selfPercent: number;
}

export interface HotPathDrain {
  readonly transactions: number;
  readonly maxBatch: number;
  readonly seconds: number;
  readonly transactionsPerSecond: number;
  /** process.cpuUsage over the drain ÷ transactions (no profiler, no per-stage CPU reads). */
  readonly cpuUsPerTransaction: number;
  /** Redis's own CPU over the same drain ÷ transactions (absent in results from before it was measured). */
  readonly redisCpuUsPerTransaction?: number;
  /** The instrumented pass the stages and the profile come from, and what it cost per transaction. */
  readonly split?: { readonly transactions: number; readonly cpuUsPerTransaction: number };
  readonly stages: StageCpu;
  readonly modelShare: number;
  readonly topFrames: readonly ProfileFrame[];
  /** Self time by owner: a package under node_modules, a src/ folder, or (gc)/(program)/(idle). */
  readonly owners: Readonly<Record<string, number>>;
  /** What the drain allocates, from a third pass under V8's sampling heap profiler. */
  readonly allocation?: HotPathAllocation;
  /** The collections of the headline pass (absent in results from before they were counted). */
  readonly gc?: HotPathCollections;
  /** Of the cards the drain looked up (absent in results from before they were counted). */
  readonly reads?: CardReads;
  /** The same drain at an issuer's scale (absent in results from before it ran). */
  readonly issuerScale?: HotPathIssuerScaleDrain;
}

/** Cards looked up: served from memory, or read from Redis and found there or not (new cards). */
export interface CardReads {
  readonly fromMemory: number;
  readonly found: number;
  readonly absent: number;
}

const readsSince = (before: CardReads, after: CardReads): CardReads => ({
  fromMemory: after.fromMemory - before.fromMemory,
  found: after.found - before.found,
  absent: after.absent - before.absent,
});

/**
 * A drain at an issuer's scale: more cards than serve keeps in memory (redis.stateCacheCards),
 * each paying less often, so that most cards' states are fetched from Redis, their MACs verified
 * and their bytes decoded, and the cache drops a card for each it keeps. The headline drain's
 * 5,000 cards all stay in memory; an issuer's millions, each paying every few hours or days, would
 * not.
 */
export interface HotPathIssuerScaleDrain {
  readonly cards: number;
  /**
   * A simulated card's transactions are paid by one of this many cards of its own, another one
   * every blockTransactions transactions of the traffic, in turn (harness).
   */
  readonly cardVariants: number;
  readonly blockTransactions: number;
  readonly cachedCards: number;
  readonly transactions: number;
  /** Of the cards the measured pass looked up. */
  readonly reads: CardReads;
  readonly transactionsPerSecond: number;
  readonly cpuUsPerTransaction: number;
  readonly redisCpuUsPerTransaction: number;
  readonly modelShare: number;
}

/**
 * The garbage collections V8 reported during the drain's headline pass (perf_hooks "gc" entries):
 * how many, of which kind, and the main thread's pauses for them, in all and as a share of the
 * pass's wall time. Helper threads' share of a collection (parallel scavenging, concurrent
 * marking) is not in the pauses; it is in the process's CPU.
 */
export interface HotPathCollections {
  readonly minor: number;
  readonly major: number;
  /** Incremental marking steps and weak-callback runs. */
  readonly other: number;
  readonly pauseMs: number;
  readonly pauseShareOfWall: number;
}

/**
 * Bytes allocated per transaction and where, objects the garbage collector has already freed
 * included: what the collector's share of the CPU comes from. Sites' and owners' shares are of
 * the sampled bytes.
 */
export interface HotPathAllocation {
  readonly transactions: number;
  readonly samplingIntervalBytes: number;
  readonly bytesPerTransaction: number;
  readonly topSites: readonly ProfileFrame[];
  readonly owners: Readonly<Record<string, number>>;
}

export interface HotPathSteady {
  readonly label: string;
  readonly rate: number;
  readonly seconds: number;
  /** Seconds at the same rate before the measured window (JIT warm-up). */
  readonly warmupS?: number;
  readonly decisions: number;
  /** Share of one core used by this process. */
  readonly corePercent: number;
  /**
   * The same 1 ms arrival timer run alone just before (no ingest, no scoring): what the harness
   * costs by itself on this machine, where each timer wake-up costs tens of µs.
   */
  readonly arrivalTimerCorePercent?: number;
  /** corePercent less the arrival timer alone: the scorer's own share. */
  readonly scorerCorePercent?: number;
  readonly cpuUsPerTransaction: number;
  /** Redis's own CPU over the window: share of a core, and ÷ transactions (absent before it was measured). */
  readonly redisCorePercent?: number;
  readonly redisCpuUsPerTransaction?: number;
  /** Transactions per scoring batch, as the scoring queue formed them with this linger. */
  readonly meanBatch?: number;
  readonly lingerMs?: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly modelShare: number;
  readonly fallbackCauses: Readonly<Record<string, number>>;
  readonly eventLoopDelayMs: { readonly p50: number; readonly p99: number; readonly max: number };
}

/**
 * Where the main thread's time goes at a steady rate: a run of its own (the profiler's sampling
 * costs CPU of its own, so the steady rows above run without it), profiled over its measured
 * window only. Shares are of the main thread's busy samples, (idle) left out: at 1,000 tx/s the
 * thread is idle most of the time, and what matters is what the rest is spent on.
 */
export interface HotPathSteadyProfile {
  readonly rate: number;
  readonly seconds: number;
  readonly samplingIntervalUs: number;
  /** Share of the window's samples in which the main thread was busy. */
  readonly busyPercent: number;
  readonly topFrames: readonly ProfileFrame[];
  readonly owners: Readonly<Record<string, number>>;
}

export interface HotPathResult {
  readonly drain: HotPathDrain;
  readonly steady: readonly HotPathSteady[];
  /** Absent in results from before it was measured. */
  readonly steadyProfile?: HotPathSteadyProfile;
}

/** process CPU time (user + system, every thread) as the stage timer's clock. */
const cpuClock: Clock = {
  nowMs: () => Date.now(),
  monotonicUs: processCpuUs,
};

interface Harness {
  readonly context: ScoringContext & { shutdown(): void };
  readonly metrics: ScorerMetrics;
  readonly redis: Redis;
  readonly records: readonly Buffer[];
  /** Cards looked up so far. */
  readonly reads: () => CardReads;
}

const STATE_TTL_MS = 900_000;

async function harness(
  ctx: BenchContext,
  parts: ScoringParts,
  label: string,
  n: number,
  clock: Clock,
  /** The transactions to score, from the n taken from the bench's traffic (those, unless told). */
  transactionsOf: (source: TrafficSource) => readonly TransactionInit[] = (source) =>
    Array.from({ length: source.size }, (_, i) => source.at(i).tx),
  maxCards = configKeyDefault("redis.stateCacheCards") as number,
) {
  const redis = new Redis(ctx.endpoints.redisUrl, { maxRetriesPerRequest: 1 });
  const store = new RedisCardStateStore({
    redis,
    namespace: ctx.namespace(label),
    modelVersion: parts.model.modelVersion,
    featureSchemaVersion: FEATURE_SCHEMA_VERSION,
    hmacKey: randomBytes(32),
    ttlMs: STATE_TTL_MS,
  });
  // Serve's store: the states it writes kept in memory, with serve's defaults (unless told).
  const served = withWrittenStatesCached(store, { maxCards, stateTtlMs: STATE_TTL_MS });
  const base = scoringContext(parts, served);
  const context = { ...base, clock, explainTopFeatures: 3 };
  const transactions = transactionsOf(ctx.traffic.take(n));
  const records = transactions.map((tx) =>
    joinDelimitedFrames([encodeTransactionPayload(Transaction.create(tx))]),
  );
  const reads = () => ({
    fromMemory: served instanceof CachedCardStateStore ? served.stats.hits : 0,
    found: store.stats.hits,
    absent: store.stats.misses,
  });
  const metrics = new ScorerMetrics({ defaultMetrics: false });
  return { context, metrics, redis, records, reads } satisfies Harness;
}

const DECODE_OPTIONS = { transactionSchemaIds: new Set<number>() };

/** What the consumer does per record: decode and validate, hashes once. */
function ingest(record: Buffer, offset: number, budgetStartMs: number): ScoringItem[] {
  const decoded = decodeTransactionRecord(record, DECODE_OPTIONS);
  if (!decoded.ok) throw new Error(`bench record ${offset} does not decode: ${decoded.error.message}`);
  return decoded.value.map(({ tx, payload }, frame) => ({
    tx,
    payload,
    hashes: computeFeatureHashes(tx),
    position: streamPosition(offset, frame),
    budgetStartMs,
    decodeUs: 0,
  }));
}

/** The records [start, end) as the consumer hands them over, all picked up now. */
function ingestRange(records: readonly Buffer[], start: number, end: number): ScoringItem[] {
  const now = Date.now();
  const items: ScoringItem[] = [];
  for (let i = start; i < end; i++) for (const item of ingest(records[i]!, i, now)) items.push(item);
  return items;
}

/** What the producer's encoder does per decision (DecisionProducer.encode). */
const encodeDecision = (d: DecisionInit) => encodeDecisionRecord(d, 1);

export async function hotPath(ctx: BenchContext): Promise<HotPathResult> {
  const plan = ctx.plan.hotPath;
  ctx.log(`hotPath: in-process drain of ${plan.drainTransactions} transactions, batches of ${plan.maxBatch}`);
  const parts = await loadScoringParts(ctx.root);
  const drain = await runDrain(ctx, parts);
  ctx.log(
    `  drain: ${drain.cpuUsPerTransaction} µs CPU/tx, ${drain.transactionsPerSecond} tx/s, model ${drain.modelShare}`,
  );
  const steady: HotPathSteady[] = [];
  for (const hog of [false, true]) {
    const label = hog ? `${plan.steadyRate} tx/s beside a CPU hog` : `${plan.steadyRate} tx/s`;
    const stopHog = hog ? startCpuHog() : undefined;
    try {
      const run = await runSteady(ctx, parts, label, plan.steadyRate, plan.steadyS);
      steady.push(run);
      ctx.log(
        `  ${label}: ${run.corePercent} % of a core, p99 ${run.p99Ms} ms, model ${run.modelShare}, loop delay p99 ${run.eventLoopDelayMs.p99} ms`,
      );
    } finally {
      await stopHog?.();
    }
  }
  const profiled = await runSteady(
    ctx,
    parts,
    `${plan.steadyRate} tx/s, profiled`,
    plan.steadyRate,
    plan.steadyS,
    {
      profile: true,
    },
  );
  const steadyProfile = profiled.profile;
  if (steadyProfile !== undefined)
    ctx.log(
      `  profiled: main thread busy ${steadyProfile.busyPercent} %, top ${steadyProfile.topFrames
        .slice(0, 3)
        .map((f) => `${f.name} ${f.selfPercent} %`)
        .join(", ")}`,
    );
  await parts.model.close?.();
  return { drain, steady, ...(steadyProfile === undefined ? {} : { steadyProfile }) };
}

export async function runDrain(ctx: BenchContext, parts: ScoringParts): Promise<HotPathDrain> {
  const { drainTransactions: n, maxBatch, warmupTransactions } = ctx.plan.hotPath;
  // Two passes over fresh transactions: the headline pass is the scorer alone (wall-clock stage
  // timer, no profiler, no per-batch CPU reads); the split pass reads process CPU around every
  // stage and runs the sampling profiler, which costs several µs per transaction of its own.
  const split = Math.max(maxBatch, Math.floor(n / 2));
  // A third pass, plain, under the sampling heap profiler (which slows what it samples).
  const allocated = Math.max(maxBatch, Math.floor(n / 4));
  const h = await harness(ctx, parts, "hotpath-drain", warmupTransactions + n + split + allocated, cpuClock);
  const plain = { ...h.context, clock: systemClock };
  const totals = { decode: 0, encode: 0, metrics: 0, scoring: 0 };
  const stage = { stateRead: 0, features: 0, model: 0, policy: 0, stateWrite: 0 };
  let modelDecided = 0;
  const writesSettled = async () => await h.context.writesInFlight?.settled();
  const runPlain = async (from: number, to: number) => {
    modelDecided += await plainPass(h, plain, maxBatch, from, to);
  };
  const runSplit = async (from: number, to: number) => {
    for (let start = from; start < to; start += maxBatch) {
      const end = Math.min(to, start + maxBatch);
      const c0 = processCpuUs();
      const items = ingestRange(h.records, start, end);
      const c1 = processCpuUs();
      const { decisions } = await decideBatch(items, h.context);
      const c2 = processCpuUs();
      for (const d of decisions) encodeDecision(d);
      const c3 = processCpuUs();
      h.metrics.observeBatchSize(decisions.length);
      h.metrics.observeDecisions(decisions, Date.now());
      const c4 = processCpuUs();
      totals.decode += c1 - c0;
      totals.scoring += c2 - c1;
      totals.encode += c3 - c2;
      totals.metrics += c4 - c3;
      const t = decisions[0]?.timings;
      if (t) {
        stage.stateRead += t.stateReadUs ?? 0;
        stage.features += t.featuresUs ?? 0;
        stage.model += t.modelUs ?? 0;
        stage.policy += t.policyUs ?? 0;
        stage.stateWrite += t.stateWriteUs ?? 0;
      }
    }
    await writesSettled();
  };
  try {
    await runPlain(0, warmupTransactions);
    modelDecided = 0;
    const reads0 = h.reads();
    const redis0 = await redisCpuUs(ctx.redisCpuSource);
    const collections = countCollections();
    const cpu0 = processCpuUs();
    const t0 = performance.now();
    await runPlain(warmupTransactions, warmupTransactions + n);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = processCpuUs() - cpu0;
    const gc = await collections.stop(seconds);
    const redisCpu = (await redisCpuUs(ctx.redisCpuSource)) - redis0;
    const reads = readsSince(reads0, h.reads());
    // Read now: the allocation pass below runs runPlain again, which counts on.
    const modelShare = round3(modelDecided / n);
    const session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 200 });
    await session.post("Profiler.start");
    const splitCpu0 = processCpuUs();
    await runSplit(warmupTransactions + n, warmupTransactions + n + split);
    const splitCpu = processCpuUs() - splitCpu0;
    const { profile } = await session.post("Profiler.stop");
    const allocationFrom = warmupTransactions + n + split;
    const allocation = await sampleAllocation(session, ctx.root, allocated, () =>
      runPlain(allocationFrom, allocationFrom + allocated),
    );
    session.disconnect();
    const issuerScale = await runIssuerScaleDrain(ctx, parts, Math.floor(n / 2));
    const perTx = (us: number) => round3(us / split);
    const timed = stage.stateRead + stage.features + stage.model + stage.policy + stage.stateWrite;
    const { topFrames, owners } = summariseProfile(profile, ctx.root);
    return {
      transactions: n,
      maxBatch,
      seconds: round3(seconds),
      transactionsPerSecond: Math.round(n / seconds),
      cpuUsPerTransaction: round3(cpu / n),
      redisCpuUsPerTransaction: round3(redisCpu / n),
      split: { transactions: split, cpuUsPerTransaction: perTx(splitCpu) },
      stages: {
        consume: null,
        decodeAndHashes: perTx(totals.decode),
        stateRead: perTx(stage.stateRead),
        features: perTx(stage.features),
        model: perTx(stage.model),
        policy: perTx(stage.policy),
        stateWrite: perTx(stage.stateWrite),
        encode: perTx(totals.encode),
        metrics: perTx(totals.metrics),
        scoringOther: perTx(Math.max(0, totals.scoring - timed)),
        produce: null,
        commit: null,
      },
      modelShare,
      topFrames,
      owners,
      allocation,
      gc,
      reads,
      issuerScale,
    };
  } finally {
    h.context.shutdown();
    h.redis.disconnect();
  }
}

/**
 * Batches [from, to) of the harness's records decided as the scoring queue runs them: the next
 * batch starts once this one's decisions are out, its state write settling behind them (each
 * batch, once read, waits for the writes before it). Returns how many the model decided.
 */
async function plainPass(
  h: Harness,
  context: ScoringContext,
  maxBatch: number,
  from: number,
  to: number,
): Promise<number> {
  let modelDecided = 0;
  for (let start = from; start < to; start += maxBatch) {
    const end = Math.min(to, start + maxBatch);
    const items = ingestRange(h.records, start, end);
    const { decisions } = await decideBatch(items, context);
    for (const d of decisions) encodeDecision(d);
    h.metrics.observeBatchSize(decisions.length);
    h.metrics.observeDecisions(decisions, Date.now());
    for (const d of decisions) if (!d.fallback) modelDecided++;
  }
  await context.writesInFlight?.settled();
  return modelDecided;
}

/**
 * The headline drain's plain pass over n fresh transactions at an issuer's scale. The simulated
 * cards are split into variants, each a card of its own (its id suffixed): the traffic's
 * transactions [b × block, (b + 1) × block) are paid by variant b mod cardVariants of their card,
 * so a card pays in bursts, as the simulated ones do, then rests while cardVariants - 1 blocks of
 * other cards pay. A warm-up first pays one transaction on every variant of every card, variant
 * by variant, so that every card has a state in Redis and those the pass reaches first are the
 * ones the cache dropped longest ago. There are enough variants that the cache holds none of the
 * pass's cards when it starts and the pass meets each variant in one block only: a card's first
 * transaction in the pass is fetched from Redis, the rest of its burst served from memory.
 */
async function runIssuerScaleDrain(
  ctx: BenchContext,
  parts: ScoringParts,
  n: number,
): Promise<HotPathIssuerScaleDrain> {
  const { maxBatch } = ctx.plan.hotPath;
  const cachedCards =
    ctx.plan.hotPath.issuerScaleCachedCards ?? (configKeyDefault("redis.stateCacheCards") as number);
  const base = ctx.traffic.source;
  const firstOfCard = new Map<string, TransactionInit>();
  for (let i = 0; i < base.size; i++) {
    const tx = base.at(i).tx;
    if (!firstOfCard.has(tx.cardId ?? "")) firstOfCard.set(tx.cardId ?? "", tx);
  }
  // A block as long as the simulation has cards.
  const block = firstOfCard.size;
  // The cache's cards (the warm-up's last) and the pass's blocks are distinct variants.
  const cardVariants = Math.ceil(cachedCards / block) + Math.ceil(n / block) + 1;
  const variant = (tx: TransactionInit, v: number): TransactionInit => ({
    ...tx,
    cardId: `${tx.cardId ?? ""}-${v}`,
  });
  const warmup = cardVariants * block;
  const h = await harness(
    ctx,
    parts,
    "hotpath-drain-issuer",
    n,
    systemClock,
    (source) => [
      ...Array.from({ length: cardVariants }, (_, v) =>
        [...firstOfCard.values()].map((tx) => variant(tx, v)),
      ).flat(),
      ...Array.from({ length: source.size }, (_, i) =>
        variant(source.at(i).tx, Math.floor(i / block) % cardVariants),
      ),
    ],
    cachedCards,
  );
  try {
    await plainPass(h, h.context, maxBatch, 0, warmup);
    const reads0 = h.reads();
    const redis0 = await redisCpuUs(ctx.redisCpuSource);
    const cpu0 = processCpuUs();
    const t0 = performance.now();
    const modelDecided = await plainPass(h, h.context, maxBatch, warmup, warmup + n);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = processCpuUs() - cpu0;
    const redisCpu = (await redisCpuUs(ctx.redisCpuSource)) - redis0;
    const reads = readsSince(reads0, h.reads());
    return {
      // The warm-up pays every variant of every simulated card.
      cards: warmup,
      cardVariants,
      blockTransactions: block,
      cachedCards,
      transactions: n,
      reads,
      transactionsPerSecond: Math.round(n / seconds),
      cpuUsPerTransaction: round3(cpu / n),
      redisCpuUsPerTransaction: round3(redisCpu / n),
      modelShare: round3(modelDecided / n),
    };
  } finally {
    h.context.shutdown();
    h.redis.disconnect();
  }
}

/** Counts V8's collections from now until stop(), which takes the measured wall time in seconds. */
function countCollections(): { stop(seconds: number): Promise<HotPathCollections> } {
  const counts = { minor: 0, major: 0, other: 0, pauseMs: 0 };
  const count = (entries: readonly PerformanceEntry[]) => {
    for (const entry of entries) {
      // A gc entry carries its kind in `detail`, which the typings give only to marks and measures.
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) counts.minor++;
      else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) counts.major++;
      else counts.other++;
      counts.pauseMs += entry.duration;
    }
  };
  const observer = new PerformanceObserver((list) => count(list.getEntries()));
  observer.observe({ entryTypes: ["gc"] });
  return {
    async stop(seconds) {
      // Entries are queued and delivered after the fact: let the last ones arrive.
      await new Promise((resolve) => setImmediate(resolve));
      count(observer.takeRecords());
      observer.disconnect();
      return {
        ...counts,
        pauseMs: round1(counts.pauseMs),
        pauseShareOfWall: round3(counts.pauseMs / 1000 / seconds),
      };
    },
  };
}

export async function runSteady(
  ctx: BenchContext,
  parts: ScoringParts,
  label: string,
  rate: number,
  seconds: number,
  {
    lingerMs = configKeyDefault("scoring.lingerMs") as number,
    profile = false,
  }: { readonly lingerMs?: number; readonly profile?: boolean } = {},
): Promise<HotPathSteady & { readonly profile?: HotPathSteadyProfile }> {
  const { maxBatch, steadyWarmupS } = ctx.plan.hotPath;
  const total = Math.ceil(rate * (seconds + steadyWarmupS));
  const warmupEnd = Math.ceil(rate * steadyWarmupS);
  const h = await harness(ctx, parts, "hotpath-steady", total, systemClock);
  const latency = new LatencyHistogram();
  const causes: Record<string, number> = {};
  let published = 0;
  let modelDecided = 0;
  let batches = 0;
  let batched = 0;
  const queue = new ScoringQueue({
    maxBatch,
    lingerMs,
    onBatch: (size) => {
      h.metrics.observeBatchSize(size);
      if (published < warmupEnd) return;
      batches++;
      batched += size;
    },
    score: (items) => decideBatch(items, h.context),
    // Decisions are published in arrival order: the first warmupEnd are the warm-up's.
    publish: async (decisions) => {
      const acked = Date.now();
      h.metrics.observeDecisions(decisions, acked);
      for (const d of decisions) {
        encodeDecision(d);
        if (published++ < warmupEnd) continue;
        latency.recordMs((d.timings?.totalUs ?? 0) / 1000);
        const cause = FALLBACK_CAUSE_LABELS[d.fallbackCause ?? 0] ?? "none";
        if (cause === "none") modelDecided++;
        else causes[cause] = (causes[cause] ?? 0) + 1;
      }
    },
  });
  const arrivalTimerCorePercent = await arrivalTimerAlone(rate, Math.min(seconds, ARRIVAL_TIMER_ALONE_S));
  const eld = monitorEventLoopDelay({ resolution: 10 });
  const profiler = profile ? new Session() : undefined;
  if (profiler !== undefined) {
    profiler.connect();
    await profiler.post("Profiler.enable");
    await profiler.post("Profiler.setSamplingInterval", { interval: STEADY_SAMPLING_US });
  }
  let sent = 0;
  let cpu0 = processCpuUs();
  let t0 = performance.now();
  let redis0 = redisCpuUs(ctx.redisCpuSource);
  try {
    const started = performance.now();
    // Arrivals on a 1 ms timer, as a consumer hands over what each fetch brought.
    await new Promise<void>((resolve) => {
      const tick = () => {
        const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
        if (sent < warmupEnd && due >= warmupEnd) {
          // The inspector answers in this thread, before the tick goes on.
          if (profiler !== undefined) void profiler.post("Profiler.start");
          eld.enable();
          // Read now (from /proc at once; by INFO, for a Redis elsewhere, within a few ms).
          redis0 = redisCpuUs(ctx.redisCpuSource);
          cpu0 = processCpuUs();
          t0 = performance.now();
        }
        const now = Date.now();
        const items: ScoringItem[] = [];
        for (; sent < due; sent++) for (const item of ingest(h.records[sent]!, sent, now)) items.push(item);
        if (items.length > 0) void queue.submit(items).catch(() => undefined);
        if (sent >= total) resolve();
        else setTimeout(tick, 1);
      };
      tick();
    });
    await queue.idle();
    const cpu = processCpuUs() - cpu0;
    const wallS = (performance.now() - t0) / 1000;
    const redisCpu = (await redisCpuUs(ctx.redisCpuSource)) - (await redis0);
    eld.disable();
    let steadyProfile: HotPathSteadyProfile | undefined;
    if (profiler !== undefined) {
      const { profile: cpuProfile } = await profiler.post("Profiler.stop");
      const { topFrames, owners, busyPercent } = summariseProfile(cpuProfile, ctx.root, { busyOnly: true });
      steadyProfile = {
        rate,
        seconds,
        samplingIntervalUs: STEADY_SAMPLING_US,
        busyPercent,
        topFrames,
        owners,
      };
    }
    const measured = published - warmupEnd;
    return {
      label,
      rate,
      seconds,
      warmupS: steadyWarmupS,
      decisions: measured,
      corePercent: round1((cpu / 1e6 / wallS) * 100),
      arrivalTimerCorePercent,
      scorerCorePercent: round1((cpu / 1e6 / wallS) * 100 - arrivalTimerCorePercent),
      cpuUsPerTransaction: round1(cpu / Math.max(1, measured)),
      redisCorePercent: round1((redisCpu / 1e6 / wallS) * 100),
      redisCpuUsPerTransaction: round1(redisCpu / Math.max(1, measured)),
      meanBatch: round1(batched / Math.max(1, batches)),
      lingerMs,
      p50Ms: round1(latency.percentileMs(50)),
      p99Ms: round1(latency.percentileMs(99)),
      maxMs: round1(latency.percentileMs(100)),
      modelShare: round3(modelDecided / Math.max(1, measured)),
      fallbackCauses: causes,
      eventLoopDelayMs: {
        p50: round1(eld.percentile(50) / 1e6),
        p99: round1(eld.percentile(99) / 1e6),
        max: round1(eld.max / 1e6),
      },
      ...(steadyProfile === undefined ? {} : { profile: steadyProfile }),
    };
  } finally {
    profiler?.disconnect();
    h.context.shutdown();
    h.redis.disconnect();
  }
}

const ARRIVAL_TIMER_ALONE_S = 10;

/** The steady run's arrival loop with nothing arriving: its own share of a core. */
async function arrivalTimerAlone(rate: number, seconds: number): Promise<number> {
  const started = performance.now();
  const cpu0 = processCpuUs();
  await new Promise<void>((resolve) => {
    const tick = () => {
      // The same clock reads as the real loop's tick.
      void Math.floor(((performance.now() - started) / 1000) * rate);
      void Date.now();
      if (performance.now() - started >= seconds * 1000) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  const wallS = (performance.now() - started) / 1000;
  return round1(((processCpuUs() - cpu0) / 1e6 / wallS) * 100);
}

interface ProfileNode {
  readonly id: number;
  readonly hitCount?: number;
  readonly children?: readonly number[];
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
}

const TOP_FRAMES = 20;
/**
 * The steady profile's sampling interval: each sample interrupts the thread, idle or not, so a
 * coarser one than the drain's disturbs a mostly idle loop less; 20 s still give thousands of
 * busy samples.
 */
const STEADY_SAMPLING_US = 1_000;
/** One sample per this many bytes allocated: thousands of samples over the allocation pass. */
const ALLOCATION_SAMPLING_BYTES = 16_384;

interface HeapProfileNode {
  readonly callFrame: ProfileNode["callFrame"];
  readonly selfSize: number;
  readonly children: readonly HeapProfileNode[];
}

/**
 * Runs `pass` under the sampling heap profiler, counting objects already collected too (V8's
 * includeObjectsCollectedByMajorGC/MinorGC; without them only what is still alive at the end
 * is reported, which says nothing of the garbage a transaction leaves).
 */
async function sampleAllocation(
  session: Session,
  root: string,
  transactions: number,
  pass: () => Promise<void>,
): Promise<HotPathAllocation> {
  // Not in @types/node's protocol types yet; V8 has taken them since 10.x.
  const params: { samplingInterval: number } & Record<string, unknown> = {
    samplingInterval: ALLOCATION_SAMPLING_BYTES,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  };
  await session.post("HeapProfiler.enable");
  await session.post("HeapProfiler.startSampling", params);
  await pass();
  const { profile } = await session.post("HeapProfiler.stopSampling");
  await session.post("HeapProfiler.disable");
  // The tree flattened into the CPU profile's shape, bytes standing for hits.
  const nodes: ProfileNode[] = [];
  let bytes = 0;
  const stack: HeapProfileNode[] = [profile.head as HeapProfileNode];
  while (stack.length > 0) {
    const node = stack.pop()!;
    bytes += node.selfSize;
    nodes.push({ id: nodes.length, callFrame: node.callFrame, hitCount: node.selfSize });
    stack.push(...node.children);
  }
  const { topFrames, owners } = summariseProfile({ nodes }, root);
  return {
    transactions,
    samplingIntervalBytes: ALLOCATION_SAMPLING_BYTES,
    bytesPerTransaction: Math.round(bytes / transactions),
    topSites: topFrames,
    owners,
  };
}

/** A native function's name in a profile's frames when the profiler's is borrowed (summariseProfile). */
export const UNNAMED_NATIVE = "(native)";

/** Self time of the profile's frames (merged by function and place) and by owner. */
export function summariseProfile(
  profile: { readonly nodes: readonly ProfileNode[] },
  root: string,
  { busyOnly = false } = {},
): { topFrames: ProfileFrame[]; owners: Record<string, number>; busyPercent: number } {
  const frames = new Map<string, { name: string; where: string; hits: number }>();
  const owners = new Map<string, number>();
  let hits = 0;
  let idle = 0;
  const parents = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node);
  const placeOf = ({ url, lineNumber }: ProfileNode["callFrame"]) => {
    const path = url.replace(/^file:\/\//, "").replace(root, "");
    return { path, where: path === "" ? "" : `${path}:${lineNumber + 1}` };
  };
  for (const node of profile.nodes) {
    const count = node.hitCount ?? 0;
    if (count === 0) continue;
    const { functionName } = node.callFrame;
    if (functionName === "(idle)") {
      idle += count;
      if (busyOnly) continue;
    }
    hits += count;
    const place = placeOf(node.callFrame);
    // A native function has no script: placed by its caller, and charged to the caller's owner
    // (onnxruntime-node's run to src/model). Node's own bindings, called from node:internal code,
    // carry their own names (writeBuffer, cpuUsage). A native function called from any other
    // script carries a name the profiler borrowed: every N-API callback shares one trampoline, so
    // onnxruntime-node's run showed as "Xxh32", "crc32c" (@node-rs/crc32's) or nameless, and
    // esbuild's __name helper's defineProperty as "set filename". Such a frame is named
    // "(native)", never by a function it is not.
    const caller = parents.get(node.id);
    const callerPlace =
      place.path === "" && !functionName.startsWith("(") && caller !== undefined
        ? placeOf(caller.callFrame)
        : undefined;
    const where =
      callerPlace === undefined
        ? place.where
        : `native, from ${caller!.callFrame.functionName || "(anonymous)"} ${callerPlace.where}`;
    const name =
      callerPlace !== undefined && !caller!.callFrame.url.startsWith("node:")
        ? UNNAMED_NATIVE
        : functionName || "(anonymous)";
    const key = `${name} ${where}`;
    const frame = frames.get(key) ?? { name, where, hits: 0 };
    frame.hits += count;
    frames.set(key, frame);
    const owner =
      callerPlace === undefined
        ? ownerOf(place.path, name)
        : ownerOf(callerPlace.path, caller!.callFrame.functionName);
    owners.set(owner, (owners.get(owner) ?? 0) + count);
  }
  const percent = (n: number) => round1((100 * n) / Math.max(1, hits));
  return {
    topFrames: [...frames.values()]
      .sort((a, b) => b.hits - a.hits)
      .slice(0, TOP_FRAMES)
      .map((f) => ({ name: f.name, where: f.where, selfPercent: percent(f.hits) })),
    owners: Object.fromEntries(
      [...owners.entries()].sort((a, b) => b[1] - a[1]).map(([owner, n]) => [owner, percent(n)]),
    ),
    busyPercent: round1((100 * (hits - (busyOnly ? 0 : idle))) / Math.max(1, hits + (busyOnly ? idle : 0))),
  };
}

function ownerOf(path: string, name: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1]!;
  const src = /^\/?src\/([^/]+)/.exec(path);
  if (src) return `src/${src[1]}`;
  if (path.startsWith("node:") || path === "" || !path.includes("/"))
    return name.startsWith("(") ? name : "node";
  return "other";
}
