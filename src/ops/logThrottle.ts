// At most one log line per key per interval, with what the suppressed ones stood for. In an
// outage every batch fails the same way: a warning per batch cost more than the batch, and a
// Redis Cluster master down for 30 s wrote 1,866 identical lines (chaos redis-cluster) where the
// metrics already count each failure.

export interface ThrottledLine {
  /** Lines of this key suppressed since the last one let through. */
  readonly suppressedSinceLast: number;
  /** The sum of their weights (e.g. transactions), for a line that counts something. */
  readonly suppressedWeight: number;
}

export class LogThrottle {
  readonly #intervalMs: number;
  readonly #nowMs: () => number;
  readonly #last = new Map<string, { atMs: number; suppressed: number; weight: number }>();

  constructor({ intervalMs = 1_000, nowMs = Date.now }: { intervalMs?: number; nowMs?: () => number } = {}) {
    this.#intervalMs = intervalMs;
    this.#nowMs = nowMs;
  }

  /** The line of `key` may be logged (with what was suppressed before it), or undefined: suppressed. */
  admit(key: string, weight = 1): ThrottledLine | undefined {
    const nowMs = this.#nowMs();
    const last = this.#last.get(key);
    if (last !== undefined && nowMs - last.atMs < this.#intervalMs) {
      last.suppressed++;
      last.weight += weight;
      return undefined;
    }
    this.#last.set(key, { atMs: nowMs, suppressed: 0, weight: 0 });
    return { suppressedSinceLast: last?.suppressed ?? 0, suppressedWeight: last?.weight ?? 0 };
  }
}
