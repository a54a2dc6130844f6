// `decisions tail` prints what a risk analyst needs on one line, colours only for terminals,
// and filters by action and fallback.
import { describe, expect, it } from "vitest";
import { Action, FallbackCause, type DecisionInit } from "../../../src/codec/messages.js";
import { decisionFromJson, decisionToJson, float32Text } from "../../../src/decisions/decisionJson.js";
import { matchesFilter, parseActions } from "../../../src/decisions/decisionFilter.js";
import { formatDecisionJson, formatDecisionLine } from "../../../src/decisions/formatDecision.js";
import { wantsColour } from "../../../src/cli/decisionsOptions.js";

const decision = (overrides: Partial<DecisionInit> = {}): DecisionInit => ({
  transactionId: "tx-00012345",
  cardId: "card-0042",
  action: Action.ACTION_DECLINE,
  score: Math.fround(0.93),
  reasonCodes: ["rule:card-testing-cashout", "feature:amount_eur"],
  modelVersion: "2025.11.29",
  featureSchemaVersion: "card-features-1",
  rulesVersion: "default-2025.1",
  fallback: false,
  fallbackCause: FallbackCause.FALLBACK_CAUSE_UNSPECIFIED,
  eventTimeMs: Date.UTC(2025, 0, 6, 15, 40, 0, 900),
  decidedAtMs: Date.UTC(2025, 0, 6, 15, 40, 1, 123),
  timings: { totalUs: 12_400, modelUs: 900 },
  ...overrides,
});

const ESC = "\u001b[";

describe("decision line", () => {
  it("shows time, action, score, ids, latency and reasons, plain when not on a terminal", () => {
    expect(formatDecisionLine(decision(), { colour: false })).toBe(
      "15:40:01.123  DECLINE  0.930  tx-00012345  card-0042    12.4 ms  rule:card-testing-cashout feature:amount_eur",
    );
  });

  it("marks a fallback with its cause", () => {
    const line = formatDecisionLine(
      decision({
        action: Action.ACTION_REVIEW,
        fallback: true,
        fallbackCause: FallbackCause.FALLBACK_CAUSE_TIMEOUT,
        reasonCodes: [],
      }),
      { colour: false },
    );
    expect(line).toContain("REVIEW ");
    expect(line).toMatch(/ms {2}fallback:timeout$/);
  });

  it("colours declines red, reviews yellow, approvals green and fallbacks magenta", () => {
    expect(formatDecisionLine(decision(), { colour: true })).toContain(`${ESC}1m${ESC}31mDECLINE`);
    expect(formatDecisionLine(decision({ action: Action.ACTION_REVIEW }), { colour: true })).toContain(
      `${ESC}33mREVIEW`,
    );
    expect(formatDecisionLine(decision({ action: Action.ACTION_APPROVE }), { colour: true })).toContain(
      `${ESC}32mAPPROVE`,
    );
    expect(
      formatDecisionLine(
        decision({ fallback: true, fallbackCause: FallbackCause.FALLBACK_CAUSE_BREAKER_OPEN }),
        { colour: true },
      ),
    ).toContain(`${ESC}35mfallback:breaker_open`);
    expect(formatDecisionLine(decision(), { colour: false })).not.toContain(ESC);
  });

  it("colours by default only on a terminal and never with NO_COLOR", () => {
    expect(wantsColour(undefined, true, {})).toBe(true);
    expect(wantsColour(undefined, false, {})).toBe(false);
    expect(wantsColour(undefined, true, { NO_COLOR: "1" })).toBe(false);
    expect(wantsColour(true, false, {})).toBe(true);
    expect(wantsColour(false, true, {})).toBe(false);
  });
});

describe("decision JSON", () => {
  it("has a fixed field order, enum names and the float32 score as written", () => {
    const json = JSON.parse(formatDecisionJson(decision(), { partition: 3, offset: "17" })) as Record<
      string,
      unknown
    >;
    expect(Object.keys(json)).toEqual([
      "transaction_id",
      "card_id",
      "action",
      "score",
      "reason_codes",
      "fallback",
      "fallback_cause",
      "model_version",
      "feature_schema_version",
      "rules_version",
      "event_time_ms",
      "decided_at_ms",
      "timings",
      "partition",
      "offset",
    ]);
    expect(json.action).toBe("DECLINE");
    expect(json.score).toBe(0.93);
    expect(json.fallback_cause).toBeNull();
  });

  it("reads back what it writes", () => {
    const d = decision({ fallback: true, fallbackCause: FallbackCause.FALLBACK_CAUSE_STATE_UNAVAILABLE });
    expect(decisionToJson(decisionFromJson(decisionToJson(d)))).toEqual(decisionToJson(d));
  });

  it("prints a float32 with the fewest digits that read back as the same float32", () => {
    expect(float32Text(Math.fround(0.1))).toBe(0.1);
    expect(float32Text(Math.fround(0.8912345))).toBe(0.8912345);
    expect(Math.fround(float32Text(Math.fround(1 / 3)))).toBe(Math.fround(1 / 3));
  });
});

describe("tail filters", () => {
  it("keeps only the named actions", () => {
    const actions = parseActions("decline, Review");
    expect(actions).toEqual(new Set(["DECLINE", "REVIEW"]));
    if (typeof actions === "string") return;
    expect(matchesFilter(decision(), { actions })).toBe(true);
    expect(matchesFilter(decision({ action: Action.ACTION_APPROVE }), { actions })).toBe(false);
  });

  it("keeps only fallbacks, or only model decisions", () => {
    const fallback = decision({ fallback: true, fallbackCause: FallbackCause.FALLBACK_CAUSE_TIMEOUT });
    expect(matchesFilter(fallback, { fallback: true })).toBe(true);
    expect(matchesFilter(decision(), { fallback: true })).toBe(false);
    expect(matchesFilter(fallback, { fallback: false })).toBe(false);
    expect(matchesFilter(decision(), {})).toBe(true);
  });

  it("names the allowed actions when given an unknown one", () => {
    expect(parseActions("deny")).toBe(
      '--action "deny": expected a comma-separated list of approve, review, decline',
    );
  });
});
