import { describe, expect, it } from "vitest";
import { Action, FallbackCause } from "../../../src/codec/messages.js";
import { ScorerMetrics } from "../../../src/ops/metrics.js";

describe("ScorerMetrics", () => {
  it("exposes every series after observations", async () => {
    const metrics = new ScorerMetrics();
    metrics.observeStage("model", 0.004);
    metrics.observeStage("produce", 0.002);
    metrics.countDeadLetter("malformed_message");
    metrics.setBreakerState("model", "open");
    metrics.setBreakerState("state_read", 1);
    metrics.countCardState("tampered", 2);
    metrics.setConsumerLag(3, 120);
    metrics.observeBatchSize(17);
    metrics.setModelInfo("1.0.0", "card-features-1", "cpu");
    const text = await metrics.metricsText();

    expect(text).toContain('fraud_stage_duration_seconds_bucket{le="0.005",stage="model"} 1');
    expect(text).toContain('fraud_stage_duration_seconds_count{stage="produce"} 1');
    expect(text).toContain('fraud_dlq_records_total{reason="malformed_message"} 1');
    expect(text).toContain('fraud_breaker_state{breaker="model"} 2');
    expect(text).toContain('fraud_breaker_state{breaker="state_read"} 1');
    expect(text).toContain('fraud_card_state_total{outcome="tampered"} 2');
    expect(text).toContain('fraud_card_state_total{outcome="hit"} 0');
    expect(text).toContain('fraud_consumer_lag{partition="3"} 120');
    expect(text).toContain('fraud_batch_size_bucket{le="32"} 1');
    expect(text).toContain(
      'fraud_model_info{model_version="1.0.0",feature_schema_version="card-features-1",provider="cpu"} 1',
    );
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(metrics.contentType).toMatch(/^text\/plain/);
  });

  it("counts a decision by action and cause, and times it from record to acknowledgement", async () => {
    const metrics = new ScorerMetrics({ defaultMetrics: false });
    metrics.observeDecision(
      {
        action: Action.ACTION_REVIEW,
        fallback: true,
        fallbackCause: FallbackCause.FALLBACK_CAUSE_TIMEOUT,
        decidedAtMs: 1_000_000,
        timings: { queueUs: 1_500, stateReadUs: 3_000, modelUs: 8_000, totalUs: 30_000 },
      },
      1_000_012,
    );
    const text = await metrics.metricsText();
    expect(text).toContain('fraud_decisions_total{action="review",fallback_cause="timeout"} 1');
    expect(text).toContain('fraud_decisions_total{action="approve",fallback_cause="none"} 0');
    // 30 ms to the decision + 12 ms to the acknowledgement = 42 ms.
    expect(text).toContain('fraud_decision_latency_seconds_bucket{le="0.04"} 0');
    expect(text).toContain('fraud_decision_latency_seconds_bucket{le="0.05"} 1');
    expect(text).toContain('fraud_stage_duration_seconds_bucket{le="0.01",stage="model"} 1');
    expect(text).toContain('fraud_stage_duration_seconds_count{stage="queue"} 1');
    expect(text).toContain('fraud_stage_duration_seconds_count{stage="decode"} 0');
  });

  it("aggregates a batch: counts per action and cause, latency and queue per decision, shared stages once", async () => {
    const metrics = new ScorerMetrics({ defaultMetrics: false });
    const shared = { stateReadUs: 3_000, modelUs: 8_000 };
    const decision = (action: number, fallbackCause: number, queueUs: number) => ({
      action,
      fallback: fallbackCause !== 0,
      fallbackCause,
      decidedAtMs: 1_000_000,
      timings: { ...shared, queueUs, totalUs: queueUs + 20_000 },
    });
    metrics.observeDecisions(
      [
        decision(Action.ACTION_APPROVE, 0, 1_000),
        decision(Action.ACTION_APPROVE, 0, 2_000),
        decision(Action.ACTION_DECLINE, FallbackCause.FALLBACK_CAUSE_BREAKER_OPEN, 3_000),
      ],
      1_000_005,
    );
    const text = await metrics.metricsText();
    expect(text).toContain('fraud_decisions_total{action="approve",fallback_cause="none"} 2');
    expect(text).toContain('fraud_decisions_total{action="decline",fallback_cause="breaker_open"} 1');
    expect(text).toContain("fraud_decision_latency_seconds_count 3");
    expect(text).toContain('fraud_stage_duration_seconds_count{stage="queue"} 3');
    expect(text).toContain('fraud_stage_duration_seconds_count{stage="model"} 1');
  });

  it("keeps one model-info series and drops a revoked partition's lag", async () => {
    const metrics = new ScorerMetrics({ defaultMetrics: false });
    metrics.setModelInfo("1", "f1", "cpu");
    metrics.setModelInfo("2", "f1", "cuda");
    metrics.setConsumerLag(0, 5);
    metrics.removeConsumerLag(0);
    const text = await metrics.metricsText();
    expect(text.match(/^fraud_model_info\{/gm)).toHaveLength(1);
    expect(text).toContain('model_version="2"');
    expect(text).not.toContain('fraud_consumer_lag{partition="0"}');
  });

  it("owns its registry: two instances do not collide", async () => {
    const a = new ScorerMetrics();
    const b = new ScorerMetrics();
    a.countDeadLetter("x");
    expect(await a.metricsText()).toContain('fraud_dlq_records_total{reason="x"} 1');
    expect(await b.metricsText()).not.toContain('reason="x"');
  });
});
