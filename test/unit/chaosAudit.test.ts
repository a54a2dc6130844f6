// The fault suite's own arithmetic: what counts as lost, duplicated, stalled and dead-lettered,
// and a malformed corpus that really is malformed.
import { describe, expect, it } from "vitest";
import { encodeDecisionRecord } from "../../src/codec/decisionRecord.js";
import { joinDelimitedFrames } from "../../src/codec/delimited.js";
import { encodeTransactionPayload } from "../../src/codec/messages.js";
import { decodeTransactionRecord } from "../../src/ingest/decodeTransactionRecord.js";
import {
  auditDecisions,
  DecisionAuditor,
  MALFORMED_HEADER,
  p99ByWindow,
  stallsByEvent,
  type DecidedTransaction,
} from "../../chaos/decisionAudit.js";
import { MALFORMED_KINDS, malformedCorpus } from "../../chaos/malformedCorpus.js";
import { renderReliability, type ReliabilityRow } from "../../chaos/reliabilityReport.js";
import { check, requiredMet, requirement } from "../../chaos/scenario.js";
import { killMoments } from "../../chaos/scenarios/crashes.js";
import { recoveryAfter } from "../../chaos/scenarios/redis.js";
import type { TopicRecord } from "../../chaos/topicReader.js";
import { sampleTransaction } from "../support/transactions.js";

const txRecord = (
  id: string,
  card: string,
  partition: number,
  timestampMs: number,
  offset = 0,
): TopicRecord => ({
  partition,
  offset,
  timestampMs,
  key: card,
  value: joinDelimitedFrames([
    encodeTransactionPayload(sampleTransaction({ transactionId: id, cardId: card })),
  ]),
  headers: {},
});

const decisionRecord = (id: string, appendedMs: number, fallback = false): TopicRecord => ({
  partition: 0,
  offset: 0,
  timestampMs: appendedMs,
  key: id,
  value: encodeDecisionRecord({ transactionId: id, fallback }, 1),
  headers: {},
});

describe("auditDecisions", () => {
  it("splits latency into arrival (record timestamp → picked) and publish (decided → appended)", () => {
    const sent = [txRecord("a", "card-1", 0, 1_000), txRecord("b", "card-2", 1, 1_000)];
    const timed = (
      id: string,
      queueMs: number,
      decidedAtMs: number,
      appendedMs: number,
      fallback: boolean,
    ) => ({
      ...decisionRecord(id, appendedMs),
      value: encodeDecisionRecord(
        { transactionId: id, fallback, decidedAtMs, timings: { queueUs: queueMs * 1000 } },
        1,
      ),
    });

    const audit = auditDecisions(sent, [
      timed("a", 120, 1_130, 1_190, false),
      timed("b", 180, 1_185, 1_300, true),
    ]);

    expect(audit.legs.arrival).toEqual({ p50Ms: 120, p99Ms: 180 });
    expect(audit.legs.publish).toEqual({ p50Ms: 60, p99Ms: 115 });
    expect(audit.arrivalsAndFallbacks).toEqual([
      [120, false],
      [180, true],
    ]);
  });

  it("counts a transaction without a decision as lost and a second decision as a duplicate", () => {
    const sent = [
      txRecord("a", "card-1", 0, 1_000),
      txRecord("b", "card-1", 0, 1_010),
      txRecord("c", "card-2", 1, 1_020),
    ];
    const decided = [
      decisionRecord("a", 1_050),
      decisionRecord("a", 1_900),
      decisionRecord("c", 1_100, true),
    ];

    const audit = auditDecisions(sent, decided);

    expect(audit).toMatchObject({
      sent: 3,
      decided: 2,
      lost: 1,
      lostExamples: ["b"],
      duplicates: 1,
      unexpected: 0,
    });
    expect(audit.p100Ms).toBe(80);
    expect(audit.fallbackShare).toBe(0.5);
    expect(audit.perCard).toEqual(
      new Map([
        ["card-1", 2],
        ["card-2", 1],
      ]),
    );
  });

  it("measures latency to the first decision and the longest gap within one input partition", () => {
    const sent = [
      txRecord("a", "card-1", 0, 0),
      txRecord("b", "card-1", 0, 10),
      txRecord("c", "card-2", 1, 20),
    ];
    const decided = [
      decisionRecord("a", 5),
      decisionRecord("b", 4_005),
      decisionRecord("b", 30),
      decisionRecord("c", 40),
    ];

    const audit = auditDecisions(sent, decided);

    expect(audit.longestStallMs).toBe(25);
    expect(audit.p100Ms).toBe(20);
  });

  it("matches dead letters to the malformed records they came from, and notices one without a reason", () => {
    const bad: TopicRecord = {
      ...txRecord("x", "k", 2, 0, 7),
      value: Buffer.from([0xff]),
      headers: { [MALFORMED_HEADER]: "random_bytes" },
    };
    const bad2: TopicRecord = { ...bad, offset: 8 };
    const dlq = (offset: number, reason?: string): TopicRecord => ({
      ...bad,
      headers: {
        "dlq.source.partition": "2",
        "dlq.source.offset": String(offset),
        ...(reason ? { "dlq.reason": reason } : {}),
      },
    });

    const audit = auditDecisions([bad, bad2], [], [dlq(7, "truncated_frame"), dlq(8)]);

    expect(audit).toMatchObject({ sent: 0, malformedSent: 2, malformedInDlq: 2, malformedWithoutReason: 1 });
  });
});

