// Open-loop load: send i is due at start + i / rate, whatever happened to send i - 1. A closed
// loop (send, wait for the ack, send the next) slows down with the broker and so never sees the
// queueing a slow broker causes; here every record carries its scheduled time as its
// timestamp, so lateness anywhere — our own included — shows up as latency.

export interface OpenLoopPlan {
  /** Epoch ms of send 0. */
  readonly startMs: number;
  readonly ratePerSecond: number;
  /** How many sends; or durationMs × rate when absent. */
  readonly count?: number;
  readonly durationMs?: number;
}

export class OpenLoopSchedule {
  readonly startMs: number;
  readonly ratePerSecond: number;
  readonly total: number;
  readonly #intervalMs: number;

  constructor({ startMs, ratePerSecond, count, durationMs }: OpenLoopPlan) {
    if (!(ratePerSecond > 0) || !Number.isFinite(ratePerSecond))
      throw new RangeError(`rate must be a positive number of sends per second, got ${ratePerSecond}`);
    if (count === undefined && durationMs === undefined) throw new RangeError("give a count or a duration");
    const total = count ?? Math.floor(((durationMs ?? 0) * ratePerSecond) / 1000);
    if (!Number.isSafeInteger(total) || total < 0) throw new RangeError(`cannot plan ${total} sends`);
    this.startMs = startMs;
    this.ratePerSecond = ratePerSecond;
    this.total = total;
    this.#intervalMs = 1000 / ratePerSecond;
  }

  /** When send i is due (epoch ms, fractional). */
  dueAtMs(i: number): number {
    return this.startMs + i * this.#intervalMs;
  }

  /** The record timestamp of send i: its due time, never later (Kafka timestamps are whole ms). */
  timestampMs(i: number): number {
    return Math.floor(this.dueAtMs(i));
  }

  /** How many sends are due at nowMs (the indexes below this number). */
  dueBy(nowMs: number): number {
    if (nowMs < this.startMs) return 0;
    return Math.min(this.total, Math.floor(((nowMs - this.startMs) * this.ratePerSecond) / 1000) + 1);
  }

  get endMs(): number {
    return this.total === 0 ? this.startMs : this.dueAtMs(this.total - 1);
  }
}

export interface LoopClock {
  nowMs(): number;
  sleep(ms: number): Promise<void>;
}

export const realLoopClock: LoopClock = {
  nowMs: () => performance.timeOrigin + performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export interface OpenLoopRun {
  readonly schedule: OpenLoopSchedule;
  /**
   * Sends [from, to). Not awaited before the next sends are issued: the schedule, not the
   * broker, sets the pace. Awaited only to bound memory (maxInFlight) and at the end.
   */
  readonly send: (from: number, to: number) => Promise<void>;
  readonly clock?: LoopClock;
  /** Coalesce sends due within this many ms into one call. */
  readonly tickMs?: number;
  /** Most records handed to one send call. */
  readonly maxPerSend?: number;
  /** Send calls pending at once before the loop waits (a safety net, counted as stalls). */
  readonly maxInFlight?: number;
  readonly signal?: AbortSignal;
}

export interface OpenLoopResult {
  readonly issued: number;
  /** Largest delay between a send's due time and the moment it was handed to send(). */
  readonly maxIssueLagMs: number;
  /** Times the loop had to wait for in-flight sends (the broker could not keep up). */
  readonly stalls: number;
  /** Sends whose send() call failed. */
  readonly failures: number;
  readonly firstError?: Error;
}

export async function runOpenLoop({
  schedule,
  send,
  clock = realLoopClock,
  tickMs = 2,
  maxPerSend = 500,
  maxInFlight = 256,
  signal,
}: OpenLoopRun): Promise<OpenLoopResult> {
  const inFlight = new Set<Promise<void>>();
  let next = 0;
  let maxIssueLagMs = 0;
  let stalls = 0;
  let failures = 0;
  let firstError: Error | undefined;
  while (next < schedule.total && !signal?.aborted) {
    const now = clock.nowMs();
    const due = schedule.dueBy(now);
    if (due <= next) {
      await clock.sleep(Math.max(tickMs, schedule.dueAtMs(next) - now));
      continue;
    }
    maxIssueLagMs = Math.max(maxIssueLagMs, now - schedule.dueAtMs(next));
    while (next < due) {
      const from = next;
      const to = Math.min(due, from + maxPerSend);
      const sending: Promise<void> = send(from, to).catch((err: Error) => {
        failures += to - from;
        firstError ??= err;
      });
      const counted = sending.finally(() => inFlight.delete(counted));
      inFlight.add(counted);
      next = to;
    }
    if (inFlight.size >= maxInFlight) {
      stalls++;
      await Promise.race(inFlight);
    }
  }
  await Promise.all(inFlight);
  return { issued: next, maxIssueLagMs, stalls, failures, ...(firstError ? { firstError } : {}) };
}
