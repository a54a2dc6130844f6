// A delimited-Protobuf transaction file (.pbd) as replay input: file order, position = index,
// budget start = event time. A framing error makes the file unusable (nothing after it can be
// trusted); a transaction that fails validation is skipped as the scorer would dead-letter it.
import { readFile } from "node:fs/promises";
import { splitDelimitedFrames } from "../codec/delimited.js";
import { decodeTransactionPayload } from "../codec/messages.js";
import { validateTransaction } from "../ingest/validateTransaction.js";
import {
  ReplayInputError,
  type RejectedRecord,
  type ReplayInput,
  type ReplayRecord,
} from "./replayRecord.js";

export async function readTransactionFile(path: string): Promise<ReplayInput> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new ReplayInputError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).message}`);
  }
  return decodeTransactionFile(bytes, path);
}

export function decodeTransactionFile(bytes: Uint8Array, name: string): ReplayInput {
  if (bytes.length === 0) throw new ReplayInputError(`${name} is empty: no transactions to replay`);
  const frames = splitDelimitedFrames(bytes);
  if (!frames.ok) {
    const { message, byteOffset, frameIndex } = frames.error;
    throw new ReplayInputError(
      `${name} is not a delimited Protobuf transaction file: ${message}` +
        ` (transaction #${frameIndex ?? 0}, byte ${byteOffset ?? 0})`,
    );
  }
  const records: ReplayRecord[] = [];
  const rejected: RejectedRecord[] = [];
  frames.value.forEach((payload, index) => {
    const parsed = decodeTransactionPayload(payload);
    const tx = parsed.ok ? validateTransaction(parsed.value) : parsed;
    const source = { kind: "file", index } as const;
    if (!tx.ok) rejected.push({ source, error: { ...tx.error, frameIndex: index } });
    else
      records.push({ tx: tx.value, payload, position: index, budgetStartMs: tx.value.eventTimeMs, source });
  });
  if (records.length === 0 && rejected.length > 0) {
    throw new ReplayInputError(
      `${name}: none of its ${rejected.length} transactions is valid; the first: ${rejected[0]!.error.message}`,
    );
  }
  return { description: `file ${name}`, records, rejected };
}