describe("DecisionAuditor", () => {
  it("audits records fed one at a time as auditDecisions does over whole topics", () => {
    const sent = [txRecord("a", "card-1", 0, 1_000), txRecord("b", "card-2", 1, 1_010)];
    const decided = [decisionRecord("a", 1_040), decisionRecord("x", 1_050), decisionRecord("a", 1_070)];
    const auditor = new DecisionAuditor();
    for (const r of sent) auditor.addTransactionRecord(r);
    for (const r of decided) auditor.addDecisionRecord(r);

    const streamed = auditor.finish();

    expect(streamed).toEqual(auditDecisions(sent, decided));
    expect(streamed).toMatchObject({ sent: 2, decided: 1, lost: 1, duplicates: 1, unexpected: 1 });
  });

  it("refuses a transaction record after the first decision: decisions are checked against what was sent", () => {
    const auditor = new DecisionAuditor();
    auditor.addDecisionRecord(decisionRecord("a", 1_040));
    expect(() => auditor.addTransactionRecord(txRecord("a", "card-1", 0, 1_000))).toThrow(
      /before the decisions/,
    );
  });
});

describe("required targets and goals", () => {
  const row = (targets: ReliabilityRow["targets"]): ReliabilityRow => ({
    scenario: "s",
    summary: "a scenario",
    date: "2026-12-01",
    commit: "abc",
    scale: 1,
    load: "1 tx/s",
    transactions: 1,
    lost: 0,
    duplicates: 0,
    p99Ms: 1,
    p100Ms: 1,
    longestStallMs: 1,
    fallbackShare: 0,
    targets,
    notes: [],
  });

  it("fails a run only on a required target, and marks a missed goal in the table", () => {
    const goalMissed = [requirement("0 lost", true, "0"), check("p99 within 20 %", false, "211 ms")];
    const requiredMissed = [requirement("0 lost", false, "3"), check("p99 within 20 %", true, "40 ms")];

    expect(requiredMet(goalMissed)).toBe(true);
    expect(requiredMet(requiredMissed)).toBe(false);
    const table = renderReliability([row(goalMissed)]);
    expect(table).toContain("required met; **goal missed**: p99 within 20 %");
    expect(table).toContain("- ✓ 0 lost (required): 0");
    expect(renderReliability([row(requiredMissed)])).toContain("**required missed**: 0 lost");
  });
});

