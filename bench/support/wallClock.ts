// Schedules are kept on the wall clock (epoch ms) because the broker's append times, which end
// every end-to-end latency, are on it; sub-millisecond steps come from the monotonic clock,
// anchored when the clock is made (drift within one step is negligible).
import { setTimeout as delay } from "node:timers/promises";
import type { LoopClock } from "../../src/tools/traffic/openLoopSchedule.js";

export function wallClock(): LoopClock {
  const anchor = Date.now() - performance.now();
  return {
    nowMs: () => anchor + performance.now(),
    sleep: (ms) => delay(ms),
  };
}
