// Without Kafka the demo still scores: simulated transactions through replay's engine with the
// committed model, reported as an offline run.
import pino from "pino";
import { describe, expect, it } from "vitest";
import { runOfflineDemo } from "../../../src/tools/demo/offlineDemo.js";
import { committedModelDir } from "../../support/committedModel.js";

describe("offline demo", () => {
  it("scores simulated traffic with the committed model and the rules, and reports it as offline", async () => {
    const report = await runOfflineDemo({
      reason: "no Kafka could be had (test)",
      modelDir: committedModelDir(),
      rulesFile: "rules/default.yaml",
      transactions: 3000,
      seed: 7,
      budgetMs: 200,
      logger: pino({ level: "silent" }),
      say: () => {},
    });
    expect(report.mode).toBe("offline");
    expect(report.offlineReason).toBe("no Kafka could be had (test)");
    expect(report.throughput).toMatchObject({ decided: 3000, missing: 0 });
    expect(report.tally.fallbacks).toBe(0);
    expect(report.tally.actions.APPROVE).toBeGreaterThan(0);
    expect(report.latency.count).toBe(3000);
    expect(report.latencyMeaning).toContain("OFFLINE");
  });
});