describe("stallsByEvent", () => {
  it("gives each event the longest partition gap that began in its span", () => {
    const decided = (partition: number, appendedMs: number): DecidedTransaction => ({
      transactionId: `t-${partition}-${appendedMs}`,
      cardId: "c",
      partition,
      timestampMs: appendedMs,
      appendedMs,
      fallback: false,
      fallbackCause: 0,
      arrivalMs: 0,
      publishMs: 0,
    });
    const appends = [
      ...[0, 100, 200, 300].map((t) => decided(0, t)), // steady: 100 ms gaps
      ...[10_000, 12_500, 12_600].map((t) => decided(0, t)), // a 2.5 s gap from 10 s
      ...[0, 21_000, 24_000, 24_100].map((t) => decided(1, t)), // 21 s (from 0: steady), then 3 s from 21 s
    ];
    const stalls = stallsByEvent(appends, [
      { name: "added", atMs: 10_500 },
      { name: "killed", atMs: 20_800 },
    ]);
    expect(stalls.map((s) => [s.event, s.longestMs, s.partition])).toEqual([
      ["steady", 21_000, 1],
      ["added", 2_500, 0],
      ["killed", 3_000, 1],
    ]);
    expect(stalls[2]!.startedAfterMs).toBe(200);
  });
});

describe("p99ByWindow", () => {
  it("gives one p99 per window of send time", () => {
    const timeline = [
      [0, 5],
      [10, 7],
      [1_000, 50],
      [1_500, 60],
    ] as const;

    expect(p99ByWindow(timeline, 1_000)).toEqual([7, 60]);
  });
});

describe("malformedCorpus", () => {
  it("yields only records the product's decoder rejects, of every kind, the same for a seed", () => {
    const corpus = [...malformedCorpus(700, { nearLimit: 2 })];

    expect(new Set(corpus.map((r) => r.kind))).toEqual(new Set(MALFORMED_KINDS));
    for (const r of corpus)
      expect(decodeTransactionRecord(r.value, { transactionSchemaIds: new Set() }).ok).toBe(false);
    expect(corpus.filter((r) => r.kind === "near_size_limit").every((r) => r.value.length > 1_000_000)).toBe(
      true,
    );
    const hex = (seed: number) =>
      [...malformedCorpus(50, { seed, nearLimit: 0 })].map((r) => r.value.toString("hex"));
    expect(hex(3)).toEqual(hex(3));
    expect(hex(3)).not.toEqual(hex(4));
  });
});

describe("recoveryAfter", () => {
  const decided = (appendedMs: number, fallback: boolean): DecidedTransaction => ({
    transactionId: `t${appendedMs}`,
    cardId: "card-1",
    partition: 0,
    timestampMs: appendedMs - 10,
    appendedMs,
    fallback,
    fallbackCause: fallback ? 1 : 0,
    arrivalMs: 5,
    publishMs: 1,
  });

  it("times the first model and the last rules decision from Redis answering, ignoring those before", () => {
    const r = recoveryAfter(
      [
        decided(900, true),
        decided(1_000, false),
        decided(1_300, true),
        decided(1_450, false),
        decided(1_700, true),
      ],
      1_200,
    );

    expect(r.firstModelMs).toBe(250);
    expect(r.lastRulesMs).toBe(500);
    expect(r.text).toContain("2 rules decisions after it");
  });

  it("reports a model that never came back, and a Redis that never restarted as unmet", () => {
    expect(recoveryAfter([decided(2_000, true)], 1_000).text).toContain("first model decision never");
    expect(recoveryAfter([decided(2_000, false)], Number.NaN).lastRulesMs).toBe(Infinity);
  });
});

describe("killMoments", () => {
  it("spreads kills over the window, each at least the gap after the previous", () => {
    const moments = killMoments(10, 5_000, 295_000, 8_000);

    expect(moments).toHaveLength(10);
    expect(moments[0]).toBeGreaterThanOrEqual(5_000);
    expect(moments.at(-1)).toBeLessThan(295_000);
    for (let i = 1; i < moments.length; i++)
      expect(moments[i]! - moments[i - 1]!).toBeGreaterThanOrEqual(8_000);
  });
});
