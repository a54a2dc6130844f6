// The drift window slides: counts leave it when their time slot does, PSI is withheld until
// enough transactions are in it, and identical distributions read as no drift.
import { describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { DriftMonitor } from "../../src/model/driftMonitor.js";
import { DriftMetrics } from "../../src/ops/driftMetrics.js";
import { binOf, populationStabilityIndex } from "../../src/model/populationStability.js";

const distributions = {
  source: "test",
  transactions: 100,
  features: [{ edges: [0], proportions: [0.5, 0.5] }],
  score: { edges: [0.5], proportions: [0.8, 0.2] },
};

describe("population stability index", () => {
  it("is zero for the training distribution itself and grows with the shift", () => {
    expect(populationStabilityIndex([0.5, 0.5], [50, 50], 100)).toBe(0);
    const small = populationStabilityIndex([0.5, 0.5], [55, 45], 100);
    const large = populationStabilityIndex([0.5, 0.5], [90, 10], 100);
    expect(small).toBeGreaterThan(0);
    expect(large).toBeGreaterThan(small);
  });

  it("puts a value equal to an edge in the bin below it and NaN in the last", () => {
    expect([binOf([0, 1], -1), binOf([0, 1], 0), binOf([0, 1], 0.5), binOf([0, 1], 2)]).toEqual([0, 0, 1, 2]);
    expect(binOf([0, 1], NaN)).toBe(2);
  });
});

describe("drift monitor window", () => {
  it("forgets counts once their slot leaves the window and withholds PSI below the minimum", () => {
    let now = 1_000_000;
    const monitor = new DriftMonitor("v", ["f"], distributions, {
      windowMs: 60_000,
      slots: 6,
      minTransactions: 4,
      now: () => now,
    });
    monitor.observe(Float32Array.of(1, 1, 1), Float32Array.of(0.9, 0.9, 0.9), 3);
    expect(monitor.snapshot()).toMatchObject({ transactions: 3, score: null, features: { f: null } });
    now += 10_000;
    monitor.observe(Float32Array.of(-1, 1), Float32Array.of(0.1, 0.1), 2);
    const full = monitor.snapshot();
    expect(full.transactions).toBe(5);
    expect(full.features.f).toBeCloseTo(populationStabilityIndex([0.5, 0.5], [1, 4], 5), 12);
    now += 55_000; // the first slot is now older than the window
    expect(monitor.snapshot().transactions).toBe(2);
    now += 60_000;
    expect(monitor.snapshot().transactions).toBe(0);
  });
});

describe("drift follows the model that scores", () => {
  it("takes a promoted model's distributions with an empty window, and drops the previous model's series", async () => {
    const registry = new Registry();
    const old = new DriftMonitor("1.0", ["f"], distributions, { minTransactions: 1 });
    old.observe(Float32Array.of(1, 1, 1, 1), Float32Array.of(0.9, 0.9, 0.9, 0.9), 4);
    const metrics = new DriftMetrics(registry, old, { refreshMs: 60_000 });
    expect(metrics.latest()).toMatchObject({ modelVersion: "1.0", transactions: 4 });
    expect(await registry.getSingleMetricAsString("fraud_feature_psi")).toContain('feature="f"');

    const promoted = new DriftMonitor(
      "1.1",
      ["g"],
      { ...distributions, features: [{ edges: [0], proportions: [0.5, 0.5] }] },
      { minTransactions: 1 },
    );
    expect(metrics.follow(promoted)).toMatchObject({ modelVersion: "1.1", transactions: 0 });
    const text = await registry.getSingleMetricAsString("fraud_feature_psi");
    expect(text).not.toContain('feature="f"');
    expect(await registry.getSingleMetricAsString("fraud_drift_window_transactions")).toMatch(/ 0$/m);

    // A model whose manifest carries no distributions: nothing monitored, no PSI series left.
    expect(metrics.follow(undefined)).toBeUndefined();
    expect(metrics.latest()).toBeUndefined();
    expect(await registry.getSingleMetricAsString("fraud_feature_psi")).not.toContain("feature=");
    metrics.stop();
  });
});
