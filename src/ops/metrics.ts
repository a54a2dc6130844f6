// The scorer's Prometheus metrics, in a registry of its own (not prom-client's global one) so
// tests and several scorers in one process do not collide. Hot-path methods reuse label-bound
// children instead of looking label sets up on every observation.
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import { Action, FallbackCause, type DecisionInit } from "../codec/messages.js";
import { BucketHistogram } from "./bucketHistogram.js";

export const STAGES = [
  "queue",
  "decode",
  "state_read",
  "features",
  "model",
  "policy",
  "state_write",
  "produce",
] as const;
export type Stage = (typeof STAGES)[number];

/**
 * deferred: state work queued off the decision path; dropped: state work that could not be
 * applied; committed_ahead: deferred state work whose exactly-once commit did not wait for it
 * (the store stalled), lost if the process dies before it is applied.
 */
export const CARD_STATE_OUTCOMES = [
  "hit",
  "miss",
  "rebuild",
  "tampered",
  "stale_write",
  "deferred",
  "dropped",
  "committed_ahead",
] as const;
export type CardStateOutcome = (typeof CARD_STATE_OUTCOMES)[number];

export type BreakerState = "closed" | "half_open" | "open";
const BREAKER_GAUGE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

/** ACTION_REVIEW → "review"; FALLBACK_CAUSE_TIMEOUT → "timeout", UNSPECIFIED → "none". */
const enumLabels = (values: object, prefix: string, unspecified: string): string[] => {
  const labels: string[] = [];
  for (const [name, id] of Object.entries(values as Record<string, number>))
    labels[id] = name === `${prefix}UNSPECIFIED` ? unspecified : name.slice(prefix.length).toLowerCase();
  return labels;
};
export const ACTION_LABELS: readonly string[] = enumLabels(Action, "ACTION_", "unspecified");
export const FALLBACK_CAUSE_LABELS: readonly string[] = enumLabels(FallbackCause, "FALLBACK_CAUSE_", "none");

// Stages run from microseconds (decode, policy) to tens of milliseconds (state, model).
const STAGE_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
];
// Fine between 1 and 250 ms, where the 200 ms budget is won or lost.
const DECISION_BUCKETS = [
  0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.225, 0.25,
  0.3, 0.5, 1, 2.5, 5,
];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];

export interface ScorerMetricsOptions {
  /** Process metrics (CPU, memory, event-loop lag, GC) in the same registry. */
  readonly defaultMetrics?: boolean;
}

type Observer = { observe(value: number): void };

export class ScorerMetrics {
  readonly registry = new Registry();

  readonly #stage: BucketHistogram<"stage">;
  readonly #stageChildren: ReadonlyMap<Stage, Observer>;
  readonly #decisionLatency: BucketHistogram;
  readonly #decisions: Counter<"action" | "fallback_cause">;
  readonly #decisionChildren = new Map<number, { inc(n: number): void }>();
  readonly #deadLetters: Counter<"reason">;
  readonly #deadLettersTruncated: Counter;
  readonly #breaker: Gauge<"breaker">;
  readonly #cardState: Counter<"outcome">;
  readonly #lag: Gauge<"partition">;
  readonly #batchSize: BucketHistogram;
  readonly #modelInfo: Gauge<"model_version" | "feature_schema_version" | "provider">;

