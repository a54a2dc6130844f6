import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import {
  DeferredStateLane,
  LANE_BACKLOG_BATCH_ITEMS,
  LANE_BATCH_ITEMS,
  LANE_LIVE_BATCH_ITEMS,
} from "../../src/scoring/deferredStateLane.js";
import type { ScoringItem } from "../../src/scoring/scoreBatch.js";

const items = (from: number, n: number, cardId = "card") =>
  Array.from({ length: n }, (_, i) => ({ position: from + i, tx: { cardId } }) as unknown as ScoringItem);

/** The lane's calls, in order, for the work `queue` defers while the first call waits. */
async function callsFor(queue: (lane: DeferredStateLane) => void): Promise<Array<readonly ScoringItem[]>> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const calls: Array<readonly ScoringItem[]> = [];
  const lane = new DeferredStateLane({
    apply: async (batch) => {
      await gate;
      calls.push(batch);
      return true;
    },
  });
  queue(lane);
  release();
  await lane.drained();
  lane.shutdown();
  return calls;
}

describe("the deferred card-state lane", () => {
  it("catches up in coalesced batches, in arrival order, while work keeps arriving", async () => {
    const calls: number[][] = [];
    const lane = new DeferredStateLane({
      apply: async (batch) => {
        calls.push(batch.map((i) => i.position));
        await sleep(20); // a slow round trip, whatever the size
        return true;
      },
    });
    for (let b = 0; b < 50; b++) lane.defer(items(b * 4, 4));
    expect(lane.busy).toBe(true);
    await lane.drained();
    expect(lane.busy).toBe(false);
    expect(calls.length).toBeLessThanOrEqual(3); // 200 transactions, not 50 round trips
    expect(calls.flat()).toEqual(items(0, 200).map((i) => i.position));
    lane.shutdown();
  });

  it("resolves drained() only after the work queued before it, and counts what it could not apply", async () => {
    const dropped: Array<[number, string]> = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const lane = new DeferredStateLane({
      apply: async (batch) => {
        await gate;
        return batch.length < 3;
      },
      maxPendingItems: 10,
      onDropped: (n, reason) => dropped.push([n, reason]),
    });
    lane.defer(items(0, 2));
    const firstDrained = lane.drained();
    lane.defer(items(2, 5, "other"));
    lane.defer(items(7, 5, "third")); // over maxPendingItems: dropped at once
    expect([lane.holds("card"), lane.holds("other"), lane.holds("third")]).toEqual([true, true, false]);
    let settled = false;
    void firstDrained.then(() => (settled = true));
    await sleep(10);
    expect(settled).toBe(false);
    release();
    await lane.drained();
    expect(settled).toBe(true);
    expect([lane.holds("card"), lane.holds("other")]).toEqual([false, false]);
    expect(dropped).toEqual([
      [5, "full"],
      [5, "failed"],
    ]);
    lane.shutdown();
  });

  it("has room() for more only once its backlog is back under the high-water mark", async () => {
    const gates: Array<() => void> = [];
    const lane = new DeferredStateLane({
      apply: () => new Promise<boolean>((resolve) => gates.push(() => resolve(true))),
      maxBatchItems: 10,
    });
    for (let b = 0; b < 4; b++) lane.defer(items(b * 10, 10, `card-${b}`), { backlog: true });
    await expect(lane.room(40)).resolves.toBeUndefined(); // 40 waiting: not over the mark
    let roomy = false;
    void lane.room(15).then(() => (roomy = true));
    await sleep(5);
    expect(roomy).toBe(false);
    gates.shift()!(); // 30 left
    await sleep(5);
    expect(roomy).toBe(false);
    gates.shift()!(); // 20 left
    await sleep(5);
    expect(roomy).toBe(false);
    gates.shift()!(); // 10 left
    await sleep(5);
    expect(roomy).toBe(true);
    gates.shift()!();
    await lane.drained();
    lane.shutdown();
  });

  it("holds no one back for a live stream's failed calls, however much of their work waits", async () => {
    const gates: Array<() => void> = [];
    const lane = new DeferredStateLane({
      apply: () => new Promise<boolean>((resolve) => gates.push(() => resolve(true))),
      maxBatchItems: 10,
    });
    for (let b = 0; b < 4; b++) lane.defer(items(b * 10, 10, `card-${b}`));
    expect(lane.pendingItems).toBe(40);
    await expect(lane.room(5)).resolves.toBeUndefined();
    // A backlog's work on top is counted, and only it.
    lane.defer(items(40, 10, "backlog"), { backlog: true });
    await expect(lane.room(10)).resolves.toBeUndefined();
    let roomy = false;
    void lane.room(5).then(() => (roomy = true));
    for (let b = 0; b < 4; b++) {
      gates.shift()!();
      await sleep(5);
      expect(roomy).toBe(false);
    }
    gates.shift()!(); // the backlog's batch applied
    await sleep(5);
    expect(roomy).toBe(true);
    await lane.drained();
    lane.shutdown();
  });

  it("never holds anyone back while it is failing (Redis down): room() ends at the first failed apply", async () => {
    let fail!: () => void;
    let calls = 0;
    const lane = new DeferredStateLane({
      apply: () =>
        calls++ === 0
          ? new Promise<boolean>((resolve) => (fail = () => resolve(false)))
          : Promise.resolve(false),
      maxBatchItems: 10,
    });
    for (let b = 0; b < 3; b++) lane.defer(items(b * 10, 10, `card-${b}`), { backlog: true });
    let roomy = false;
    void lane.room(5).then(() => (roomy = true));
    await sleep(5);
    expect(roomy).toBe(false);
    fail();
    await sleep(5);
    expect(roomy).toBe(true);
    lane.defer(items(30, 30, "later"), { backlog: true });
    // Failing: room at once however much waits, until an apply succeeds again.
    await expect(lane.room(0)).resolves.toBeUndefined();
    await lane.drained();
    lane.shutdown();
  });

  it("lets a commit go ahead of a call the store leaves unanswered, and waits again once the lane has drained", async () => {
    const events: Array<[string, number]> = [];
    let answer!: () => void;
    let calls = 0;
    const lane = new DeferredStateLane({
      // The first call hangs (a stopped Redis) until answered; the rest answer at once.
      apply: () =>
        calls++ === 0
          ? new Promise<boolean>((resolve) => (answer = () => resolve(true)))
          : Promise.resolve(true),
      onBehind: (event, n) => events.push([event, n]),
      stallMs: 20,
    });
    await expect(lane.drainedUnlessStalled()).resolves.toBe(true); // nothing queued
    lane.defer(items(0, 3));
    expect(lane.storeStalled).toBe(false); // not behind yet
    await expect(lane.drainedUnlessStalled()).resolves.toBe(false);
    expect(lane.behind).toBe(true);
    expect(lane.storeStalled).toBe(true);
    // Behind: no wait at all, and what is deferred meanwhile is reported as committed ahead.
    lane.defer(items(3, 2, "other"));
    await expect(lane.drainedUnlessStalled()).resolves.toBe(false);
    let drained = false;
    void lane.drained().then(() => (drained = true));
    await sleep(5);
    expect(drained).toBe(false); // a plain drained() still waits for the work itself
    answer();
    await lane.drained();
    expect([lane.behind, lane.storeStalled]).toEqual([false, false]);
    expect(events).toEqual([
      ["behind", 3],
      ["deferred_behind", 2],
      ["caught_up", 0],
    ]);
    // Caught up: a call that answers inside the limit is waited for.
    lane.defer(items(5, 1));
    await expect(lane.drainedUnlessStalled()).resolves.toBe(true);
    lane.shutdown();
  });

  it("does not call a slow but answering store stalled: each call is timed from its own start", async () => {
    const lane = new DeferredStateLane({
      apply: async () => {
        await sleep(50);
        return true;
      },
      maxBatchItems: 1,
      stallMs: 200,
    });
    for (let i = 0; i < 6; i++) lane.defer(items(i, 1, `card-${i}`));
    // Six calls of 50 ms each: 300 ms in all, but no single call waits 200 ms.
    await expect(lane.drainedUnlessStalled()).resolves.toBe(true);
    expect(lane.behind).toBe(false);
    lane.shutdown();
  });

  it("falls behind at once for work whose live store call failed, and only when told how long a stall is", async () => {
    const hang = () => new Promise<boolean>(() => {});
    const events: string[] = [];
    const lane = new DeferredStateLane({
      apply: hang,
      stallMs: 10_000,
      onBehind: (event) => events.push(event),
    });
    lane.defer(items(0, 1), { storeFailed: true });
    expect(lane.behind).toBe(true);
    await expect(lane.drainedUnlessStalled()).resolves.toBe(false); // no 10 s wait
    expect(events).toEqual(["behind"]);
    // Without stallMs (at-least-once), the lane is never behind: the wait is drained()'s.
    const plain = new DeferredStateLane({ apply: async () => true });
    plain.defer(items(0, 1), { storeFailed: true });
    expect(plain.behind).toBe(false);
    await expect(plain.drainedUnlessStalled()).resolves.toBe(true);
    lane.shutdown();
    plain.shutdown();
  });

  it("after a failed live store call, applies a live stream's work in calls of at most LANE_LIVE_BATCH_ITEMS, a backlog's in larger ones", async () => {
    // Queued while the first call waits: 40 live deferrals of 32, then 40 of a backlog's.
    const calls = await callsFor((lane) => {
      lane.defer(items(0, 1), { storeFailed: true });
      for (let b = 0; b < 40; b++) lane.defer(items(1 + b * 32, 32, `live-${b}`));
      for (let b = 0; b < 40; b++) lane.defer(items(10_000 + b * 32, 32, `old-${b}`), { backlog: true });
    });
    const live = calls.filter((c) => c[0]!.position < 10_000).map((c) => c.length);
    const backlog = calls.filter((c) => c[0]!.position >= 10_000).map((c) => c.length);
    expect(Math.max(...live)).toBeLessThanOrEqual(LANE_LIVE_BATCH_ITEMS);
    expect(live.reduce((a, b) => a + b, 0)).toBe(1 + 40 * 32);
    expect(Math.max(...backlog)).toBeGreaterThan(LANE_LIVE_BATCH_ITEMS);
    expect(backlog.reduce((a, b) => a + b, 0)).toBe(40 * 32);
  });

  it("takes a deep backlog in calls of LANE_BACKLOG_BATCH_ITEMS while nothing is decided live, a short one or one beside live batches in calls of LANE_BATCH_ITEMS", async () => {
    const backlog = (lane: DeferredStateLane, batches: number) => {
      lane.defer(items(0, 1), { backlog: true });
      for (let b = 0; b < batches; b++) lane.defer(items(1 + b * 512, 512, `old-${b}`), { backlog: true });
    };
    expect(LANE_BACKLOG_BATCH_ITEMS).toBe(8_192);
    // 20,480 waiting: one call of 8,192, then the 12,288 left (under twice that) in short calls.
    const deep = await callsFor((lane) => backlog(lane, 40));
    expect(deep.map((c) => c.length)).toEqual([1, 8_192, ...Array<number>(6).fill(LANE_BATCH_ITEMS)]);
    const short = await callsFor((lane) => backlog(lane, 32));
    expect(Math.max(...short.map((c) => c.length))).toBe(LANE_BATCH_ITEMS);
    const beside = await callsFor((lane) => {
      lane.liveBatchDecided();
      backlog(lane, 40);
    });
    expect(Math.max(...beside.map((c) => c.length))).toBe(LANE_BATCH_ITEMS);
    expect(beside.reduce((n, c) => n + c.length, 0)).toBe(1 + 40 * 512);
  });

  it("applies late work in large calls when no store call failed (a restart's late batches)", async () => {
    const calls = await callsFor((lane) => {
      lane.defer(items(0, 1));
      for (let b = 0; b < 40; b++) lane.defer(items(1 + b * 32, 32, `late-${b}`));
    });
    expect(calls.map((c) => c.length)).toEqual([1, 40 * 32]);
  });
});
