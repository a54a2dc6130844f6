// What a scenario is: a name, the load it runs, a body that injects its fault while the load
// runs, and targets over the audited result. Each produces one row of docs/RELIABILITY.md.
import type { ChaosEndpoints } from "./chaosEndpoints.js";
import type { DecisionAudit } from "./decisionAudit.js";
import type { CardStateAudit } from "./cardStateAudit.js";
import type { LogAudit } from "./logAudit.js";

export interface ScenarioContext {
  readonly root: string;
  readonly endpoints: ChaosEndpoints;
  readonly modelDir: string;
  readonly modelVersion: string;
  /** Where this scenario's scorer logs go. */
  readonly logDir: string;
  /** 1 for the full run; smaller for the `npm test` subset and quick looks. */
  readonly scale: number;
  readonly log: (line: string) => void;
}

export interface ScenarioOutcome {
  /** e.g. "2000 tx/s × 300 s, 10 SIGKILLs". */
  readonly load: string;
  readonly decisions: DecisionAudit;
  /** Absent where the state itself was destroyed on purpose (a killed Redis without persistence). */
  readonly cardState?: CardStateAudit;
  readonly logs: LogAudit;
  /** Facts of the run the row should carry (crashes, extra measures). */
  readonly notes: readonly string[];
  /** Each target checked, with whether it was met. */
  readonly targets: readonly TargetCheck[];
}

export interface TargetCheck {
  readonly target: string;
  readonly met: boolean;
  readonly measured: string;
  /**
   * A target the suite's exit status stands on: the fault suite issue's "done when" (nothing
   * lost, stalls ≤ 3 s after a member crash, Redis outage p100 ≤ 200 ms, every malformed record
   * dead-lettered, 0 duplicates with exactly-once) and the audit's own integrity checks. The
   * others are goals: measured, reported, and marked missed in the table, without failing the run.
   */
  readonly required?: boolean;
}

export interface Scenario {
  readonly name: string;
  readonly summary: string;
  /** Runs only with --soak (or --only naming it). */
  readonly soakOnly?: boolean;
  run(ctx: ScenarioContext): Promise<ScenarioOutcome>;
}

/** A goal: reported, and marked when missed; the run's exit status does not depend on it. */
export const check = (target: string, met: boolean, measured: string): TargetCheck => ({
  target,
  met,
  measured,
});

/** A required target: a miss fails the run (exit status 1). */
export const requirement = (target: string, met: boolean, measured: string): TargetCheck => ({
  target,
  met,
  measured,
  required: true,
});

/** Whether a run stands: every required target met. */
export const requiredMet = (targets: readonly TargetCheck[]): boolean =>
  targets.every((t) => t.met || t.required !== true);
