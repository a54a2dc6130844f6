// Readiness is a set of named conditions; the process is ready when all of them hold. Each
// subsystem flips its own condition, so the health server never needs to know who they are.

export interface ReadinessState {
  readonly ready: boolean;
  /** One line per unmet condition, e.g. "groupJoined: waiting for partition assignment". */
  readonly reasons: string[];
  /**
   * When each condition first held, in ms since this process started, by its own clock: a poller
   * whose request waits behind a busy event loop would read it late.
   */
  readonly firstMetMs: Readonly<Record<string, number>>;
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
  readonly #firstMetMs = new Map<string, number>();

  constructor(conditions: readonly Name[]) {
    for (const name of conditions) this.#conditions.set(name, { met: false, detail: undefined });
  }

  /** Sets a condition; `detail` says why it is unmet (or what happened) in /readyz. */
  set(name: Name, met: boolean, detail?: string): void {
    this.#conditions.set(name, { met, detail });
    if (met && !this.#firstMetMs.has(name))
      this.#firstMetMs.set(name, Math.round(performance.now() * 10) / 10);
  }

  isMet(name: Name): boolean {
    return this.#conditions.get(name)?.met ?? false;
  }

  state(): ReadinessState {
    const reasons: string[] = [];
    for (const [name, { met, detail }] of this.#conditions)
      if (!met) reasons.push(detail === undefined ? `${name}: not yet` : `${name}: ${detail}`);
    return { ready: reasons.length === 0, reasons, firstMetMs: Object.fromEntries(this.#firstMetMs) };
  }
}
