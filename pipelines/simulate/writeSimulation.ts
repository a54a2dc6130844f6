// Writes a simulation as the time-split files training reads: {train,validation,test}.pbd with
// their .labels.csv, plus summary.json (counts, fraud rates per split and typology, the seed).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SPLITS, splitFiles, type SplitName } from "../dataset/labelledDataset.js";
import { writeLabelsFile, writeTransactionsFile } from "../../src/codec/transactionFiles.js";
import {
  DEFAULT_START_MS,
  simulatePayments,
  type SimulatedTransaction,
  type SimulationOptions,
} from "../../src/tools/simulate/simulatePayments.js";

const DAY = 86_400_000;

export interface SimulationSplit {
  /** Day (from the start) at which validation, then test, begin. */
  readonly validationFromDay: number;
  readonly testFromDay: number;
}

export interface SimulationSummary {
  readonly options: SimulationOptions;
  readonly split: SimulationSplit;
  readonly splits: Record<SplitName, { transactions: number; labelledFraud: number; fraudRate: number }>;
  readonly typologies: Record<string, number>;
  readonly ringTransactions: number;
}

export async function writeSimulation(
  dir: string,
  options: SimulationOptions,
  split: SimulationSplit,
): Promise<SimulationSummary> {
  const sim = simulatePayments(options);
  const start = options.startMs ?? DEFAULT_START_MS;
  const splitOf = (s: SimulatedTransaction): SplitName => {
    const day = (Number(s.tx.eventTimeMs) - start) / DAY;
    return day >= split.testFromDay ? "test" : day >= split.validationFromDay ? "validation" : "train";
  };
  const bySplit: Record<SplitName, SimulatedTransaction[]> = { train: [], validation: [], test: [] };
  for (const s of sim) bySplit[splitOf(s)].push(s);
  const splits = {} as SimulationSummary["splits"];
  for (const name of SPLITS) {
    const rows = bySplit[name];
    const files = splitFiles(dir, name);
    await writeTransactionsFile(
      files.transactions,
      rows.map((r) => r.tx),
    );
    await writeLabelsFile(
      files.labels,
      rows.map((r) => ({ transactionId: r.tx.transactionId!, isFraud: r.isFraud })),
    );
    const labelledFraud = rows.filter((r) => r.isFraud).length;
    splits[name] = {
      transactions: rows.length,
      labelledFraud,
      fraudRate: rows.length ? labelledFraud / rows.length : 0,
    };
  }
  const typologies: Record<string, number> = {};
  for (const s of sim) typologies[s.typology] = (typologies[s.typology] ?? 0) + 1;
  const summary: SimulationSummary = {
    options,
    split,
    splits,
    typologies,
    ringTransactions: sim.filter((s) => s.ring).length,
  };
  await writeFile(join(dir, "summary.json"), JSON.stringify(summary, null, 2) + "\n");
  return summary;
}
