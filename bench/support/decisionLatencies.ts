// Follows a decisions topic and turns each decision into latencies. End to end is measured from
// the transaction's *scheduled* send time (not its actual one, so a load generator that falls
// behind cannot hide queueing: coordinated-omission safe) to the decision record's broker append
// time (the topic uses LogAppendTime, and the reader is the audits' append-time reader: the
// port's own reports the producer's CreateTime). The stage breakdown comes from the Decision's
// own timings.
import { setTimeout as sleep } from "node:timers/promises";
import { FallbackCause, type Decision } from "../../src/codec/messages.js";
import { followDecisions, type Following } from "../../src/decisions/followDecisions.js";
import { LatencyHistogram, type LatencySummary } from "../../src/tools/latencyHistogram.js";
import { appendTimeReaderPort } from "./appendTimeReader.js";
import { round1 } from "./alternatingRounds.js";

export const STAGES = [
  "queue",
  "decode",
  "stateRead",
  "features",
  "model",
  "policy",
  "stateWrite",
  "publish",
] as const;
export type Stage = (typeof STAGES)[number];

export interface StagePercentiles {
  /** Decisions the stage is measured over (state to state write: model decisions only). */
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface LatencyReport {
  readonly expected: number;
  readonly decided: number;
  /** Not decided by the end of the drain window; counted in `endToEnd` at their age then. */
  readonly undecided: number;
  readonly endToEnd: LatencySummary;
  /** Scheduled time → the bench's consumer had it (adds the consumer's own fetch delay). */
  readonly seenByConsumer: LatencySummary;
  readonly stages: Readonly<Record<Stage, StagePercentiles>>;
  readonly withinBudgetShare: number;
  readonly fallbackShare: number;
  readonly fallbackCauses: Readonly<Record<string, number>>;
}

/** One decision's latency and where it went. */
export interface DecisionBreakdown {
  readonly endToEndMs: number;
  /** When its transaction was due to be sent (epoch ms): the load's schedule. */
  readonly dueAtMs: number;
  /** The fallback cause's name, "" when the model decided. */
  readonly fallbackCause: string;
  readonly stagesMs: Readonly<Record<Stage, number>>;
}

const SLOWEST_KEPT = 5;

/** The latencies of one measured window (a rate step, a cold start's first decisions). */
export class LatencySink {
  readonly endToEnd = new LatencyHistogram();
  readonly seenByConsumer = new LatencyHistogram();
  readonly stages = Object.fromEntries(STAGES.map((s) => [s, new LatencyHistogram()])) as Record<
    Stage,
    LatencyHistogram
  >;
  /** The first decision to arrive: where a cold start's time went. */
  first: DecisionBreakdown | undefined;
  /** The slowest decisions, slowest first: where a window's misses went. */
  readonly slowest: DecisionBreakdown[] = [];
  expected = 0;
  decided = 0;
  undecided = 0;
  fallbacks = new Map<string, number>();
  #withinBudget = 0;

  constructor(readonly budgetMs: number) {}

  record(decision: Decision, endToEndMs: number, seenMs: number, appendMs: number): void {
    this.decided++;
    this.endToEnd.recordMs(endToEndMs);
    this.seenByConsumer.recordMs(seenMs);
    if (endToEndMs <= this.budgetMs) this.#withinBudget++;
    const t = decision.timings;
    if (t) {
      this.stages.queue.recordUs(t.queueUs ?? 0);
      this.stages.decode.recordUs(t.decodeUs ?? 0);
    }
    // A rules-only decision skipped state, features and model: its zeros would hide their cost.
    if (t && !decision.fallback) {
      this.stages.stateRead.recordUs(t.stateReadUs ?? 0);
      this.stages.features.recordUs(t.featuresUs ?? 0);
      this.stages.model.recordUs(t.modelUs ?? 0);
      this.stages.policy.recordUs(t.policyUs ?? 0);
      this.stages.stateWrite.recordUs(t.stateWriteUs ?? 0);
    }
    // decided_at_ms is whole milliseconds on the scorer's wall clock, like the append time.
    this.stages.publish.recordMs(Math.max(0, appendMs - Number(decision.decidedAtMs)));
    const amongSlowest = this.#isAmongSlowest(endToEndMs);
    if (this.first === undefined || amongSlowest) {
      const breakdown: DecisionBreakdown = {
        endToEndMs,
        dueAtMs: appendMs - endToEndMs,
        fallbackCause: decision.fallback ? (FallbackCause[decision.fallbackCause] ?? "") : "",
        stagesMs: {
          queue: (t?.queueUs ?? 0) / 1000,
          decode: (t?.decodeUs ?? 0) / 1000,
          stateRead: (t?.stateReadUs ?? 0) / 1000,
          features: (t?.featuresUs ?? 0) / 1000,
          model: (t?.modelUs ?? 0) / 1000,
          policy: (t?.policyUs ?? 0) / 1000,
          stateWrite: (t?.stateWriteUs ?? 0) / 1000,
          publish: Math.max(0, appendMs - Number(decision.decidedAtMs)),
        },
      };
      this.first ??= breakdown;
      if (amongSlowest) {
        this.slowest.push(breakdown);
        this.slowest.sort((a, b) => b.endToEndMs - a.endToEndMs);
        this.slowest.length = Math.min(this.slowest.length, SLOWEST_KEPT);
      }
    }
    if (decision.fallback) {
      const cause = FallbackCause[decision.fallbackCause] ?? String(decision.fallbackCause);
      this.fallbacks.set(cause, (this.fallbacks.get(cause) ?? 0) + 1);
    }
  }

