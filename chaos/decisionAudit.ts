// The suite's independent check of a run, from the topics alone: what was sent (the
// transactions topic, decoded with the product's codec), what was decided (the decisions
// topic, read_committed), and what was dead-lettered. Pure over the records, so it is unit-tested.
import { decodeDecisionRecord } from "../src/codec/decisionRecord.js";
import { decodeTransactionRecord } from "../src/ingest/decodeTransactionRecord.js";
import type { TopicRecord } from "./topicReader.js";

/** The header the malformed corpus puts on each bad record (the scorer passes headers to the DLQ). */
export const MALFORMED_HEADER = "chaos.malformed";
const DLQ_REASON_HEADER = "dlq.reason";
const DLQ_SOURCE_PARTITION = "dlq.source.partition";
const DLQ_SOURCE_OFFSET = "dlq.source.offset";

export interface SentTransaction {
  readonly transactionId: string;
  readonly cardId: string;
  readonly partition: number;
  readonly timestampMs: number;
}

/** A sent transaction with its first decision. */
export interface DecidedTransaction extends SentTransaction {
  /** Broker append time of the first decision. */
  readonly appendedMs: number;
  readonly fallback: boolean;
  /** The FallbackCause number (0 when the model decided). */
  readonly fallbackCause: number;
  /** Record timestamp → picked by the scoring loop, from the decision's own timings. */
  readonly arrivalMs: number;
  /** Decided → broker append. */
  readonly publishMs: number;
}

export interface DecisionAudit {
  readonly sent: number;
  readonly decided: number;
  readonly lost: number;
  readonly lostExamples: readonly string[];
  /** Decision records beyond the first for a transaction id. */
  readonly duplicates: number;
  /** Decisions for ids never sent: a decoding or keying bug. */
  readonly unexpected: number;
  /** First decision of each transaction: record timestamp (scheduled send) → broker append. */
  readonly latenciesMs: readonly number[];
  /** [scheduled send ms, latency ms] of each decided transaction, in send order. */
  readonly timeline: readonly (readonly [number, number])[];
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p100Ms: number;
  /**
   * Where the latency went, from the first decisions' own records: `arrival` is record timestamp
   * → picked by the scoring loop (the sender's publish, the scorer's fetch, the queue), `publish`
   * is decided → broker append (the decision's produce request). p50 and p99 of each, ms.
   */
  readonly legs: { readonly arrival: LegPercentiles; readonly publish: LegPercentiles };
  /** [arrival ms, decided by the rules] of each first decision: who had budget for the model. */
  readonly arrivalsAndFallbacks: readonly (readonly [number, boolean])[];
  /** Longest gap between consecutive first decisions of one input partition's transactions. */
  readonly longestStallMs: number;
  readonly fallbackShare: number;
  readonly malformedSent: number;
  readonly malformedInDlq: number;
  readonly malformedWithoutReason: number;
  /** Transactions per card, from what was sent: what each card's state must have counted. */
  readonly perCard: ReadonlyMap<string, number>;
  /** Every decided transaction, in send order: for scenarios that split the figures. */
  readonly decidedTransactions: readonly DecidedTransaction[];
}

export interface LegPercentiles {
  readonly p50Ms: number;
  readonly p99Ms: number;
}

const legPercentiles = (values: number[]): LegPercentiles => {
  values.sort((a, b) => a - b);
  return { p50Ms: percentile(values, 50), p99Ms: percentile(values, 99) };
};

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

interface FirstDecision {
  appendedMs: number;
  fallback: boolean;
  fallbackCause: number;
  arrivalMs: number;
  publishMs: number;
}

/**
 * The audit, fed one record at a time as the topics are read: a soak's millions of records are
 * reduced as they arrive instead of being held (holding 8.6 million records and their buffers
 * ran the audit out of memory). Feed every transaction record before the first decision or
 * dead letter: a decision is checked against what was sent.
 */
export class DecisionAuditor {
  readonly #sent: SentTransaction[] = [];
  readonly #malformedOffsets = new Set<string>();
  readonly #byId = new Map<string, SentTransaction>();
  readonly #perCard = new Map<string, number>();
  readonly #firstDecision = new Map<string, FirstDecision>();
  readonly #malformedDead = new Set<string>();
  #duplicates = 0;
  #unexpected = 0;
  #malformedWithoutReason = 0;
  #decisionsSeen = false;

