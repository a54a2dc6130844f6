// What replay scores: validated transactions in replay order, each with its stream position
// and budget start, and where it came from (so an auditor can point at the source record).
import type { DecodeError } from "../codec/decodeError.js";
import type { Transaction } from "../codec/messages.js";
import type { StreamPosition } from "../scoring/ports.js";

export type ReplaySourceRef =
  | { readonly kind: "file"; readonly index: number }
  | {
      readonly kind: "topic";
      readonly partition: number;
      readonly offset: number;
      readonly frame: number;
      readonly timestampMs: number;
    };

export interface ReplayRecord {
  readonly tx: Transaction;
  readonly payload: Uint8Array;
  /** File index, or Kafka offset × 4096 + frame (streamPosition), as the scorer computes it. */
  readonly position: StreamPosition;
  /** The record timestamp (topic) or the event time (file): replay's clock runs on these. */
  readonly budgetStartMs: number;
  readonly source: ReplaySourceRef;
}

/** A record the scorer would have dead-lettered: replay skips it and says so. */
export interface RejectedRecord {
  readonly source: ReplaySourceRef;
  readonly error: DecodeError;
}

export interface ReplayInput {
  /** Human description for the summary: "file x.pbd", "topic t partitions 0-3 offsets …". */
  readonly description: string;
  readonly records: readonly ReplayRecord[];
  readonly rejected: readonly RejectedRecord[];
}

/** Bad arguments or unusable input: the message is for the user, the exit code is 2. */
export class ReplayInputError extends Error {
  override readonly name = "ReplayInputError";
}

export const describeSource = (source: ReplaySourceRef): string =>
  source.kind === "file"
    ? `#${source.index}`
    : `partition ${source.partition} offset ${source.offset}${source.frame > 0 ? ` frame ${source.frame}` : ""}`;
