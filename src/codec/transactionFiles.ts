// Files the offline pipelines read and write:
// - `.pbd`: the delimited Protobuf stream of `fraud.v1.Transaction` (the replay format);
// - labels: CSV with header `transaction_id,is_fraud`, one row per transaction, is_fraud 1/0
//   (true/false accepted). Extra columns are ignored, so a company's export can carry more.
import { createReadStream } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { createInterface } from "node:readline";
import { fraud } from "./generated/fraud.js";
import { splitDelimitedFrames } from "./delimited.js";
import { decodeTransactionPayload } from "./messages.js";

export async function writeTransactionsFile(
  path: string,
  txs: Iterable<fraud.v1.ITransaction>,
): Promise<void> {
  const chunks: Uint8Array[] = [];
  for (const tx of txs) chunks.push(fraud.v1.Transaction.encodeDelimited(tx).finish());
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, Buffer.concat(chunks));
}

export async function readTransactionsFile(path: string): Promise<fraud.v1.Transaction[]> {
  const bytes = await readFile(path);
  if (bytes.length === 0) return [];
  const frames = splitDelimitedFrames(bytes, { maxFrameBytes: 1 << 20 });
  if (!frames.ok)
    throw new Error(`${path}: ${frames.error.message} (byte ${frames.error.byteOffset ?? "?"})`);
  return frames.value.map((payload, i) => {
    const tx = decodeTransactionPayload(payload);
    if (!tx.ok) throw new Error(`${path}: transaction #${i}: ${tx.error.message}`);
    return tx.value;
  });
}

export interface LabelRow {
  readonly transactionId: string;
  readonly isFraud: boolean;
}

export async function writeLabelsFile(path: string, rows: Iterable<LabelRow>): Promise<void> {
  const lines = ["transaction_id,is_fraud"];
  for (const r of rows) lines.push(`${r.transactionId},${r.isFraud ? 1 : 0}`);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, lines.join("\n") + "\n");
}

const TRUE = new Set(["1", "true", "TRUE", "True", "yes"]);
const FALSE = new Set(["0", "false", "FALSE", "False", "no"]);

export async function readLabelsFile(path: string): Promise<Map<string, boolean>> {
  const labels = new Map<string, boolean>();
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let lineNo = 0;
  let idCol = 0;
  let fraudCol = 1;
  for await (const line of lines) {
    lineNo++;
    if (line.trim() === "") continue;
    const cells = line.split(",").map((c) => c.trim().replace(/^"|"$/g, ""));
    if (lineNo === 1) {
      idCol = cells.indexOf("transaction_id");
      fraudCol = cells.indexOf("is_fraud");
      if (idCol < 0 || fraudCol < 0)
        throw new Error(`${path}: header must name transaction_id and is_fraud, got "${line}"`);
      continue;
    }
    const id = cells[idCol];
    const value = cells[fraudCol] ?? "";
    if (!id) throw new Error(`${path}:${lineNo}: empty transaction_id`);
    if (TRUE.has(value)) labels.set(id, true);
    else if (FALSE.has(value)) labels.set(id, false);
    else throw new Error(`${path}:${lineNo}: is_fraud must be 1/0 or true/false, got "${value}"`);
  }
  return labels;
}
