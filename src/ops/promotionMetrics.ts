// Promotions as one Prometheus counter: every control record an instance applies, by what it
// controls and what came of it. A refused artifact (tampered, unsigned, wrong feature schema)
// shows here as {kind="model",outcome="refused"} while the current model keeps scoring.
import { Counter, type Registry } from "prom-client";

export type PromotionKind = "model" | "rules" | "shadow";
export type PromotionOutcome = "switched" | "unchanged" | "refused";

export class PromotionMetrics {
  readonly #promotions: Counter<"kind" | "outcome">;

  constructor(registry: Registry) {
    this.#promotions = new Counter({
      name: "fraud_promotions_total",
      help: "Control records applied by this instance, by kind (model, rules, shadow) and outcome (switched, unchanged, refused)",
      labelNames: ["kind", "outcome"],
      registers: [registry],
    });
  }

  count(kind: PromotionKind, outcome: PromotionOutcome): void {
    this.#promotions.inc({ kind, outcome });
  }
}