  constructor({ defaultMetrics = true }: ScorerMetricsOptions = {}) {
    const registers = [this.registry];
    this.#stage = new BucketHistogram({
      name: "fraud_stage_duration_seconds",
      help: "Time spent in each pipeline stage: per transaction for queue and decode, per batch for the stages a batch shares",
      labelNames: ["stage"],
      buckets: STAGE_BUCKETS,
      registers,
    });
    // Each stage's series exists from start-up (labels() creates it at zero).
    this.#stageChildren = new Map(STAGES.map((stage) => [stage, this.#stage.labels(stage)]));
    this.#decisionLatency = new BucketHistogram({
      name: "fraud_decision_latency_seconds",
      help: "Record timestamp to acknowledged decision, per transaction",
      buckets: DECISION_BUCKETS,
      registers,
    });
    this.#decisions = new Counter({
      name: "fraud_decisions_total",
      help: "Decisions written, by action and fallback cause (none = the model decided)",
      labelNames: ["action", "fallback_cause"],
      registers,
    });
    this.#deadLetters = new Counter({
      name: "fraud_dlq_records_total",
      help: "Records sent to the dead-letter topic, by reason",
      labelNames: ["reason"],
      registers,
    });
    this.#deadLettersTruncated = new Counter({
      name: "fraud_dlq_records_truncated_total",
      help: "Dead letters whose value was cut to fit the dead-letter topic's size limit (the whole record stays in the input topic)",
      registers,
    });
    this.#breaker = new Gauge({
      name: "fraud_breaker_state",
      help: "Circuit breaker state: 0 closed, 1 half-open, 2 open",
      labelNames: ["breaker"],
      registers,
    });
    this.#cardState = new Counter({
      name: "fraud_card_state_total",
      help: "Card-state reads and writes by outcome",
      labelNames: ["outcome"],
      registers,
    });
    this.#lag = new Gauge({
      name: "fraud_consumer_lag",
      help: "Records behind the partition's high watermark",
      labelNames: ["partition"],
      registers,
    });
    this.#batchSize = new BucketHistogram({
      name: "fraud_batch_size",
      help: "Transactions per scoring batch",
      buckets: BATCH_BUCKETS,
      registers,
    });
    this.#modelInfo = new Gauge({
      name: "fraud_model_info",
      help: "The model being served (value is always 1)",
      labelNames: ["model_version", "feature_schema_version", "provider"],
      registers,
    });

    // Series that exist from start-up: a rate over an absent series is no rate at all.
    for (const action of ["approve", "review", "decline"])
      for (const cause of FALLBACK_CAUSE_LABELS) this.#decisions.inc({ action, fallback_cause: cause }, 0);
    for (const outcome of CARD_STATE_OUTCOMES) this.#cardState.inc({ outcome }, 0);

    if (defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }

  observeStage(stage: Stage, seconds: number): void {
    this.#stageChildren.get(stage)?.observe(seconds);
  }

  /**
   * A batch of acknowledged decisions, aggregated: one counter increment per (action, cause)
   * seen, the batch-shared stages (state read, features, model, policy, state write: one value
   * for the whole batch) observed once per batch, queue time and end-to-end latency per decision.
   * What a per-decision observeDecision cost in prom-client label look-ups was a measurable share
   * of the scorer's CPU.
   */
  observeDecisions(decisions: readonly DecisionInit[], ackedAtMs: number): void {
    if (decisions.length === 0) return;
    const counts = new Map<number, number>();
    for (const d of decisions) {
      const key = (d.action ?? 0) * 64 + (d.fallbackCause ?? 0);
      counts.set(key, (counts.get(key) ?? 0) + 1);
      const t = d.timings;
      if (t === null || t === undefined) continue;
      const decidedAtMs = Number(d.decidedAtMs ?? ackedAtMs);
      this.#decisionLatency.observe(((t.totalUs ?? 0) / 1000 + (ackedAtMs - decidedAtMs)) / 1000);
      this.#observeUs("queue", t.queueUs);
    }
    for (const [key, n] of counts) this.#decisionCounter(Math.floor(key / 64), key % 64).inc(n);
    const t = decisions[0]!.timings;
    if (t === null || t === undefined) return;
    this.#observeUs("state_read", t.stateReadUs);
    this.#observeUs("features", t.featuresUs);
    this.#observeUs("model", t.modelUs);
    this.#observeUs("policy", t.policyUs);
    this.#observeUs("state_write", t.stateWriteUs);
  }

  #decisionCounter(action: number, cause: number): { inc(n: number): void } {
    const key = action * 64 + cause;
    let child = this.#decisionChildren.get(key);
    if (child === undefined) {
      child = this.#decisions.labels(
        ACTION_LABELS[action] ?? "unspecified",
        FALLBACK_CAUSE_LABELS[cause] ?? "none",
      );
      this.#decisionChildren.set(key, child);
    }
    return child;
  }

  observeDecisionLatency(seconds: number): void {
    this.#decisionLatency.observe(seconds);
  }

  countDecision(action: string, fallbackCause = "none"): void {
    this.#decisions.inc({ action, fallback_cause: fallbackCause });
  }

  /**
   * One acknowledged decision: its action and cause, its end-to-end latency and the stages
   * scoreBatch timed. Decode and produce are observed where they happen, not here.
   */
  observeDecision(decision: DecisionInit, ackedAtMs: number): void {
    this.countDecision(
      ACTION_LABELS[decision.action ?? 0] ?? "unspecified",
      FALLBACK_CAUSE_LABELS[decision.fallbackCause ?? 0] ?? "none",
    );
    const t = decision.timings;
    if (t === null || t === undefined) return;
    // totalUs runs from the record timestamp to the decision; the acknowledgement came later.
    const decidedAtMs = Number(decision.decidedAtMs ?? ackedAtMs);
    this.#decisionLatency.observe(((t.totalUs ?? 0) / 1000 + (ackedAtMs - decidedAtMs)) / 1000);
    this.#observeUs("queue", t.queueUs);
    this.#observeUs("state_read", t.stateReadUs);
    this.#observeUs("features", t.featuresUs);
    this.#observeUs("model", t.modelUs);
    this.#observeUs("policy", t.policyUs);
    this.#observeUs("state_write", t.stateWriteUs);
  }

  #observeUs(stage: Stage, us: number | null | undefined): void {
    if (us !== null && us !== undefined) this.#stageChildren.get(stage)?.observe(us / 1e6);
  }

  countDeadLetter(reason: string): void {
    this.#deadLetters.inc({ reason });
  }

  countTruncatedDeadLetter(): void {
    this.#deadLettersTruncated.inc();
  }

  /** Accepts the state name or its gauge value (0 closed, 1 half-open, 2 open). */
  setBreakerState(breaker: string, state: BreakerState | number): void {
    this.#breaker.set({ breaker }, typeof state === "number" ? state : BREAKER_GAUGE[state]);
  }

  countCardState(outcome: CardStateOutcome, count = 1): void {
    if (count > 0) this.#cardState.inc({ outcome }, count);
  }

  setConsumerLag(partition: number, lag: number): void {
    this.#lag.set({ partition: String(partition) }, lag);
  }

  /** After a rebalance takes the partition away, so its last lag does not linger. */
  removeConsumerLag(partition: number): void {
    this.#lag.remove({ partition: String(partition) });
  }

  observeBatchSize(size: number): void {
    this.#batchSize.observe(size);
  }

  /**
   * The card states kept in memory (src/features/cachedCardStateStore.ts), read at each scrape:
   * how many cards are held, and how many card reads they served or left to the store.
   */
  followCardStateCache(
    read: () => { readonly hits: number; readonly misses: number; readonly cards: number },
  ): void {
    new Gauge({
      name: "fraud_card_state_cache_cards",
      help: "Card states kept in memory after they were written",
      registers: [this.registry],
      collect() {
        this.set(read().cards);
      },
    });
    const counted = { hit: 0, miss: 0 };
    new Counter({
      name: "fraud_card_state_cache_reads_total",
      help: "Card-state reads served from memory (hit) or left to the store (miss)",
      labelNames: ["outcome"],
      registers: [this.registry],
      collect() {
        const { hits, misses } = read();
        // A promotion's new store starts its own count: only growth is added.
        for (const [outcome, total] of [
          ["hit", hits],
          ["miss", misses],
        ] as const) {
          if (total > counted[outcome]) this.inc({ outcome }, total - counted[outcome]);
          counted[outcome] = total;
        }
      },
    });
  }

  /** One series at a time: promoting a model replaces the previous one. */
  setModelInfo(modelVersion: string, featureSchemaVersion: string, provider: string): void {
    this.#modelInfo.reset();
    this.#modelInfo.set(
      { model_version: modelVersion, feature_schema_version: featureSchemaVersion, provider },
      1,
    );
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  metricsText(): Promise<string> {
    return this.registry.metrics();
  }
}
