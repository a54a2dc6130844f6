import { Command } from "commander";
import { describe, expect, it } from "vitest";
import {
  addCommandOptions,
  commandOptionValues,
  type CommandOption,
} from "../../../src/ops/commandOptions.js";

const ROWS: readonly CommandOption[] = [
  { flag: "kafka-brokers", flagValue: "list", env: "KAFKA_BROKERS", help: "brokers" },
  { key: "ratePerSecond", flag: "rate", flagValue: "tx/s", env: "RATE", fallback: "500", help: "rate" },
  { flag: "no-progress", help: "no progress display" },
];

const parsedFlags = (...argv: string[]) =>
  addCommandOptions(new Command().exitOverride(), ROWS).parse(argv, { from: "user" }).opts();

describe("command options described once as rows", () => {
  it("takes the flag, else the environment variable, else the fallback", () => {
    const env = { KAFKA_BROKERS: "a:1", RATE: "80" };
    expect(commandOptionValues(ROWS, parsedFlags("--rate", "90"), env)).toEqual({
      kafkaBrokers: "a:1",
      ratePerSecond: "90",
      progress: true,
    });
    expect(commandOptionValues(ROWS, parsedFlags(), {})).toEqual({ ratePerSecond: "500", progress: true });
  });

  it("counts a blank value as not given", () => {
    expect(commandOptionValues(ROWS, parsedFlags("--rate", " "), { RATE: "" })).toMatchObject({
      ratePerSecond: "500",
    });
  });

  it("reads a switch that turns something off under the name it turns off", () => {
    expect(commandOptionValues(ROWS, parsedFlags("--no-progress"), {})).toMatchObject({ progress: false });
  });

  it("shows the fallback and the environment variable in the help", () => {
    const help = addCommandOptions(new Command(), ROWS).helpInformation();
    expect(help).toMatch(/--rate <tx\/s>\s+rate \(default: 500\) \[env RATE\]/);
  });
});
