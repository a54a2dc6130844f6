// Drift as Prometheus gauges and as the JSON of /drift: PSI per feature and for the score over
// the DriftMonitor's sliding window, recomputed on a timer (a few hundred bins summed and logged
// every few seconds) so scoring only ever increments counts. Registered on the scorer's registry.
// Drift is against the training of the model that scores: a promotion hands over the new
// artifact's monitor (follow), which starts with an empty window; a model whose manifest carries
// no distributions leaves the gauges empty.
import { Gauge, type Registry } from "prom-client";
import type { DriftMonitor, DriftSnapshot } from "../model/driftMonitor.js";

export class DriftMetrics {
  #monitor: DriftMonitor | undefined;
  readonly #featurePsi: Gauge<"feature">;
  readonly #scorePsi: Gauge;
  readonly #windowTransactions: Gauge;
  readonly #timer: NodeJS.Timeout;
  #latest: DriftSnapshot | undefined;

  constructor(
    registry: Registry,
    monitor: DriftMonitor | undefined,
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

  /** Measures against another model's training from now on (undefined: that model has none). */
  follow(monitor: DriftMonitor | undefined): DriftSnapshot | undefined {
    this.#monitor = monitor;
    // Another model may have other features: no series of the previous one may linger.
    this.#featurePsi.reset();
    return this.refresh();
  }

  /** Recomputes PSI from the window now and updates the gauges (a null PSI removes its series). */
  refresh(): DriftSnapshot | undefined {
    const snapshot = this.#monitor?.snapshot();
    if (snapshot === undefined) {
      this.#windowTransactions.reset();
      this.#scorePsi.reset();
      this.#latest = undefined;
      return undefined;
    }
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

  /** The last computed snapshot: what /drift serves (undefined while no model is monitored). */
  latest(): DriftSnapshot | undefined {
    return this.#latest;
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
