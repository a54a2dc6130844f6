import { describe, expect, it } from "vitest";
import { parseDecisionsTailOptions } from "../../../src/cli/decisionsOptions.js";

const terminal = { isTTY: true };

describe("decisions tail options", () => {
  it("takes brokers and topic from the environment when no flag gives them", () => {
    const parsed = parseDecisionsTailOptions(
      {},
      { KAFKA_BROKERS: "a:9092, b:9092", KAFKA_DECISIONS_TOPIC: "dec-1" },
      terminal,
    );
    expect(parsed).toEqual({
      ok: true,
      options: {
        topic: "dec-1",
        kafkaBrokers: ["a:9092", "b:9092"],
        fromBeginning: false,
        readCommitted: false,
        json: false,
        colour: true,
      },
    });
  });

  it("lets a flag win over its environment variable", () => {
    const parsed = parseDecisionsTailOptions(
      { topic: "mine", kafkaBrokers: "c:1" },
      { KAFKA_BROKERS: "a:9092", KAFKA_DECISIONS_TOPIC: "theirs" },
      terminal,
    );
    expect(parsed).toMatchObject({ ok: true, options: { topic: "mine", kafkaBrokers: ["c:1"] } });
  });

  it("defaults the topic to decisions and parses actions, fallback and limit", () => {
    const parsed = parseDecisionsTailOptions(
      { kafkaBrokers: "a:1", action: "decline,Review", fallback: false, limit: "5" },
      {},
      terminal,
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.options.topic).toBe("decisions");
    expect([...parsed.options.actions!].sort()).toEqual(["DECLINE", "REVIEW"]);
    expect(parsed.options.fallback).toBe(false);
    expect(parsed.options.limit).toBe(5);
  });

  it("does not colour when NO_COLOR is set, unless --colour says so", () => {
    const env = { KAFKA_BROKERS: "a:1", NO_COLOR: "1" };
    expect(parseDecisionsTailOptions({}, env, terminal)).toMatchObject({ options: { colour: false } });
    expect(parseDecisionsTailOptions({ colour: true }, env, terminal)).toMatchObject({
      options: { colour: true },
    });
  });

  it("reports every problem at once", () => {
    const parsed = parseDecisionsTailOptions({ action: "approve,maybe", limit: "0" }, {}, terminal);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems).toEqual(
      expect.arrayContaining([
        "no brokers: give --kafka-brokers or set KAFKA_BROKERS",
        expect.stringContaining('--action "approve,maybe"'),
        "--limit must be an integer from 1",
      ]),
    );
  });
});
