// A dependency call behind an opossum circuit breaker with a timeout derived from the budget.
// A failed call is a value naming why (the fallback cause), never an exception: the scoring
// loop hands those transactions to the rules engine and carries on.
import CircuitBreaker from "opossum";

export type CallFailure = "breaker_open" | "timeout" | "error";
export type GuardedResult<T> = { ok: true; value: T } | { ok: false; failure: CallFailure; error?: Error };
export type BreakerState = "closed" | "half_open" | "open";

export interface GuardOptions {
  readonly name: string;
  readonly timeoutMs: number;
  readonly errorThresholdPercentage?: number;
  readonly resetTimeoutMs?: number;
  readonly volumeThreshold?: number;
  readonly onStateChange?: (name: string, state: BreakerState) => void;
}

const isOpenRejection = (err: unknown) => (err as { code?: string } | undefined)?.code === "EOPENBREAKER";
const isTimeout = (err: unknown) => (err as { code?: string } | undefined)?.code === "ETIMEDOUT";

export class GuardedCall {
  readonly name: string;
  readonly #breaker: CircuitBreaker<[() => Promise<unknown>], unknown>;

  constructor({
    name,
    timeoutMs,
    errorThresholdPercentage = 50,
    resetTimeoutMs = 5_000,
    volumeThreshold = 5,
    onStateChange,
  }: GuardOptions) {
    this.name = name;
    this.#breaker = new CircuitBreaker((fn: () => Promise<unknown>) => fn(), {
      name,
      timeout: timeoutMs,
      errorThresholdPercentage,
      resetTimeout: resetTimeoutMs,
      volumeThreshold,
      // A 1 s rolling window of 10 buckets: a dependency that recovers is trusted again quickly.
      rollingCountTimeout: 1_000,
      rollingCountBuckets: 10,
    });
    if (onStateChange) {
      this.#breaker.on("open", () => onStateChange(name, "open"));
      this.#breaker.on("halfOpen", () => onStateChange(name, "half_open"));
      this.#breaker.on("close", () => onStateChange(name, "closed"));
    }
  }

  get state(): BreakerState {
    if (this.#breaker.opened) return "open";
    return this.#breaker.halfOpen ? "half_open" : "closed";
  }

  async run<T>(fn: () => Promise<T>): Promise<GuardedResult<T>> {
    try {
      return { ok: true, value: (await this.#breaker.fire(fn)) as T };
    } catch (err) {
      if (isOpenRejection(err)) return { ok: false, failure: "breaker_open" };
      if (isTimeout(err)) return { ok: false, failure: "timeout", error: err as Error };
      return { ok: false, failure: "error", error: err as Error };
    }
  }

  shutdown(): void {
    this.#breaker.shutdown();
  }
}
