// Replay is deterministic: the same input, model and rules give byte-identical decisions apart
// from the timing fields, and none of them is a budget fallback.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTransactionsFile } from "../../../src/codec/transactionFiles.js";
import { simulatePayments } from "../../../src/tools/simulate/simulatePayments.js";
import { ruleEvaluator } from "../../../src/rules/ruleEvaluator.js";
import { loadRuleSet } from "../../../src/rules/ruleSet.js";
import { DecisionWriter, type DecisionFormat } from "../../../src/replay/decisionOutput.js";
import { readTransactionFile } from "../../../src/replay/transactionFile.js";
import { replayTransactions, type ReplaySettings } from "../../../src/replay/replayTransactions.js";
import type { ReplayInput } from "../../../src/replay/replayRecord.js";
import { committedModelDir } from "../../support/committedModel.js";
import { fakeModel } from "../../support/fakeModel.js";

const settings: ReplaySettings = {
  batchSize: 64,
  thresholds: { review: 0.5, decline: 0.85 },
  budgetMs: 200,
  minBudgetForModelMs: 40,
  explainTopFeatures: 3,
};

let dir: string;
let input: ReplayInput;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "replay-"));
  const file = join(dir, "tx.pbd");
  await writeTransactionsFile(
    file,
    simulatePayments({ seed: 11, cards: 150, days: 6 }).map((s) => s.tx),
  );
  input = await readTransactionFile(file);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function replayTo(name: string, format: DecisionFormat, timings: boolean): Promise<Buffer> {
  const out = join(dir, name);
  const writer = new DecisionWriter(out, { format, timings });
  await writer.opened();
  await replayTransactions(
    input.records,
    settings,
    { model: fakeModel(), rules: ruleEvaluator(await loadRuleSet()) },
    {
      onBatch: (batch) => writer.write(batch),
    },
  );
  await writer.close();
  return readFile(out);
}

const withoutTimings = (ndjson: Buffer) =>
  ndjson
    .toString()
    .trimEnd()
    .split("\n")
    .map((line) => {
      const { timings: _t, ...rest } = JSON.parse(line) as Record<string, unknown>;
      return JSON.stringify(rest);
    });

describe("replay determinism", () => {
  it("two replays of the same file write identical decisions apart from timing fields", async () => {
    const first = await replayTo("a.ndjson", "ndjson", true);
    const second = await replayTo("b.ndjson", "ndjson", true);
    const lines = withoutTimings(first);
    expect(lines).toHaveLength(input.records.length);
    expect(withoutTimings(second)).toEqual(lines);
    // The check is not vacuous: decisions vary, and the model decided them.
    const decisions = lines.map(
      (l) => JSON.parse(l) as { action: string; fallback: boolean; reason_codes: string[] },
    );
    expect(new Set(decisions.map((d) => d.action)).size).toBeGreaterThan(1);
    expect(decisions.filter((d) => d.fallback)).toHaveLength(0);
  });

  it("without timings, two replays are byte-identical, as NDJSON and as delimited Protobuf", async () => {
    expect(
      (await replayTo("c.ndjson", "ndjson", false)).equals(await replayTo("d.ndjson", "ndjson", false)),
    ).toBe(true);
    const pbd = await replayTo("e.pbd", "pbd", false);
    expect(pbd.length).toBeGreaterThan(0);
    expect(pbd.equals(await replayTo("f.pbd", "pbd", false))).toBe(true);
  });

  it("keeps input order, names each source record and decides at the data's time, not the wall clock", async () => {
    const lines = (await replayTo("g.ndjson", "ndjson", false)).toString().trimEnd().split("\n");
    const parsed = lines.map(
      (l) =>
        JSON.parse(l) as {
          transaction_id: string;
          decided_at_ms: number;
          event_time_ms: number;
          source: { index: number };
        },
    );
    parsed.forEach((d, i) => {
      expect(d.transaction_id).toBe(input.records[i]!.tx.transactionId);
      expect(d.source).toEqual({ index: i });
      expect(d.decided_at_ms).toBeLessThanOrEqual(d.event_time_ms);
    });
    expect(Object.keys(JSON.parse(lines[0]!) as object)).toEqual([
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
      "source",
    ]);
  });

  it("the command, with the committed model, writes the same decisions twice apart from timings", async () => {
    const run = promisify(execFile);
    const file = join(dir, "tx.pbd");
    const replayCli = async (out: string) => {
      await run(process.execPath, [
        "bin/fraud-scorer.js",
        "replay",
        "--file",
        file,
        "--model-dir",
        committedModelDir(),
        "--rules-file",
        "rules/default.yaml",
        "--out",
        out,
      ]);
      return readFile(out);
    };
    const first = await replayCli(join(dir, "cli-a.ndjson"));
    const second = await replayCli(join(dir, "cli-b.ndjson"));
    expect(first.equals(second)).toBe(false); // the timings differ…
    expect(withoutTimings(second)).toEqual(withoutTimings(first)); // …and nothing else does
    expect(withoutTimings(first)).toHaveLength(input.records.length);
  });
});
