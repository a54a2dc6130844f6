// Drift: the scorer counts what the model sees into the bins its artifact's manifest carries
// and reports PSI per feature and for the score. Simulated traffic like the training data's
// keeps PSI low; the same traffic with every amount tripled (a price-level shift) moves the
// amount features' PSI past the "significant" mark and leaves features the shift does not touch
// where they were — in the Prometheus gauges and in /drift.
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import { DriftMonitor, type DriftSnapshot } from "../../src/model/driftMonitor.js";
import { FP32_MODEL_FILE } from "../../src/model/manifest.js";
import { OnnxStepSession } from "../../src/model/onnxStepSession.js";
import { verifyModelArtifact } from "../../src/model/verifyModelArtifact.js";
import { DriftMetrics } from "../../src/ops/driftMetrics.js";
import { startHealthServer, type HealthServer } from "../../src/ops/healthServer.js";
import { DEFAULT_RULES_PATH, loadRuleSet } from "../../src/rules/ruleSet.js";
import type { LabelledDataset } from "../../pipelines/dataset/labelledDataset.js";
import { scoreWithOnnx } from "../../pipelines/evaluate/scoreWithOnnx.js";
import { simulatePayments } from "../../src/tools/simulate/simulatePayments.js";
import { buildCardSequences } from "../../pipelines/train/cardSequences.js";
import { committedModelDir } from "../support/committedModel.js";

const NOW = Date.UTC(2026, 0, 1);
const SIGNIFICANT = 0.25;
/** Skipped when counting: the first weeks of a fresh simulation have cards without history. */
const BURN_IN_DAYS = 21;
const DAYS = 30;

let registry: Registry;
let metrics: DriftMetrics;
let health: HealthServer;
let baseline: DriftSnapshot;
let shifted: DriftSnapshot;
let shiftedMetricsText: string;
let shiftedDriftJson: DriftSnapshot;

/** What the scorer would have counted for this traffic: every transaction after the burn-in. */
async function observeSimulation(amountScale: number): Promise<DriftMonitor> {
  const dir = committedModelDir();
  const manifest = await verifyModelArtifact(dir, {
    trustedKeysDir: "models/trusted-keys",
    expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
  });
  expect(manifest.distributions, `${dir} carries training distributions`).toBeDefined();
  const sim = simulatePayments({ seed: 99, cards: 400, days: DAYS, amountScale });
  const data: LabelledDataset = {
    transactions: sim.map((s) => s.tx),
    labels: Uint8Array.from(sim, (s) => (s.isFraud ? 1 : 0)),
    split: new Uint8Array(sim.length),
    unlabelled: 0,
    source: "simulation",
  };
  // The model's own width: a model of an earlier feature schema is fed its prefix, as serving does.
  const seqs = buildCardSequences(
    data,
    await loadRuleSet(DEFAULT_RULES_PATH),
    undefined,
    manifest.featureCount,
  );
  const session = await OnnxStepSession.open(`${dir}/${FP32_MODEL_FILE}`, {
    featureCount: manifest.featureCount,
    hiddenSize: manifest.hiddenSize,
  });
  const scores = await scoreWithOnnx(session, seqs);
  await session.close();
  // Rows are grouped by card; the card's k-th row is its k-th transaction in time.
  const times = new Float64Array(seqs.labels.length);
  const byCard = new Map<string, number[]>();
  for (const s of sim)
    byCard.set(s.tx.cardId!, [...(byCard.get(s.tx.cardId!) ?? []), Number(s.tx.eventTimeMs)]);
  seqs.cardIds.forEach((card, k) => byCard.get(card)!.forEach((t, j) => (times[seqs.start[k]! + j] = t)));
  const from = Number(sim[0]!.tx.eventTimeMs) + BURN_IN_DAYS * 86_400_000;

  const monitor = new DriftMonitor(manifest.modelVersion, manifest.featureNames, manifest.distributions!, {
    now: () => NOW,
  });
  const F = manifest.featureCount;
  const x = new Float32Array(64 * F);
  const score = new Float32Array(64);
  let n = 0;
  for (let r = 0; r < times.length; r++) {
    if (times[r]! < from) continue;
    x.set(seqs.features.subarray(r * F, (r + 1) * F), n * F);
    score[n++] = scores[r]!;
    if (n === 64) {
      monitor.observe(x, score, n);
      n = 0;
    }
  }
  monitor.observe(x, score, n);
  return monitor;
}

beforeAll(async () => {
  baseline = (await observeSimulation(1)).snapshot();
  const monitor = await observeSimulation(3);
  shifted = monitor.snapshot();
  registry = new Registry();
  metrics = new DriftMetrics(registry, monitor, { refreshMs: 60_000 });
  health = await startHealthServer({
    port: 0,
    host: "127.0.0.1",
    metrics: { contentType: registry.contentType, metricsText: () => registry.metrics() },
    readiness: () => ({ ready: true, reasons: [], firstMetMs: {} }),
    drift: () => metrics.latest(),
  });
  shiftedMetricsText = await (await fetch(`http://127.0.0.1:${health.port}/metrics`)).text();
  shiftedDriftJson = (await (await fetch(`http://127.0.0.1:${health.port}/drift`)).json()) as DriftSnapshot;
}, 120_000);

afterAll(async () => {
  metrics?.stop();
  await health?.close();
});

describe("drift against the training distribution", () => {
  it("stays low for traffic like the training data's", () => {
    const show = (d: DriftSnapshot) =>
      `amount_eur ${d.features.amount_eur?.toFixed(3)}, amount_eur_24h ${d.features.amount_eur_24h?.toFixed(3)}, hour_sin ${d.features.hour_sin?.toFixed(3)}, score ${d.score?.toFixed(3)} over ${d.transactions}`;
    console.log(`PSI baseline: ${show(baseline)}\nPSI amounts ×3: ${show(shifted)}`);
    expect(baseline.transactions).toBeGreaterThan(2000);
    expect(baseline.features.amount_eur).toBeLessThan(0.1);
    expect(baseline.score).toBeLessThan(0.1);
  });

  it("moves the amount features past the significant mark when every amount triples", () => {
    expect(shifted.features.amount_eur).toBeGreaterThan(SIGNIFICANT);
    expect(shifted.features.amount_eur_24h).toBeGreaterThan(SIGNIFICANT);
    expect(shifted.features.amount_eur! - baseline.features.amount_eur!).toBeGreaterThan(0.2);
  });

  it("leaves the features the shift does not touch where they were", () => {
    for (const name of ["hour_sin", "dow_cos", "channel_ecommerce", "mcc_everyday", "foreign_merchant"]) {
      expect(Math.abs(shifted.features[name]! - baseline.features[name]!), name).toBeLessThan(0.01);
    }
  });

  it("exports the PSI as Prometheus gauges and as /drift JSON", () => {
    const gauge = new RegExp(`fraud_feature_psi\\{feature="amount_eur"\\} ([0-9.e+-]+)`).exec(
      shiftedMetricsText,
    );
    expect(Number(gauge?.[1])).toBeCloseTo(shifted.features.amount_eur!, 6);
    expect(shiftedMetricsText).toMatch(/fraud_score_psi [0-9.]/);
    expect(shiftedMetricsText).toMatch(new RegExp(`fraud_drift_window_transactions ${shifted.transactions}`));
    expect(shiftedDriftJson.features.amount_eur).toBeCloseTo(shifted.features.amount_eur!, 9);
    expect(shiftedDriftJson.transactions).toBe(shifted.transactions);
  });
});
