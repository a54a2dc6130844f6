// Shadow scoring as two Prometheus counters: shadow decisions written, and transactions a
// shadow candidate did not score, by why (its budget spent, or shadow work backlogged).
// Their ratio is the coverage of a `shadow report`.
import { Counter, type Registry } from "prom-client";
import type { ShadowSkipReason } from "../scoring/shadowScoring.js";

export class ShadowMetrics {
  readonly #decisions: Counter;
  readonly #skipped: Counter<"reason">;

  constructor(registry: Registry) {
    this.#decisions = new Counter({
      name: "fraud_shadow_decisions_total",
      help: "Decisions a shadow candidate wrote to the shadow decisions topic",
      registers: [registry],
    });
    this.#skipped = new Counter({
      name: "fraud_shadow_skipped_total",
      help: "Transactions a shadow candidate did not score, by reason (budget, backlog, failed)",
      labelNames: ["reason"],
      registers: [registry],
    });
  }

  decided(count: number): void {
    this.#decisions.inc(count);
  }

  skipped(reason: ShadowSkipReason | "failed", count: number): void {
    this.#skipped.inc({ reason }, count);
  }
}