  #isAmongSlowest(endToEndMs: number): boolean {
    return this.slowest.length < SLOWEST_KEPT || endToEndMs > this.slowest.at(-1)!.endToEndMs;
  }

  recordUndecided(ageMs: number): void {
    this.undecided++;
    this.endToEnd.recordMs(ageMs);
  }

  get complete(): boolean {
    return this.decided + this.undecided >= this.expected;
  }

  report(): LatencyReport {
    const fallbackTotal = [...this.fallbacks.values()].reduce((a, b) => a + b, 0);
    const stages = Object.fromEntries(
      STAGES.map((s) => [
        s,
        {
          count: this.stages[s].count,
          p50Ms: this.stages[s].count > 0 ? this.stages[s].percentileMs(50) : 0,
          p99Ms: this.stages[s].count > 0 ? this.stages[s].percentileMs(99) : 0,
        },
      ]),
    ) as Record<Stage, StagePercentiles>;
    const counted = this.decided + this.undecided;
    return {
      expected: this.expected,
      decided: this.decided,
      undecided: this.undecided,
      endToEnd: this.endToEnd.summary(),
      seenByConsumer: this.seenByConsumer.summary(),
      stages,
      withinBudgetShare: counted === 0 ? 0 : this.#withinBudget / counted,
      fallbackShare: this.decided === 0 ? 0 : fallbackTotal / this.decided,
      fallbackCauses: Object.fromEntries(this.fallbacks),
    };
  }
}

interface Expectation {
  readonly dueAtMs: number;
  readonly sink: LatencySink | undefined;
}

export class DecisionLatencyCollector {
  readonly #expected = new Map<string, Expectation>();
  #following: Following | undefined;
  /** Decisions for transactions never announced, or seen twice (at-least-once redelivery),
   * and records that are not decisions. */
  unmatched = 0;

  constructor(
    readonly brokers: string,
    readonly topic: string,
  ) {}

  async start(): Promise<void> {
    this.#following = await followDecisions({
      kafka: appendTimeReaderPort(this.brokers, "bench-decisions"),
      topic: this.topic,
      fromBeginning: true,
      maxWaitMs: 50,
      onDecision: (decision, { timestampMs, arrivedAtMs }) => this.#take(decision, timestampMs, arrivedAtMs),
      onUndecodable: () => this.unmatched++,
    });
    await this.#following.joined;
  }

  /** Announces a transaction; `sink` undefined = expected but not measured (warm-up). */
  expect(transactionId: string, dueAtMs: number, sink: LatencySink | undefined): void {
    this.#expected.set(transactionId, { dueAtMs, sink });
    if (sink) sink.expected++;
  }

  /** Waits until the sink has every decision, or until the deadline; the rest count as undecided. */
  async drain(sink: LatencySink, deadlineMs: number): Promise<void> {
    while (!sink.complete && Date.now() < deadlineMs) await sleep(50);
    if (sink.complete) return;
    const now = Date.now();
    for (const [id, e] of this.#expected) {
      if (e.sink !== sink) continue;
      sink.recordUndecided(now - e.dueAtMs);
      this.#expected.delete(id);
    }
  }

  /** Forgets every expectation (their scorer is gone). */
  forgetAll(): void {
    this.#expected.clear();
  }

  async stop(): Promise<void> {
    await this.#following?.stop();
  }

  #take(decision: Decision, appendMs: number, seenAt: number) {
    const e = this.#expected.get(decision.transactionId);
    if (!e) {
      this.unmatched++;
      return;
    }
    this.#expected.delete(decision.transactionId);
    e.sink?.record(
      decision,
      Math.max(0.001, appendMs - e.dueAtMs),
      Math.max(0.001, seenAt - e.dueAtMs),
      appendMs,
    );
  }
}

/** "512 ms, sent at 830 ms: queue 480, …, publish 20 ms (model)": one slow decision's story. */
export const slowestLine = (d: DecisionBreakdown): string =>
  `${round1(d.endToEndMs)} ms, sent at ${round1(d.dueAtMs)} ms: ` +
  Object.entries(d.stagesMs)
    .filter(([, v]) => v >= 0.5)
    .map(([stage, v]) => `${stage} ${round1(v)}`)
    .join(", ") +
  ` ms (${d.fallbackCause === "" ? "model" : d.fallbackCause})`;
