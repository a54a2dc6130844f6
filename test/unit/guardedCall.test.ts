import { open } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { GuardedCall } from "../../src/scoring/guardedCall.js";

/** Blocks the event loop, as a long GC pause or a CPU-hungry neighbour would. */
const stall = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe("a guarded call", () => {
  it("a reply that arrived while the event loop stalled is not a timeout", async () => {
    const guard = new GuardedCall({ name: "stalled", timeoutMs: 1_000 });
    const file = await open(fileURLToPath(import.meta.url));
    try {
      // The read completes on the thread pool within microseconds, but the loop is blocked for
      // 60 ms: when it resumes, the 20 ms timer is due before the I/O phase delivers the reply.
      const call = guard.run(() => file.read(Buffer.alloc(16), 0, 16, 0), 20);
      stall(60);
      expect(await call).toMatchObject({ ok: true, value: { bytesRead: 16 } });
    } finally {
      await file.close();
      guard.shutdown();
    }
  });

  it("a call still pending at its own deadline times out", async () => {
    const guard = new GuardedCall({ name: "slow", timeoutMs: 1_000 });
    const result = await guard.run(() => new Promise((resolve) => setTimeout(resolve, 200)), 20);
    expect(result).toMatchObject({ ok: false, failure: "timeout" });
    guard.shutdown();
  });

  it("timeouts under a budget's shorter deadline do not open the breaker; the guard's own do", async () => {
    const slowCall = () => new Promise((resolve) => setTimeout(resolve, 60));
    const budgetBound = new GuardedCall({ name: "budget", timeoutMs: 1_000, volumeThreshold: 2 });
    const ownDeadline = new GuardedCall({ name: "own", timeoutMs: 5, volumeThreshold: 2 });
    try {
      for (let i = 0; i < 4; i++) {
        expect(await budgetBound.run(slowCall, 5)).toMatchObject({ ok: false, failure: "timeout" });
        expect(await ownDeadline.run(slowCall)).toMatchObject({ ok: false });
      }
      expect(budgetBound.state).toBe("closed");
      expect(ownDeadline.state).toBe("open");
    } finally {
      budgetBound.shutdown();
      ownDeadline.shutdown();
    }
  });

  it("without a deadline of its own a call gets the guard's timeout", async () => {
    const guard = new GuardedCall({ name: "default", timeoutMs: 15 });
    const result = await guard.run(() => new Promise((resolve) => setTimeout(resolve, 200)));
    expect(result).toMatchObject({ ok: false, failure: "timeout" });
    guard.shutdown();
  });

  it("opens after repeated failures and rejects at once while open", async () => {
    const guard = new GuardedCall({
      name: "failing",
      timeoutMs: 100,
      volumeThreshold: 2,
      resetTimeoutMs: 10_000,
    });
    const fail = () => Promise.reject(new Error("down"));
    for (let i = 0; i < 3; i++) await guard.run(fail);
    expect(guard.state).toBe("open");
    expect(await guard.run(() => Promise.resolve(1))).toEqual({ ok: false, failure: "breaker_open" });
    guard.shutdown();
  });

  it("closes at once when told the dependency is back, and opens again if it fails after all", async () => {
    const states: string[] = [];
    const guard = new GuardedCall({
      name: "reconnected",
      timeoutMs: 100,
      volumeThreshold: 2,
      resetTimeoutMs: 10_000,
      onStateChange: (_, state) => states.push(state),
    });
    const fail = () => Promise.reject(new Error("down"));
    for (let i = 0; i < 3; i++) await guard.run(fail);
    expect(guard.state).toBe("open");

    guard.dependencyBack();
    expect(guard.state).toBe("closed");
    expect(await guard.run(() => Promise.resolve(1))).toEqual({ ok: true, value: 1 });

    for (let i = 0; i < 6; i++) await guard.run(fail);
    expect(guard.state).toBe("open");
    expect(states).toEqual(["open", "closed", "open"]);
    guard.shutdown();
  });

  it("a closed breaker is left as it is when told the dependency is back", async () => {
    const states: string[] = [];
    const guard = new GuardedCall({ name: "fine", timeoutMs: 100, onStateChange: (_, s) => states.push(s) });
    guard.dependencyBack();
    expect(guard.state).toBe("closed");
    expect(states).toEqual([]);
    guard.shutdown();
  });
});
