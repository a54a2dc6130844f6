// The demo's report: latency percentiles from the HDR histogram, the chart, the decision mix
// and fraud caught; an offline run is labelled as such everywhere it is shown.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Action, FallbackCause } from "../../../src/codec/messages.js";
import { DecisionTally } from "../../../src/tools/demo/decisionTally.js";
import {
  DemoSetupError,
  newestCommittedModel,
  resolveDemoEnvironment,
} from "../../../src/tools/demo/demoEnvironment.js";
import {
  latencyChart,
  reportMarkdown,
  reportText,
  writeDemoReport,
  type DemoReport,
} from "../../../src/tools/demo/demoReport.js";
import { LatencyRecorder } from "../../../src/tools/demo/latencyRecorder.js";

describe("latency recorder", () => {
  it("gives percentiles overall and p99 per second, in milliseconds", () => {
    const r = new LatencyRecorder({ budgetMs: 200 });
    for (let i = 1; i <= 1000; i++) r.record(i * 1000, i <= 500 ? 0 : 1); // 1..1000 ms
    const s = r.summary();
    expect(s.count).toBe(1000);
    expect(s.p50Ms).toBeCloseTo(500, -1);
    expect(s.p99Ms).toBeCloseTo(990, -1);
    expect(s.maxMs).toBeCloseTo(1000, -1);
    expect(s.withinBudget).toBeCloseTo(0.2, 2);
    const perSecond = r.perSecond();
    expect(perSecond.map((p) => p.second)).toEqual([0, 1]);
    expect(perSecond[0]!.p99Ms).toBeCloseTo(495, -1);
    expect(r.p99OfSecond(1)).toBeCloseTo(995, -1);
    r.close();
  });
});

describe("decision tally", () => {
  it("counts the mix, fallbacks by cause, and fraud declined, reviewed or missed", () => {
    const t = new DecisionTally();
    t.add({ action: Action.ACTION_DECLINE }, true);
    t.add({ action: Action.ACTION_REVIEW }, true);
    t.add({ action: Action.ACTION_APPROVE }, true);
    t.add(
      { action: Action.ACTION_APPROVE, fallback: true, fallbackCause: FallbackCause.FALLBACK_CAUSE_TIMEOUT },
      false,
    );
    t.add({ action: Action.ACTION_REVIEW }, false);
    t.add({ action: Action.ACTION_APPROVE }, undefined);
    const s = t.summary();
    expect(s.actions).toMatchObject({ APPROVE: 3, REVIEW: 2, DECLINE: 1 });
    expect(s.fallbacks).toBe(1);
    expect(s.fallbackCauses).toEqual({ timeout: 1 });
    expect(s).toMatchObject({ fraudCaught: 2, fraudMissed: 1, falsePositiveRate: 0.5 });
    expect(s.labelled.unlabelled).toBe(1);
  });
});

describe("latency chart", () => {
  const points = [
    { second: 0, count: 10, p50Ms: 10, p99Ms: 150, maxMs: 160 },
    { second: 1, count: 10, p50Ms: 12, p99Ms: 180, maxMs: 190 },
  ];

  it("is an SVG with p99 and p50 points per second and the budget when it is in view", () => {
    const svg = latencyChart(points, "a <title>", 200);
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg.match(/<circle/g)).toHaveLength(4);
    expect(svg).toContain("budget 200 ms");
    expect(svg).toContain("a &lt;title&gt;");
  });

  it("leaves out a budget far above the data, which would flatten it", () => {
    expect(latencyChart(points, "t", 2_000)).not.toContain("budget");
  });
});

const report = (mode: "live" | "offline"): DemoReport => {
  const tally = new DecisionTally();
  tally.add({ action: Action.ACTION_DECLINE }, true);
  return {
    mode,
    ...(mode === "offline" ? { offlineReason: "no Kafka could be had: no Java." } : {}),
    startedAt: "2025-01-01T00:00:00.000Z",
    model: "fraud-lstm 1.0.0",
    rules: "default-2025.1",
    traffic: {
      source: "simulator",
      ratePerSecond: 500,
      durationSeconds: 30,
      warmupSeconds: 3,
      planned: 15000,
      sent: 15000,
    },
    throughput: { decided: 15000, missing: 0, decisionsPerSecond: 499 },
    latency: { count: 15000, p50Ms: 12, p95Ms: 30, p99Ms: 45, p999Ms: 80, maxMs: 120, withinBudget: 1 },
    latencyPerSecond: [{ second: 0, count: 500, p50Ms: 12, p99Ms: 45, maxMs: 60 }],
    latencyMeaning: mode === "live" ? "end to end" : "OFFLINE, scoring only",
    budgetMs: 200,
    tally: tally.summary(),
    notes: [],
  };
};

describe("demo report", () => {
  it("has the throughput, the percentiles, the chart, the decision mix and fraud caught", () => {
    const md = reportMarkdown(report("live"));
    expect(md).toContain("| 12.0 ms | 30.0 ms | 45.0 ms | 80.0 ms | 120 ms | 100.00 % |");
    expect(md).toContain("![p99 latency per second](latency-p99.svg)");
    expect(md).toContain("| DECLINE | 1 | 100.00 % |");
    expect(md).toContain("Fraud caught (declined or sent to review): 1 of 1");
    expect(md).not.toContain("OFFLINE");
  });

  it("labels an offline run in the title, the text and the chart, with the reason", async () => {
    const r = report("offline");
    expect(reportMarkdown(r)).toMatch(/^# fraud-scorer demo — OFFLINE \(no Kafka\)/);
    expect(reportMarkdown(r)).toContain("no Kafka could be had: no Java.");
    expect(reportText(r)).toContain("OFFLINE");
    const dir = await mkdtemp(join(tmpdir(), "demo-report-"));
    try {
      const written = await writeDemoReport(dir, r);
      expect(await readFile(written.chart, "utf8")).toContain("OFFLINE");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("demo environment", () => {
  it("uses endpoints from the environment when all three are given", async () => {
    const env = await resolveDemoEnvironment({
      env: {
        KAFKA_BROKERS: "k1:9092,k2:9092",
        SCHEMA_REGISTRY_URL: "http://r:8081",
        REDIS_URL: "redis://x:6379",
      },
      root: ".",
      log: () => {},
    });
    expect(env).toEqual({
      mode: "live",
      from: "the environment",
      endpoints: {
        kafkaBrokers: ["k1:9092", "k2:9092"],
        schemaRegistryUrl: "http://r:8081",
        redisUrl: "redis://x:6379",
      },
    });
  });

  it("refuses some endpoints without the others", async () => {
    await expect(
      resolveDemoEnvironment({ env: { KAFKA_BROKERS: "k:9092" }, root: ".", log: () => {} }),
    ).rejects.toThrow(DemoSetupError);
  });

  it("goes offline, saying why, when the local stack cannot start", async () => {
    const root = await mkdtemp(join(tmpdir(), "no-stack-"));
    try {
      const env = await resolveDemoEnvironment({ env: {}, root, log: () => {} });
      expect(env.mode).toBe("offline");
      if (env.mode === "offline") expect(env.reason).toContain("no Kafka could be had");
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("finds the newest committed model", () => {
    expect(newestCommittedModel("models")).toMatch(/^models\/[^/]+\/[^/]+$/);
    expect(() => newestCommittedModel("no-such-models")).toThrow(/no committed model/);
  });
});