  /** The transactions a transaction-topic record carries (none when it is a malformed one). */
  addTransactionRecord(r: TopicRecord): void {
    if (this.#decisionsSeen) throw new Error("transaction records must all come before the decisions");
    if (r.headers[MALFORMED_HEADER] !== undefined) {
      this.#malformedOffsets.add(`${r.partition}:${r.offset}`);
      return;
    }
    const decoded = decodeTransactionRecord(r.value, { transactionSchemaIds: new Set() });
    if (!decoded.ok)
      throw new Error(
        `good traffic failed to decode at ${r.partition}:${r.offset}: ${decoded.error.message}`,
      );
    for (const { tx } of decoded.value) {
      const sent = {
        transactionId: tx.transactionId,
        cardId: tx.cardId,
        partition: r.partition,
        timestampMs: r.timestampMs,
      };
      this.#sent.push(sent);
      this.#byId.set(sent.transactionId, sent);
      this.#perCard.set(sent.cardId, (this.#perCard.get(sent.cardId) ?? 0) + 1);
    }
  }

  addDecisionRecord(r: TopicRecord): void {
    this.#decisionsSeen = true;
    const decision = decodeDecisionRecord(r.value);
    if (!decision.ok)
      throw new Error(
        `decision at ${r.partition}:${r.offset}: ${decision.error.kind}: ${decision.error.message}`,
      );
    // Keyed by the sent transaction's own id string where there is one: millions of decisions
    // then hold no second copy of each id.
    const sent = this.#byId.get(decision.value.transactionId);
    if (sent === undefined) this.#unexpected++;
    const id = sent?.transactionId ?? decision.value.transactionId;
    const first = {
      appendedMs: r.timestampMs,
      fallback: decision.value.fallback,
      fallbackCause: decision.value.fallbackCause,
      arrivalMs: (decision.value.timings?.queueUs ?? 0) / 1000,
      publishMs: Math.max(0, r.timestampMs - Number(decision.value.decidedAtMs)),
    };
    const seen = this.#firstDecision.get(id);
    if (seen !== undefined) {
      this.#duplicates++;
      if (r.timestampMs < seen.appendedMs) this.#firstDecision.set(id, first);
    } else {
      this.#firstDecision.set(id, first);
    }
  }

  /** Distinct sources: a record dead-lettered again after a replay is still one record. */
  addDlqRecord(r: TopicRecord): void {
    this.#decisionsSeen = true;
    const source = `${r.headers[DLQ_SOURCE_PARTITION]}:${r.headers[DLQ_SOURCE_OFFSET]}`;
    if (!this.#malformedOffsets.has(source)) return;
    this.#malformedDead.add(source);
    if ((r.headers[DLQ_REASON_HEADER] ?? "") === "") this.#malformedWithoutReason++;
  }

  finish(): DecisionAudit {
    const sent = this.#sent;
    const latencies: number[] = [];
    const arrivals: number[] = [];
    const publishes: number[] = [];
    const arrivalsAndFallbacks: [number, boolean][] = [];
    const timeline: [number, number][] = [];
    const lostExamples: string[] = [];
    let lost = 0;
    let fallbacks = 0;
    const appendsByPartition = new Map<number, number[]>();
    const decidedTransactions: DecidedTransaction[] = [];
    for (const tx of sent) {
      const d = this.#firstDecision.get(tx.transactionId);
      if (d === undefined) {
        lost++;
        if (lostExamples.length < 5) lostExamples.push(tx.transactionId);
        continue;
      }
      decidedTransactions.push({ ...tx, ...d });
      const latency = Math.max(0, d.appendedMs - tx.timestampMs);
      latencies.push(latency);
      arrivals.push(d.arrivalMs);
      arrivalsAndFallbacks.push([d.arrivalMs, d.fallback]);
      publishes.push(d.publishMs);
      timeline.push([tx.timestampMs, latency]);
      if (d.fallback) fallbacks++;
      const appends = appendsByPartition.get(tx.partition) ?? [];
      appends.push(d.appendedMs);
      appendsByPartition.set(tx.partition, appends);
    }
    latencies.sort((a, b) => a - b);
    timeline.sort((a, b) => a[0] - b[0]);

    let longestStallMs = 0;
    for (const appends of appendsByPartition.values()) {
      appends.sort((a, b) => a - b);
      for (let i = 1; i < appends.length; i++)
        longestStallMs = Math.max(longestStallMs, appends[i]! - appends[i - 1]!);
    }

    const decided = sent.length - lost;
    return {
      sent: sent.length,
      decided,
      lost,
      lostExamples,
      duplicates: this.#duplicates,
      unexpected: this.#unexpected,
      latenciesMs: latencies,
      timeline,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      p100Ms: percentile(latencies, 100),
      legs: { arrival: legPercentiles(arrivals), publish: legPercentiles(publishes) },
      arrivalsAndFallbacks,
      longestStallMs,
      fallbackShare: decided === 0 ? 0 : fallbacks / decided,
      malformedSent: this.#malformedOffsets.size,
      malformedInDlq: this.#malformedDead.size,
      malformedWithoutReason: this.#malformedWithoutReason,
      perCard: this.#perCard,
      decidedTransactions,
    };
  }
}

export function auditDecisions(
  transactionRecords: readonly TopicRecord[],
  decisionRecords: readonly TopicRecord[],
  dlqRecords: readonly TopicRecord[] = [],
): DecisionAudit {
  const auditor = new DecisionAuditor();
  for (const r of transactionRecords) auditor.addTransactionRecord(r);
  for (const r of decisionRecords) auditor.addDecisionRecord(r);
  for (const r of dlqRecords) auditor.addDlqRecord(r);
  return auditor.finish();
}

/** A scenario's event, at epoch ms (the broker's append times are on the same clock). */
export interface RunEvent {
  readonly name: string;
  readonly atMs: number;
}

export interface EventStall {
  readonly event: string;
  /** Longest gap between consecutive first decisions of one partition that began in the event's span. */
  readonly longestMs: number;
  readonly partition: number;
  /** When the gap began, ms after the event. */
  readonly startedAfterMs: number;
}

/**
 * The longest partition stall each event caused: a gap is the event's when it began at or after
 * the event (less `leadMs`, the decisions already in flight) and before the next event; gaps
 * before the first event belong to "steady".
 */
export function stallsByEvent(
  decided: readonly DecidedTransaction[],
  events: readonly RunEvent[],
  leadMs = 1_000,
): EventStall[] {
  const spans = [{ name: "steady", atMs: -Infinity }, ...[...events].sort((a, b) => a.atMs - b.atMs)];
  const out: EventStall[] = spans.map(({ name }) => ({
    event: name,
    longestMs: 0,
    partition: -1,
    startedAfterMs: 0,
  }));
  const byPartition = new Map<number, number[]>();
  for (const d of decided) {
    const appends = byPartition.get(d.partition) ?? [];
    appends.push(d.appendedMs);
    byPartition.set(d.partition, appends);
  }
  for (const [partition, appends] of byPartition) {
    appends.sort((a, b) => a - b);
    for (let i = 1; i < appends.length; i++) {
      const gap = appends[i]! - appends[i - 1]!;
      let span = 0;
      while (span + 1 < spans.length && appends[i - 1]! >= spans[span + 1]!.atMs - leadMs) span++;
      if (gap > out[span]!.longestMs)
        out[span] = {
          event: spans[span]!.name,
          longestMs: gap,
          partition,
          startedAfterMs: appends[i - 1]! - spans[span]!.atMs,
        };
    }
  }
  return out;
}

/** p99 of each `windowMs` of send time, in order. */
export function p99ByWindow(timeline: readonly (readonly [number, number])[], windowMs: number): number[] {
  if (timeline.length === 0) return [];
  const start = timeline[0]![0];
  const windows: number[][] = [];
  for (const [sentMs, latency] of timeline)
    (windows[Math.floor((sentMs - start) / windowMs)] ??= []).push(latency);
  return windows
    .filter((w) => w !== undefined)
    .map((w) =>
      percentile(
        w.sort((a, b) => a - b),
        99,
      ),
    );
}
