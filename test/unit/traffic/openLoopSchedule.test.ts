// The load generator is open-loop: sends are planned at fixed intervals from the start and
// issued on schedule however long earlier sends take, and each record's timestamp is its
// planned send time, so a slow broker shows up as latency instead of as a slower generator.
import { describe, expect, it } from "vitest";
import {
  OpenLoopSchedule,
  pacingTickMs,
  runOpenLoop,
  timerDelayMs,
  type DueRecord,
  type LoopClock,
  type RecordPlan,
} from "../../../src/tools/traffic/openLoopSchedule.js";

/** Virtual time: sleep advances the clock; sends resolve when the test says so. */
function virtualClock(startMs = 1_000_000): LoopClock & { advance(ms: number): void; now: number } {
  const clock = {
    now: startMs,
    nowMs: () => clock.now,
    sleep: async (ms: number) => {
      clock.now += ms;
    },
    advance: (ms: number) => {
      clock.now += ms;
    },
  };
  return clock;
}

interface IndexedRecord extends DueRecord {
  readonly index: number;
}

/** One record per scheduled send, planned lazily as the loop asks. */
function schedulePlan(schedule: OpenLoopSchedule): RecordPlan<IndexedRecord> {
  let next = 0;
  return {
    planUntil(untilMs, out) {
      for (const end = schedule.dueBy(untilMs); next < end; next++)
        out.push({ index: next, dueMs: schedule.dueAtMs(next), transactions: 1 });
    },
    get exhausted() {
      return next >= schedule.total;
    },
  };
}

