// The load generator is open-loop: sends are planned at fixed intervals from the start and
// issued on schedule however long earlier sends take, and each record's timestamp is its
// planned send time, so a slow broker shows up as latency instead of as a slower generator.
import { describe, expect, it } from "vitest";
import { OpenLoopSchedule, runOpenLoop, type LoopClock } from "../../../src/traffic/openLoopSchedule.js";

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
    const issued: Array<{ from: number; to: number; at: number }> = [];
    const pending: Array<() => void> = [];
    // Every send hangs until the end of the run: a broker that has stopped answering.
    const run = runOpenLoop({
      schedule,
      clock,
      tickMs: 1,
      send: (from, to) => {
        issued.push({ from, to, at: clock.now });
        return new Promise<void>((resolve) => pending.push(resolve));
      },
    });
    // Let the loop run through the schedule (virtual time advances in its sleeps).
    while (issued.at(-1)?.to !== 100) await new Promise((r) => setImmediate(r));
    const covered = issued.flatMap(({ from, to }) => Array.from({ length: to - from }, (_, k) => from + k));
    expect(covered).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // Each send was issued no later than one tick after it was due, none waited for an ack.
    for (const { from, at } of issued) expect(at - schedule.dueAtMs(from)).toBeLessThanOrEqual(1);
    expect(pending.length).toBe(issued.length);
    pending.forEach((resolve) => resolve());
    const result = await run;
    expect(result.issued).toBe(100);
    expect(result.stalls).toBe(0);
  });

  it("catches up after a stall by sending everything that fell due, timestamps unchanged", async () => {
    const clock = virtualClock();
    const schedule = new OpenLoopSchedule({ startMs: clock.now, ratePerSecond: 100, count: 50 });
    const batches: Array<[number, number]> = [];
    let first = true;
    const result = await runOpenLoop({
      schedule,
      clock,
      tickMs: 1,
      send: async (from, to) => {
        batches.push([from, to]);
        // The generator's own thread is blocked for 200 ms once (a GC pause, a slow encode).
        if (first) {
          first = false;
          clock.advance(200);
        }
      },
    });
    expect(result.issued).toBe(50);
    expect(batches[0]).toEqual([0, 1]);
    // After the pause, the 20 sends that fell due meanwhile leave together, late by up to 200 ms.
    expect(batches[1]).toEqual([1, 21]);
    expect(result.maxIssueLagMs).toBeCloseTo(190, 0);
    // Their record timestamps are still the planned ones: the lateness is visible downstream.
    expect(schedule.timestampMs(20) - schedule.timestampMs(1)).toBe(190);
  });

  it("counts sends that failed, and the first error, without stopping the schedule", async () => {
    const clock = virtualClock();
    const schedule = new OpenLoopSchedule({ startMs: clock.now, ratePerSecond: 1000, count: 20 });
    const result = await runOpenLoop({
      schedule,
      clock,
      tickMs: 5,
      send: async (from) => {
        if (from === 0) throw new Error("broker said no");
      },
    });
    expect(result.issued).toBe(20);
    expect(result.failures).toBeGreaterThan(0);
    expect(result.firstError?.message).toBe("broker said no");
  });
});
