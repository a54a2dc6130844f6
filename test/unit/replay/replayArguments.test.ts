// Replay refuses what it cannot do faithfully, with a message that says what to change and a
// non-zero exit.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseReplayOptions, parseTimeArgument } from "../../../src/replay/replayOptions.js";

const run = promisify(execFile);
const pinned = { modelDir: "models/m/1", rulesFile: "rules/default.yaml" };

const problemsOf = (flags: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => {
  const parsed = parseReplayOptions(flags, env);
  return parsed.ok ? [] : parsed.problems;
};

describe("replay arguments", () => {
  it("accepts a file with a pinned model and rule set, writing NDJSON to stdout", () => {
    const parsed = parseReplayOptions({ file: "tx.pbd", ...pinned }, {});
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.options.source).toEqual({ kind: "file", path: "tx.pbd" });
    expect(parsed.options.out).toBe("-");
    expect(parsed.options.format).toBe("ndjson");
    expect(parsed.options.settings.batchSize).toBe(256); // serve's largest batch (scoring.maxBatch)
  });

  it("requires something to replay, and only one thing", () => {
    expect(problemsOf({ ...pinned })).toEqual([expect.stringContaining("nothing to replay")]);
    expect(problemsOf({ file: "a.pbd", topic: "t", ...pinned }, { KAFKA_BROKERS: "h:9092" })).toContainEqual(
      expect.stringContaining("either --file or --topic"),
    );
  });

  it("requires the model and the rule set to be pinned", () => {
    const problems = problemsOf({ file: "a.pbd" });
    expect(problems).toContainEqual(expect.stringContaining("--model-dir"));
    expect(problems).toContainEqual(expect.stringContaining("--rules-file"));
  });

  it("refuses mixed, empty or malformed ranges", () => {
    const env = { KAFKA_BROKERS: "127.0.0.1:9092" };
    expect(
      problemsOf({ topic: "t", fromTime: "2025-01-01", fromOffset: "3", ...pinned }, env),
    ).toContainEqual(expect.stringContaining("not both"));
    expect(problemsOf({ topic: "t", fromOffset: "10", toOffset: "10", ...pinned }, env)).toContainEqual(
      expect.stringContaining("range is empty"),
    );
    expect(problemsOf({ topic: "t", fromOffset: "-1", ...pinned }, env)).toContainEqual(
      expect.stringContaining("non-negative integer"),
    );
    expect(problemsOf({ topic: "t", toTime: "yesterday", ...pinned }, env)).toContainEqual(
      expect.stringContaining("neither an ISO-8601 time nor epoch milliseconds"),
    );
    expect(problemsOf({ file: "a.pbd", fromOffset: "1", ...pinned })).toContainEqual(
      expect.stringContaining("only apply to --topic"),
    );
  });

  it("reads a topic range by offset, with brokers from the environment when the flag is blank", () => {
    const parsed = parseReplayOptions(
      {
        topic: "t",
        fromOffset: "5",
        toOffset: "9",
        partition: "0, 2",
        kafkaBrokers: " ",
        compareTopic: "decisions",
        compareSince: "2025-01-06T00:00:00Z",
        ...pinned,
      },
      { KAFKA_BROKERS: "a:9092, b:9092" },
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.options.source).toEqual({
      kind: "topic",
      topic: "t",
      partitions: [0, 2],
      from: { offset: 5 },
      to: { offset: 9 },
    });
    expect(parsed.options.kafkaBrokers).toEqual(["a:9092", "b:9092"]);
    expect(parsed.options.compare).toEqual({
      kind: "topic",
      topic: "decisions",
      sinceMs: Date.UTC(2025, 0, 6),
    });
    expect(parsed.options.format).toBe("ndjson");
  });

  it("needs brokers to read a topic", () => {
    expect(problemsOf({ topic: "t", ...pinned })).toContainEqual(expect.stringContaining("KAFKA_BROKERS"));
  });

  it("reads epoch milliseconds and ISO times, and catches seconds given for milliseconds", () => {
    expect(parseTimeArgument("1736121600000")).toBe(1736121600000);
    expect(parseTimeArgument("2025-01-06T00:00:00Z")).toBe(Date.UTC(2025, 0, 6));
    expect(parseTimeArgument("1736121600")).toEqual(expect.stringContaining("looks like seconds"));
  });

  it("refuses thresholds in the wrong order and unknown formats", () => {
    const problems = problemsOf({
      file: "a.pbd",
      ...pinned,
      reviewThreshold: "0.9",
      declineThreshold: "0.5",
      format: "csv",
    });
    expect(problems).toContainEqual(expect.stringContaining("must be below the decline threshold"));
    expect(problems).toContainEqual(expect.stringContaining('--format "csv"'));
  });
});

describe("fraud-scorer replay on the command line", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "replay-cli-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const replay = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(process.execPath, ["bin/fraud-scorer.js", "replay", ...args], {
        env: { ...process.env, KAFKA_BROKERS: "" },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  it("exits 2 with every problem listed when the arguments are wrong", async () => {
    const { code, stderr, stdout } = await replay("--from-offset", "5");
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain("nothing to replay");
    expect(stderr).toContain("--model-dir");
    expect(stderr).toContain("see fraud-scorer replay --help");
  });

  it("exits 2 naming the file and the byte when the input is not a transaction file", async () => {
    const garbage = join(dir, "garbage.pbd");
    await writeFile(garbage, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1, 2, 3]));
    const { code, stderr } = await replay(
      "--file",
      garbage,
      "--model-dir",
      "models/none/0",
      "--rules-file",
      "rules/default.yaml",
    );
    expect(code).toBe(2);
    expect(stderr).toContain(`${garbage} is not a delimited Protobuf transaction file`);
    expect(stderr).toContain("byte 0");
  });

  it("exits 2 when the input file does not exist", async () => {
    const { code, stderr } = await replay(
      "--file",
      join(dir, "missing.pbd"),
      "--model-dir",
      "m",
      "--rules-file",
      "rules/default.yaml",
    );
    expect(code).toBe(2);
    expect(stderr).toContain("cannot read");
  });
});
