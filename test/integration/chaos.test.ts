// The fault suite's short subset: Redis killed, Redis stopped and the malformed corpus, at a small
// scale, through the same code as `npm run chaos` (chaos/suite.ts). Latency targets are measured
// by the full suite, not asserted here; what must hold at any size is asserted.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { ReliabilityRow } from "../../chaos/reliabilityReport.js";
import { malformedScenario } from "../../chaos/scenarios/malformed.js";
import { redisFrozenScenario, redisOutageScenario } from "../../chaos/scenarios/redis.js";
import { runScenarios } from "../../chaos/suite.js";
import { testEndpoints } from "./endpoints.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const endpoints = testEndpoints();

const runSmall = async (scenario: typeof redisOutageScenario): Promise<ReliabilityRow> => {
  const [row] = await runScenarios({
    root,
    endpoints: {
      kafkaBrokers: endpoints.kafkaBrokers,
      schemaRegistryUrl: endpoints.schemaRegistryUrl,
      redisUrl: endpoints.redisUrl,
    },
    scenarios: [scenario],
    scale: 0.02,
    logDir: mkdtempSync(join(tmpdir(), "chaos-test-")),
    log: () => {},
  });
  expect(row?.error, row?.error).toBeUndefined();
  return row!;
};

const target = (row: ReliabilityRow, name: string) => row.targets.find((t) => t.target.startsWith(name));

describe("the fault suite, small", () => {
  it("loses no transaction while Redis is killed for 10 s, and logs no secret or card id", async () => {
    const row = await runSmall(redisOutageScenario);

    expect(row.transactions).toBeGreaterThan(10_000);
    expect(row.lost).toBe(0);
    expect(row.fallbackShare).toBeGreaterThan(0);
    // The model came back once Redis answered (how soon is the scenario's goal, not asserted here).
    expect(target(row, "the model deciding again")?.measured).toMatch(/^first model decision \d+ ms/);
    expect(target(row, "no secret")?.measured).toMatch(/^0 lines/);
    expect(target(row, "no raw card id")?.measured).toMatch(/^0 lines/);
  }, 300_000);

  it("loses no transaction and no card-state update while Redis is stopped for 10 s", async () => {
    const row = await runSmall(redisFrozenScenario);

    expect(row.transactions).toBeGreaterThan(10_000);
    expect(row.lost).toBe(0);
    expect(row.fallbackShare).toBeGreaterThan(0);
    // The state survives a stop: the work the lane held through it is applied, none dropped.
    expect(target(row, "each card's state applied exactly once")).toMatchObject({ met: true });
    expect(target(row, "the model deciding again")?.measured).toMatch(/^first model decision \d+ ms/);
  }, 300_000);

  it("dead-letters every malformed record with a reason, decides all good traffic and does not crash", async () => {
    const row = await runSmall(malformedScenario);

    expect(target(row, "100 % of malformed")).toMatchObject({ met: true });
    expect(target(row, "every DLQ record has a reason")).toMatchObject({ met: true });
    expect(target(row, "0 scorer crashes")).toMatchObject({ met: true });
    expect(row.lost).toBe(0);
    expect(target(row, "each card's state applied exactly once")).toMatchObject({ met: true });
  }, 300_000);
});
