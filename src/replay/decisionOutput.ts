// Replay's output: one decision per transaction, in input order, as NDJSON (fixed field order,
// the source record named, timings last) or as a delimited Protobuf stream of Decisions.
// Without timings two runs over the same input are byte-identical.
import { createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import { encodeDecisionPayload, type DecisionInit } from "../codec/messages.js";
import { joinDelimitedFrames } from "../codec/delimited.js";
import { decisionToJson } from "../decisions/decisionJson.js";
import type { ReplayedDecision } from "./replayTransactions.js";
import type { ReplaySourceRef } from "./replayRecord.js";

export type DecisionFormat = "ndjson" | "pbd";

const sourceJson = (s: ReplaySourceRef) =>
  s.kind === "file"
    ? { index: s.index }
    : { partition: s.partition, offset: s.offset, frame: s.frame, timestamp_ms: s.timestampMs };

export function decisionLine(
  { decision, record }: ReplayedDecision,
  { timings }: { timings: boolean },
): string {
  const { timings: t, ...fields } = decisionToJson(decision, { timings });
  return `${JSON.stringify({ ...fields, source: sourceJson(record.source), ...(t ? { timings: t } : {}) })}\n`;
}

const withoutTimings = (d: DecisionInit): DecisionInit => {
  const { timings: _dropped, ...rest } = d;
  return rest;
};

export function encodeDecisions(
  decided: readonly ReplayedDecision[],
  { format, timings }: { format: DecisionFormat; timings: boolean },
): Buffer {
  if (format === "ndjson") return Buffer.from(decided.map((d) => decisionLine(d, { timings })).join(""));
  return joinDelimitedFrames(
    decided.map(({ decision }) => encodeDecisionPayload(timings ? decision : withoutTimings(decision))),
  );
}

/** Writes batches as they are decided, to a file or stdout, honouring back-pressure. */
export class DecisionWriter {
  readonly #stream: NodeJS.WritableStream;
  readonly #ownStream: WriteStream | undefined;
  readonly #options: { format: DecisionFormat; timings: boolean };

  constructor(target: string, options: { format: DecisionFormat; timings: boolean }) {
    this.#options = options;
    if (target === "-") {
      this.#stream = process.stdout;
    } else {
      this.#ownStream = createWriteStream(target);
      this.#stream = this.#ownStream;
    }
  }

  async opened(): Promise<void> {
    if (this.#ownStream && this.#ownStream.pending) {
      await Promise.race([
        once(this.#ownStream, "open"),
        once(this.#ownStream, "error").then(([err]) => Promise.reject(err as Error)),
      ]);
    }
  }

  async write(decided: readonly ReplayedDecision[]): Promise<void> {
    if (decided.length === 0) return;
    if (!this.#stream.write(encodeDecisions(decided, this.#options))) await once(this.#stream, "drain");
  }

  async close(): Promise<void> {
    if (!this.#ownStream) return;
    this.#ownStream.end();
    await once(this.#ownStream, "finish");
  }
}
