// `fraud-scorer produce` reads its options the project's way: flags over environment over
// defaults, validated once, every problem named.
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { addProduceOptions, parseProduceOptions } from "../../../src/cli/produceOptions.js";

const ok = (flags: Record<string, unknown>, env: Record<string, string> = {}) => {
  const parsed = parseProduceOptions(flags, env);
  if (!parsed.ok) throw new Error(parsed.problems.join("; "));
  return parsed.options;
};
const problems = (flags: Record<string, unknown>, env: Record<string, string> = {}) => {
  const parsed = parseProduceOptions(flags, env);
  return parsed.ok ? [] : parsed.problems;
};

describe("produce options", () => {
  it("fills defaults, and takes brokers and topic from the environment", () => {
    const o = ok({}, { KAFKA_BROKERS: "a:9092, b:9093", KAFKA_TRANSACTIONS_TOPIC: "tx-live" });
    expect(o).toMatchObject({
      sink: "kafka",
      topic: "tx-live",
      kafkaBrokers: ["a:9092", "b:9093"],
      ratePerSecond: 500,
      durationMs: 10_000,
      framing: "delimited",
      perRecord: 1,
      lingerMs: 5,
      seed: 42,
      progress: true,
      json: false,
    });
    expect(o.count).toBeUndefined();
    // No tick: the generator picks one for the rate.
    expect(o.tickMs).toBeUndefined();
  });

  it("takes a pacing tick from a flag or PRODUCE_TICK_MS, and refuses one that is not positive", () => {
    expect(ok({ sink: "discard", tickMs: "50" }).tickMs).toBe(50);
    expect(ok({ sink: "discard" }, { PRODUCE_TICK_MS: "2.5" }).tickMs).toBe(2.5);
    expect(problems({ sink: "discard", tickMs: "0" })).toEqual(["--tick-ms must be a positive number"]);
  });

  it("takes --no-progress on the command line (the chaos load generator passes it)", () => {
    const command = addProduceOptions(new Command().exitOverride());
    command.parse(["--sink", "discard", "--no-progress"], { from: "user" });
    expect(ok(command.opts()).progress).toBe(false);
  });

  it("lets a flag win over its environment variable", () => {
    const o = ok(
      { rate: "20000", perRecord: "16", kafkaBrokers: "flag:9092", duration: "2m" },
      { PRODUCE_RATE: "5", PRODUCE_PER_RECORD: "4", KAFKA_BROKERS: "env:9092" },
    );
    expect(o.ratePerSecond).toBe(20_000);
    expect(o.perRecord).toBe(16);
    expect(o.kafkaBrokers).toEqual(["flag:9092"]);
    expect(o.durationMs).toBe(120_000);
  });

  it("needs no brokers to discard, and takes a count instead of a duration", () => {
    const o = ok({ sink: "discard", count: "1000", partitions: "24", json: true });
    expect(o).toMatchObject({ sink: "discard", count: 1000, partitions: 24, json: true });
    expect(o.durationMs).toBeUndefined();
  });

  it("names every problem at once", () => {
    const found = problems({
      rate: "fast",
      count: "10",
      duration: "10s",
      framing: "confluent",
      perRecord: "16",
      labels: "l.csv",
    });
    expect(found).toEqual(
      expect.arrayContaining([expect.stringMatching(/--rate must be a positive number/)]),
    );
    const crossChecks = problems({
      count: "10",
      duration: "10s",
      framing: "confluent",
      perRecord: "16",
      labels: "l.csv",
    });
    expect(crossChecks).toEqual(
      expect.arrayContaining([
        "give --count or --duration, not both",
        expect.stringMatching(/no brokers/),
        expect.stringMatching(/confluent needs the registry/),
        expect.stringMatching(/--per-record above 1 needs --framing delimited/),
        "--labels only applies to --file",
      ]),
    );
  });

  it("refuses a packing of zero and an unknown sink", () => {
    expect(problems({ sink: "discard", perRecord: "0" })).toEqual([
      expect.stringMatching(/--per-record must be an integer/),
    ]);
    expect(problems({ sink: "void" })).toEqual([
      expect.stringMatching(/--sink must be one of kafka, discard/),
    ]);
  });
});
