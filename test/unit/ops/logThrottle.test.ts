import { describe, expect, it } from "vitest";
import { LogThrottle } from "../../../src/ops/logThrottle.js";

describe("LogThrottle", () => {
  it("lets one line per key through per interval and says what it suppressed", () => {
    let now = 0;
    const throttle = new LogThrottle({ intervalMs: 1_000, nowMs: () => now });
    expect(throttle.admit("dropped:failed", 64)).toEqual({ suppressedSinceLast: 0, suppressedWeight: 0 });
    now = 10;
    expect(throttle.admit("dropped:failed", 100)).toBeUndefined();
    now = 999;
    expect(throttle.admit("dropped:failed", 36)).toBeUndefined();
    now = 1_000;
    expect(throttle.admit("dropped:failed", 5)).toEqual({ suppressedSinceLast: 2, suppressedWeight: 136 });
    now = 2_500;
    expect(throttle.admit("dropped:failed")).toEqual({ suppressedSinceLast: 0, suppressedWeight: 0 });
  });

  it("throttles each key on its own", () => {
    const now = 0;
    const throttle = new LogThrottle({ nowMs: () => now });
    expect(throttle.admit("state_read:timeout")).toBeDefined();
    expect(throttle.admit("state_read:error")).toBeDefined();
    expect(throttle.admit("state_read:timeout")).toBeUndefined();
    expect(throttle.admit("state_read:error")).toBeUndefined();
  });
});
