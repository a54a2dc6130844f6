// Readiness is a set of named conditions; the process is ready when all of them hold. Each
// subsystem flips its own condition, so the health server never needs to know who they are.

export interface ReadinessState {
  readonly ready: boolean;
  /** One line per unmet condition, e.g. "groupJoined: waiting for partition assignment". */
  readonly reasons: string[];
}

/** What `fraud-scorer serve` waits for before it takes traffic. */
export const SCORER_READINESS_CONDITIONS = [
  "modelVerified",
  "modelWarm",
  "schemasRegistered",
  "groupJoined",
] as const;

export class Readiness<Name extends string = string> {
  readonly #conditions = new Map<string, { met: boolean; detail: string | undefined }>();

  constructor(conditions: readonly Name[]) {
    for (const name of conditions) this.#conditions.set(name, { met: false, detail: undefined });
  }

  /** Sets a condition; `detail` says why it is unmet (or what happened) in /readyz. */
  set(name: Name, met: boolean, detail?: string): void {
    this.#conditions.set(name, { met, detail });
  }

  isMet(name: Name): boolean {
    return this.#conditions.get(name)?.met ?? false;
  }

  state(): ReadinessState {
    const reasons: string[] = [];
    for (const [name, { met, detail }] of this.#conditions)
      if (!met) reasons.push(detail === undefined ? `${name}: not yet` : `${name}: ${detail}`);
    return { ready: reasons.length === 0, reasons };
  }
}
