// An audit replay (`fraud-scorer replay`, in-memory state, the data's own clock) of a whole
// transactions topic, compared with what the live scorers decided: the same action and the same
// float32 score, to the last bit, for every decision the model made live. The live scorers'
// fallbacks (late or degraded), which replay never has, are counted, not compared.
import { execFile } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "vitest";
import { committedModelDir } from "../../support/committedModel.js";
import type { DecisionsCollector } from "./decisionsCollector.js";

const run = promisify(execFile);
const ACTION_NAMES = ["UNSPECIFIED", "APPROVE", "REVIEW", "DECLINE"];

interface ReplayedLine {
  transaction_id: string;
  action: string;
  score: string;
  fallback: boolean;
}

export interface ReplayComparison {
  /** Transaction ids whose live decision (the model's) matched replay's. */
  readonly compared: ReadonlySet<string>;
  readonly liveFallbacks: number;
}

/** Replays `topic` and expects every model decision in `decisions` (over 80 % of them) to match it. */
export async function expectReplayMatchesLive(
  kafkaBrokers: string,
  topic: string,
  decisions: DecisionsCollector,
  transactions: number,
): Promise<ReplayComparison> {
  const dir = await mkdtemp(join(tmpdir(), "replay-live-"));
  const out = join(dir, "replayed.ndjson");
  await run(
    process.execPath,
    [
      "bin/fraud-scorer.js",
      "replay",
      "--topic",
      topic,
      "--from-time",
      "2000-01-01T00:00:00Z",
      "--to-time",
      String(Date.now() + 60_000),
      "--kafka-brokers",
      kafkaBrokers,
      "--model-dir",
      committedModelDir(),
      "--rules-file",
      "rules/default.yaml",
      "--out",
      out,
    ],
    { maxBuffer: 1 << 24 },
  );
  const replayed = (await readFile(out, "utf8"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as ReplayedLine);
  expect(replayed).toHaveLength(transactions);

  const compared = new Set<string>();
  let liveFallbacks = 0;
  let differentScores = 0;
  for (const r of replayed) {
    const live = decisions.byTransaction.get(r.transaction_id)!;
    expect(live, r.transaction_id).toBeDefined();
    expect(r.fallback).toBe(false);
    if (live.fallback) {
      liveFallbacks++;
      continue;
    }
    compared.add(r.transaction_id);
    // Replay prints the shortest decimal that reads back as the same float32.
    if (Math.fround(Number(r.score)) !== live.score) differentScores++;
    expect(Math.fround(Number(r.score)), r.transaction_id).toBe(live.score);
    expect(r.action, r.transaction_id).toBe(ACTION_NAMES[live.action]);
  }
  console.log(
    `replay vs live: ${compared.size} compared, ${liveFallbacks} live fallbacks left out, ${differentScores} scores differ`,
  );
  // Most of them, or the comparison says little: a scorer that fell back on the rest passes it.
  expect(compared.size).toBeGreaterThan(transactions * 0.8);
  return { compared, liveFallbacks };
}
