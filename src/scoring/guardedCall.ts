// A dependency call behind an opossum circuit breaker with a timeout derived from the budget.
// A failed call is a value naming why (the fallback cause), never an exception: the scoring
// loop hands those transactions to the rules engine and carries on.
//
// The timeout is ours, not opossum's, for two reasons. Each call gets the time its batch's
// budget really has left (run's timeoutMs), not a fixed share. And a stalled event loop must not
// turn into a timeout: when the timer fires, the reply may be sitting unread in the socket
// because the loop was busy. So an expired timer first lets the loop's I/O phase run once
// (setImmediate runs after it) and only then declares the call timed out if it is still pending.
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
/**
 * A timeout under a deadline shorter than the guard's own, set by what the batch's budget had
 * left: it says the budget ran out, not that the dependency is failing, so it must not open the
 * breaker. Counted, a slow Kafka link opened it: records arriving with little budget left gave
 * their state reads 1–5 ms, those timed out, and the open breaker then sent the transactions
 * that did have budget to the rules too (slow-kafka-50ms: the model decided 31 % of them).
 */
export const isBudgetTimeout = (err: unknown): boolean =>
  isTimeout(err) && (err as { budgetBound?: boolean }).budgetBound === true;

/** Rejects with an ETIMEDOUT-coded error if `call` is still pending after `ms` and one I/O pass. */
function withDeadline<T>(call: Promise<T>, ms: number, name: string, budgetBound: boolean): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return;
          settled = true;
          reject(
            Object.assign(new Error(`${name} timed out after ${ms} ms`), { code: "ETIMEDOUT", budgetBound }),
          );
        }),
      ms,
    );
    call.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

export class GuardedCall {
  readonly name: string;
  readonly #timeoutMs: number;
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
    this.#timeoutMs = timeoutMs;
    this.#breaker = new CircuitBreaker((fn: () => Promise<unknown>) => fn(), {
      name,
      timeout: false,
      errorFilter: isBudgetTimeout,
      errorThresholdPercentage,
      resetTimeout: resetTimeoutMs,
      volumeThreshold,
      // A 1 s rolling window of 10 buckets: a dependency that recovers is trusted again quickly.
      rollingCountTimeout: 1_000,
      rollingCountBuckets: 10,
      // Nothing reads opossum's latency percentiles or its 'snapshot' events (the metrics have
      // their own histograms): left on, every call pushed its latency into the bucket, and each
      // breaker woke the loop every 100 ms to total, concatenate and sort them for a snapshot.
      rollingPercentilesEnabled: false,
      enableSnapshots: false,
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

  /** The next call would be the half-open breaker's one trial call. */
  get trialDue(): boolean {
    return this.#breaker.halfOpen && this.#breaker.pendingClose;
  }

  /** timeoutMs: this call's own limit (what its budget has left); the guard's default otherwise. */
  async run<T>(fn: () => Promise<T>, timeoutMs = this.#timeoutMs): Promise<GuardedResult<T>> {
    const ms = Math.max(1, timeoutMs);
    try {
      return {
        ok: true,
        value: (await this.#breaker.fire(() => withDeadline(fn(), ms, this.name, ms < this.#timeoutMs))) as T,
      };
    } catch (err) {
      if (isOpenRejection(err)) return { ok: false, failure: "breaker_open" };
      if (isTimeout(err)) return { ok: false, failure: "timeout", error: err as Error };
      return { ok: false, failure: "error", error: err as Error };
    }
  }

  /**
   * The dependency says it is back (a client reconnected): an open breaker closes now instead of
   * at its next trial call, up to resetTimeoutMs away, during which every transaction would be
   * the rules'. If the dependency fails after all, the failures open it again as before.
   */
  dependencyBack(): void {
    if (this.#breaker.opened || this.#breaker.halfOpen) this.#breaker.close();
  }

  shutdown(): void {
    this.#breaker.shutdown();
  }
}
