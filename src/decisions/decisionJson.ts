// A Decision as a plain JSON object with a fixed field order (proto field names, enum names
// without their prefix), so NDJSON written by replay and by `decisions tail --json` diffs line
// by line. Timings come last: they are the only fields that differ between two replays.
import { wireStageTimings } from "../codec/decisionWire.js";
import { Action, FallbackCause, type DecisionInit } from "../codec/messages.js";

export type ActionName = "APPROVE" | "REVIEW" | "DECLINE" | "UNSPECIFIED";
export const ACTION_NAMES: readonly ActionName[] = ["APPROVE", "REVIEW", "DECLINE"];

export type FallbackCauseName =
  | "BREAKER_OPEN"
  | "TIMEOUT"
  | "BUDGET_EXHAUSTED"
  | "MODEL_UNAVAILABLE"
  | "STATE_UNAVAILABLE"
  | "INTERNAL_ERROR";

export interface DecisionTimingsJson {
  readonly queue_us: number;
  readonly decode_us: number;
  readonly state_read_us: number;
  readonly features_us: number;
  readonly model_us: number;
  readonly policy_us: number;
  readonly state_write_us: number;
  readonly total_us: number;
}

export interface DecisionJson {
  readonly transaction_id: string;
  readonly card_id: string;
  readonly action: ActionName;
  readonly score: number;
  readonly reason_codes: readonly string[];
  readonly fallback: boolean;
  readonly fallback_cause: FallbackCauseName | null;
  readonly model_version: string;
  readonly feature_schema_version: string;
  readonly rules_version: string;
  readonly event_time_ms: number;
  readonly decided_at_ms: number;
  readonly timings?: DecisionTimingsJson;
}

export const actionName = (action: number | null | undefined): ActionName =>
  ((Action[action ?? 0] as string | undefined)?.replace("ACTION_", "") as ActionName | undefined) ??
  "UNSPECIFIED";

export const fallbackCauseName = (cause: number | null | undefined): FallbackCauseName | null =>
  !cause
    ? null
    : (((FallbackCause[cause] as string | undefined)?.replace("FALLBACK_CAUSE_", "") ??
        "INTERNAL_ERROR") as FallbackCauseName);

export const actionValue = (name: ActionName): number => Action[`ACTION_${name}`];

/**
 * The shortest decimal that reads back as the same float32: scores are float32 on the wire, and
 * printing the double they widen to (0.8912345170974731) suggests precision that is not there.
 */
export function float32Text(value: number): number {
  const f = Math.fround(value);
  if (!Number.isFinite(f) || f === 0) return f;
  for (let digits = 1; digits < 9; digits++) {
    const shorter = Number(f.toPrecision(digits));
    if (Math.fround(shorter) === f) return shorter;
  }
  return Number(f.toPrecision(9));
}

const num = (v: number | null | undefined): number => v ?? 0;

export function decisionToJson(
  d: DecisionInit,
  { timings = true }: { timings?: boolean } = {},
): DecisionJson {
  return {
    transaction_id: d.transactionId ?? "",
    card_id: d.cardId ?? "",
    action: actionName(d.action),
    score: float32Text(d.score ?? 0),
    reason_codes: [...(d.reasonCodes ?? [])],
    fallback: d.fallback ?? false,
    fallback_cause: fallbackCauseName(d.fallbackCause),
    model_version: d.modelVersion ?? "",
    feature_schema_version: d.featureSchemaVersion ?? "",
    rules_version: d.rulesVersion ?? "",
    event_time_ms: num(d.eventTimeMs),
    decided_at_ms: num(d.decidedAtMs),
    ...(timings
      ? {
          timings: wireStageTimings(d.timings ?? {}),
        }
      : {}),
  };
}

/** The inverse, for recorded decisions kept as NDJSON (replay output or `tail --json`). */
export function decisionFromJson(j: DecisionJson): DecisionInit {
  return {
    transactionId: j.transaction_id,
    cardId: j.card_id,
    action: actionValue(j.action),
    score: j.score,
    reasonCodes: [...j.reason_codes],
    fallback: j.fallback,
    fallbackCause: j.fallback_cause === null ? 0 : FallbackCause[`FALLBACK_CAUSE_${j.fallback_cause}`],
    modelVersion: j.model_version,
    featureSchemaVersion: j.feature_schema_version,
    rulesVersion: j.rules_version,
    eventTimeMs: j.event_time_ms,
    decidedAtMs: j.decided_at_ms,
    ...(j.timings
      ? {
          timings: {
            queueUs: j.timings.queue_us,
            decodeUs: j.timings.decode_us,
            stateReadUs: j.timings.state_read_us,
            featuresUs: j.timings.features_us,
            modelUs: j.timings.model_us,
            policyUs: j.timings.policy_us,
            stateWriteUs: j.timings.state_write_us,
            totalUs: j.timings.total_us,
          },
        }
      : {}),
  };
}
