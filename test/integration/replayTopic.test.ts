// `fraud-scorer replay` over a range of a real topic: offsets found by time or given, the same
// decisions on every run, and a diff against decisions recorded in a decisions topic.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { RecordSink } from "../../src/stream/kafkaPort.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeDecisionRecord } from "../../src/codec/decisionRecord.js";
import { Action } from "../../src/codec/messages.js";
import { decisionFromJson, type DecisionJson } from "../../src/decisions/decisionJson.js";
import { committedModelDir } from "../support/committedModel.js";
import { testEndpoints } from "./endpoints.js";
import { createTestTopics, testKafka, type TestTopics } from "./support/kafkaTestTopics.js";
import { delimitedRecord, makeTransactions } from "./support/transactionTraffic.js";

const run = promisify(execFile);
const endpoints = testEndpoints();
const T0 = Date.UTC(2025, 5, 1, 12, 0, 0);
const COUNT = 30;

let producer: RecordSink;
let topics: TestTopics;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "replay-topic-"));
  // Two partitions, everything on partition 0 with record timestamps one second apart, so
  // offsets and times name the same records.
  topics = await createTestTopics(endpoints.kafkaBrokers, "replay", 2);
  producer = testKafka(endpoints.kafkaBrokers).sink();
  const txs = makeTransactions(COUNT, { cards: 5, startMs: T0, prefix: "rp" });
  await producer.publish(
    txs.map((tx, i) => ({
      topic: topics.transactions,
      key: tx.cardId,
      value: delimitedRecord(tx),
      partition: 0,
      timestampMs: T0 + i * 1000,
    })),
  );
});

afterAll(async () => {
  await producer?.close();
  await rm(dir, { recursive: true, force: true });
});

async function replay(...args: string[]) {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [
        "bin/fraud-scorer.js",
        "replay",
        "--topic",
        topics.transactions,
        "--kafka-brokers",
        endpoints.kafkaBrokers,
        "--model-dir",
        committedModelDir(),
        "--rules-file",
        "rules/default.yaml",
        "--no-progress",
        ...args,
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const parse = (ndjson: string) =>
  ndjson
    .trimEnd()
    .split("\n")
    .map(
      (l) => JSON.parse(l) as DecisionJson & { source: { partition: number; offset: number; frame: number } },
    );

describe("replay of a topic range", () => {
  it("replays exactly the records in [from-offset, to-offset), in order, the same way twice", async () => {
    const first = await replay(
      "--partition",
      "0",
      "--from-offset",
      "10",
      "--to-offset",
      "20",
      "--no-timings",
    );
    expect(first.code, first.stderr).toBe(0);
    const decisions = parse(first.stdout);
    expect(decisions.map((d) => d.transaction_id)).toEqual(
      Array.from({ length: 10 }, (_, i) => `rp-${10 + i}`),
    );
    expect(decisions.map((d) => d.source)).toEqual(
      Array.from({ length: 10 }, (_, i) => ({
        partition: 0,
        offset: 10 + i,
        frame: 0,
        timestamp_ms: T0 + (10 + i) * 1000,
      })),
    );
    expect(decisions.every((d) => !d.fallback)).toBe(true);
    expect(first.stderr).toContain("replayed 10 transactions");
    const second = await replay(
      "--partition",
      "0",
      "--from-offset",
      "10",
      "--to-offset",
      "20",
      "--no-timings",
    );
    expect(second.stdout).toBe(first.stdout);
  });

  it("finds the offsets from two timestamps", async () => {
    const { code, stdout, stderr } = await replay(
      "--from-time",
      new Date(T0 + 5_000).toISOString(),
      "--to-time",
      String(T0 + 8_000),
    );
    expect(code, stderr).toBe(0);
    expect(parse(stdout).map((d) => d.transaction_id)).toEqual(["rp-5", "rp-6", "rp-7"]);
  });

  it("refuses offsets on a topic of several partitions unless one is chosen", async () => {
    const { code, stderr } = await replay("--from-offset", "0", "--to-offset", "5");
    expect(code).toBe(2);
    expect(stderr).toContain("offsets are per partition");
    expect(stderr).toContain("--partition");
  });

  it("refuses offsets the partition does not hold, naming the offsets it does", async () => {
    const { code, stdout, stderr } = await replay(
      "--partition",
      "0",
      "--from-offset",
      "25",
      "--to-offset",
      "40",
    );
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain(`--to-offset 40 is outside partition 0 of "${topics.transactions}"`);
    expect(stderr).toContain(`[0, ${COUNT})`);
  });

  it("refuses a topic that does not exist", async () => {
    const { code, stderr } = await run(process.execPath, [
      "bin/fraud-scorer.js",
      "replay",
      "--topic",
      `${topics.transactions}-missing`,
      "--kafka-brokers",
      endpoints.kafkaBrokers,
      "--model-dir",
      committedModelDir(),
      "--rules-file",
      "rules/default.yaml",
    ]).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(code).toBe(2);
    expect(stderr).toContain("does not exist");
  });

  it("reports how the replay differs from the decisions recorded in the decisions topic", async () => {
    const baseline = parse((await replay("--partition", "0", "--to-offset", "12")).stdout);
    expect(baseline).toHaveLength(12);
    // What "production" recorded: the same decisions, except two that were declined in fallback.
    const recorded = baseline.map((d, i) =>
      i === 3 || i === 7
        ? { ...decisionFromJson(d), action: Action.ACTION_DECLINE, fallback: true, fallbackCause: 2 }
        : decisionFromJson(d),
    );
    await producer.publish(
      recorded.map((d) => ({
        topic: topics.decisions,
        key: d.transactionId ?? "",
        value: encodeDecisionRecord(d, 1),
      })),
    );
    const diffFile = join(dir, "diff.json");
    const { code, stderr } = await replay(
      "--partition",
      "0",
      "--to-offset",
      "12",
      "--compare-topic",
      topics.decisions,
      "--diff-out",
      diffFile,
      "--out",
      join(dir, "out.ndjson"),
    );
    expect(code, stderr).toBe(0);
    expect(stderr).toContain("12 compared, 2 actions changed");
    const diff = JSON.parse(await readFile(diffFile, "utf8")) as {
      changed: number;
      transitions: Record<string, number>;
      byReason: Record<string, number>;
    };
    expect(diff.changed).toBe(2);
    expect(Object.keys(diff.transitions)).toEqual([expect.stringMatching(/^DECLINE → /)]);
    expect(diff.byReason).toHaveProperty("decided by: rules fallback (timeout) → model", 2);
  });
});
