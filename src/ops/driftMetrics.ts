// Drift as Prometheus gauges and as the JSON of /drift: PSI per feature and for the score over
// the DriftMonitor's sliding window, recomputed on a timer (a few hundred bins summed and logged
// every few seconds) so scoring only ever increments counts. Registered on the scorer's registry.
import { Gauge, type Registry } from "prom-client";
import type { DriftMonitor, DriftSnapshot } from "../model/driftMonitor.js";

export class DriftMetrics {
  readonly #monitor: DriftMonitor;
  readonly #featurePsi: Gauge<"feature">;
  readonly #scorePsi: Gauge;
  readonly #windowTransactions: Gauge;
  readonly #timer: NodeJS.Timeout;
  #latest: DriftSnapshot;

  constructor(
    registry: Registry,
    monitor: DriftMonitor,
    { refreshMs = 10_000 }: { refreshMs?: number } = {},
  ) {
    this.#monitor = monitor;
    this.#featurePsi = new Gauge({
      name: "fraud_feature_psi",
      help: "Population stability index of each model input over the drift window, against training",
      labelNames: ["feature"],
      registers: [registry],
    });
    this.#scorePsi = new Gauge({
      name: "fraud_score_psi",
      help: "Population stability index of the model score over the drift window, against training",
      registers: [registry],
    });
    this.#windowTransactions = new Gauge({
      name: "fraud_drift_window_transactions",
      help: "Transactions scored by the model in the drift window",
      registers: [registry],
    });
    this.#latest = this.refresh();
    this.#timer = setInterval(() => this.refresh(), refreshMs).unref();
  }

  /** Recomputes PSI from the window now and updates the gauges (a null PSI removes its series). */
  refresh(): DriftSnapshot {
    const snapshot = this.#monitor.snapshot();
    this.#windowTransactions.set(snapshot.transactions);
    for (const [feature, psi] of Object.entries(snapshot.features)) {
      if (psi === null) this.#featurePsi.remove(feature);
      else this.#featurePsi.set({ feature }, psi);
    }
    if (snapshot.score === null) this.#scorePsi.reset();
    else this.#scorePsi.set(snapshot.score);
    this.#latest = snapshot;
    return snapshot;
  }

  /** The last computed snapshot: what /drift serves. */
  latest(): DriftSnapshot {
    return this.#latest;
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