describe("open-loop schedule", () => {
  it("plans send i at start + i / rate, and stamps each record with that time", () => {
    const s = new OpenLoopSchedule({ startMs: 1_000, ratePerSecond: 400, count: 5 });
    expect([0, 1, 2, 3, 4].map((i) => s.dueAtMs(i))).toEqual([1000, 1002.5, 1005, 1007.5, 1010]);
    expect([0, 1, 2, 3, 4].map((i) => s.timestampMs(i))).toEqual([1000, 1002, 1005, 1007, 1010]);
    expect(s.endMs).toBe(1010);
  });

  it("says how many sends are due at a moment, capped at the total", () => {
    const s = new OpenLoopSchedule({ startMs: 1_000, ratePerSecond: 1000, durationMs: 10 });
    expect(s.total).toBe(10);
    expect(s.dueBy(999)).toBe(0);
    expect(s.dueBy(1000)).toBe(1);
    expect(s.dueBy(1004.5)).toBe(5);
    expect(s.dueBy(5000)).toBe(10);
  });

  it("refuses a rate that is not positive", () => {
    expect(() => new OpenLoopSchedule({ startMs: 0, ratePerSecond: 0, count: 1 })).toThrow(/positive/);
  });

  it("keeps issuing sends on schedule while earlier sends are still waiting on the broker", async () => {
    const clock = virtualClock();
    const schedule = new OpenLoopSchedule({ startMs: clock.now, ratePerSecond: 1000, count: 100 });
    const issued: Array<{ records: IndexedRecord[]; at: number }> = [];
    const pending: Array<() => void> = [];
    // Every send hangs until the end of the run: a broker that has stopped answering.
    const run = runOpenLoop({
      plan: schedulePlan(schedule),
      clock,
      tickMs: 1,
      send: (records) => {
        issued.push({ records, at: clock.now });
        return new Promise<void>((resolve) => pending.push(resolve));
      },
    });
    // Let the loop run through the schedule (virtual time advances in its sleeps).
    while (issued.at(-1)?.records.at(-1)?.index !== 99) await new Promise((r) => setImmediate(r));
    const covered = issued.flatMap(({ records }) => records.map((r) => r.index));
    expect(covered).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // Each record was issued no earlier than it was due and no later than one tick after,
    // and none waited for an acknowledgement.
    for (const { records, at } of issued)
      for (const r of records) {
        expect(at).toBeGreaterThanOrEqual(r.dueMs);
        expect(at - r.dueMs).toBeLessThanOrEqual(1);
      }
    expect(pending.length).toBe(issued.length);
    pending.forEach((resolve) => resolve());
    const result = await run;
    expect(result.transactions).toBe(100);
    expect(result.stalls).toBe(0);
  });

  it("catches up after a stall by sending everything that fell due, timestamps unchanged", async () => {
    const clock = virtualClock();
    const schedule = new OpenLoopSchedule({ startMs: clock.now, ratePerSecond: 100, count: 50 });
    const batches: number[][] = [];
    let first = true;
    const result = await runOpenLoop({
      plan: schedulePlan(schedule),
      clock,
      tickMs: 1,
      send: async (records) => {
        batches.push(records.map((r) => r.index));
        // The generator's own thread is blocked for 200 ms once (a GC pause, a slow encode).
        if (first) {
          first = false;
          clock.advance(200);
        }
      },
    });
    expect(result.transactions).toBe(50);
    expect(batches[0]).toEqual([0]);
    // After the pause, the 20 sends that fell due meanwhile leave together, late by up to 200 ms.
    expect(batches[1]).toEqual(Array.from({ length: 20 }, (_, k) => k + 1));
    expect(result.maxIssueLagMs).toBeCloseTo(190, 0);
    // Their record timestamps are still the planned ones: the lateness is visible downstream.
    expect(schedule.timestampMs(20) - schedule.timestampMs(1)).toBe(190);
  });

  it("counts sends that failed, and the first error, without stopping the schedule", async () => {
    const clock = virtualClock();
    const schedule = new OpenLoopSchedule({ startMs: clock.now, ratePerSecond: 1000, count: 20 });
    const result = await runOpenLoop({
      plan: schedulePlan(schedule),
      clock,
      tickMs: 5,
      send: async (records) => {
        if (records[0]!.index === 0) throw new Error("broker said no");
      },
    });
    expect(result.transactions).toBe(20);
    expect(result.failures).toBeGreaterThan(0);
    expect(result.firstError?.message).toBe("broker said no");
  });

  it("waits for in-flight sends when too many are pending, and counts it as a stall", async () => {
    const clock = virtualClock();
    const schedule = new OpenLoopSchedule({ startMs: clock.now, ratePerSecond: 1000, count: 10 });
    const pending: Array<() => void> = [];
    const run = runOpenLoop({
      plan: schedulePlan(schedule),
      clock,
      tickMs: 1,
      maxInFlight: 2,
      send: () => new Promise<void>((resolve) => pending.push(resolve)),
    });
    for (let k = 0; k < 50; k++) {
      await new Promise((r) => setImmediate(r));
      pending.shift()?.();
    }
    const result = await run;
    expect(result.transactions).toBe(10);
    expect(result.stalls).toBeGreaterThan(0);
  });

  it("wakes once per tick and hands everything due to one send, each record at most one tick late", async () => {
    const clock = virtualClock();
    const schedule = new OpenLoopSchedule({ startMs: clock.now, ratePerSecond: 10_000, count: 1_000 });
    const issued: Array<{ records: IndexedRecord[]; at: number }> = [];
    const result = await runOpenLoop({
      plan: schedulePlan(schedule),
      clock,
      tickMs: 10,
      send: async (records) => {
        issued.push({ records, at: clock.now });
      },
    });
    expect(result.transactions).toBe(1_000);
    // 100 ms of schedule in 10 ms ticks: about 11 sends (the first at send 0), not one per record
    // or per millisecond.
    expect(issued.length).toBeGreaterThanOrEqual(10);
    expect(issued.length).toBeLessThanOrEqual(12);
    for (const { records, at } of issued)
      for (const r of records) {
        expect(at).toBeGreaterThanOrEqual(r.dueMs);
        expect(at - r.dueMs).toBeLessThanOrEqual(10);
      }
    expect(issued.flatMap(({ records }) => records.map((r) => r.index))).toEqual(
      Array.from({ length: 1_000 }, (_, i) => i),
    );
  });

  it("keeps the tick when records fall due while it sends, instead of waking for each of them", async () => {
    const clock = virtualClock();
    const schedule = new OpenLoopSchedule({ startMs: clock.now, ratePerSecond: 10_000, count: 1_000 });
    let sends = 0;
    const result = await runOpenLoop({
      plan: schedulePlan(schedule),
      clock,
      tickMs: 5,
      send: async () => {
        sends++;
        // Each send costs the loop 0.5 ms of its own time, during which 5 more records fall due:
        // they wait for the next tick rather than leave in a wake-up of their own.
        clock.advance(0.5);
      },
    });
    expect(result.transactions).toBe(1_000);
    expect(sends).toBeLessThanOrEqual(100 / 5 + 2);
    expect(result.maxIssueLagMs).toBeLessThanOrEqual(5 + 0.5);
  });

  it("wakes on the records' due times, a tick apart, however late each timer fired", async () => {
    const clock = virtualClock();
    const start = clock.now;
    // Packed records fall due at the ends of 5 ms linger windows; every timer fires 0.7 ms late.
    const windows = 40;
    let next = 0;
    const plan: RecordPlan<IndexedRecord> = {
      planUntil(untilMs, out) {
        for (; next < windows && start + (next + 1) * 5 <= untilMs; next++)
          out.push({ index: next, dueMs: start + (next + 1) * 5, transactions: 3 });
      },
      get exhausted() {
        return next >= windows;
      },
    };
    const late = { ...clock, sleep: async (ms: number) => void (clock.now += ms + 0.7) };
    const lags: number[] = [];
    const result = await runOpenLoop({
      plan,
      clock: late,
      tickMs: 10,
      send: async (records) => {
        for (const r of records) lags.push(clock.now - r.dueMs);
      },
    });
    expect(result.transactions).toBe(windows * 3);
    // Every other window's records leave 0.7 ms after they fall due, the others one window
    // (5 ms) later: the lateness does not add up from one wake-up to the next.
    expect(Math.max(...lags)).toBeCloseTo(5.7, 5);
    expect(lags.filter((l) => Math.abs(l - 0.7) < 1e-6)).toHaveLength(windows / 2);
  });

  it("sets timers that never fire before the time asked for, and less than 1 ms after it", () => {
    // Node fires a timer of d ms once its whole-millisecond loop clock has moved d past the
    // whole millisecond it was set at; from 1000.9, a delay of 2.05 ms is due at 1002.95.
    const delay = timerDelayMs(2.05, 1000.9);
    expect(Number.isInteger(delay)).toBe(true);
    expect(1000 + delay).toBeGreaterThanOrEqual(1000.9 + 2.05);
    expect(1000 + delay).toBeLessThan(1000.9 + 2.05 + 1);
    expect(timerDelayMs(0, 1000.9)).toBe(0);
    expect(timerDelayMs(-3, 1000.9)).toBe(0);
  });

  it("picks a tick that carries about 200 transactions, between 5 and 10 ms", () => {
    expect(pacingTickMs(500)).toBe(10);
    expect(pacingTickMs(1_000)).toBe(10);
    expect(pacingTickMs(10_000)).toBe(10);
    expect(pacingTickMs(20_000)).toBe(10);
    expect(pacingTickMs(30_000)).toBeCloseTo(6.67, 1);
    expect(pacingTickMs(40_000)).toBe(5);
    expect(pacingTickMs(100_000)).toBe(5);
  });
});
