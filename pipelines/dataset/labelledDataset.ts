// A labelled transaction history split by time: what training and evaluation consume. Either
// the simulator's split directory or any delimited Transaction file with a labels file, which
// is then split by event-time quantiles, so a payment company's own history goes the same way.
import { join } from "node:path";
import type { fraud } from "../../src/codec/generated/fraud.js";
import { readLabelsFile, readTransactionsFile } from "../../src/codec/transactionFiles.js";

export const SPLITS = ["train", "validation", "test"] as const;
export type SplitName = (typeof SPLITS)[number];
export const SPLIT_INDEX: Readonly<Record<SplitName, number>> = { train: 0, validation: 1, test: 2 };

export interface LabelledDataset {
  /** In event-time order. */
  readonly transactions: readonly fraud.v1.ITransaction[];
  readonly labels: Uint8Array;
  /** SPLIT_INDEX of each transaction. */
  readonly split: Uint8Array;
  readonly unlabelled: number;
  readonly source: string;
}

export type DatasetSource =
  | { readonly dir: string }
  | {
      readonly transactions: string;
      readonly labels: string;
      readonly validationFraction?: number;
      readonly testFraction?: number;
    };

export const splitFiles = (dir: string, split: SplitName) => ({
  transactions: join(dir, `${split}.pbd`),
  labels: join(dir, `${split}.labels.csv`),
});

function assemble(
  parts: { txs: fraud.v1.ITransaction[]; split: number }[],
  labels: Map<string, boolean>,
  source: string,
): LabelledDataset {
  const rows = parts.flatMap((p) => p.txs.map((tx) => ({ tx, split: p.split })));
  rows.sort((a, b) => Number(a.tx.eventTimeMs) - Number(b.tx.eventTimeMs));
  let unlabelled = 0;
  const y = new Uint8Array(rows.length);
  rows.forEach((r, i) => {
    const label = labels.get(r.tx.transactionId ?? "");
    if (label === undefined) unlabelled++;
    y[i] = label ? 1 : 0;
  });
  return {
    transactions: rows.map((r) => r.tx),
    labels: y,
    split: Uint8Array.from(rows, (r) => r.split),
    unlabelled,
    source,
  };
}

export async function loadLabelledDataset(source: DatasetSource): Promise<LabelledDataset> {
  if ("dir" in source) {
    const labels = new Map<string, boolean>();
    const parts = [];
    for (const name of SPLITS) {
      const files = splitFiles(source.dir, name);
      for (const [id, v] of await readLabelsFile(files.labels)) labels.set(id, v);
      parts.push({ txs: await readTransactionsFile(files.transactions), split: SPLIT_INDEX[name] });
    }
    return assemble(parts, labels, source.dir);
  }
  const txs = await readTransactionsFile(source.transactions);
  const labels = await readLabelsFile(source.labels);
  txs.sort((a, b) => Number(a.eventTimeMs) - Number(b.eventTimeMs));
  const n = txs.length;
  const testFrom = Math.floor(n * (1 - (source.testFraction ?? 0.2)));
  const validationFrom = Math.floor(testFrom - n * (source.validationFraction ?? 0.15));
  // Cut at time boundaries (not indices) so no second straddles two splits.
  const timeAt = (i: number) => Number(txs[Math.min(i, n - 1)]?.eventTimeMs ?? 0);
  const vT = timeAt(validationFrom);
  const tT = timeAt(testFrom);
  const splitOf = (tx: fraud.v1.ITransaction) =>
    Number(tx.eventTimeMs) >= tT ? 2 : Number(tx.eventTimeMs) >= vT ? 1 : 0;
  const parts = [0, 1, 2].map((s) => ({ txs: txs.filter((tx) => splitOf(tx) === s), split: s }));
  return assemble(parts, labels, source.transactions);
}
