// "Distinct cards on this device in the last 24 h", approximated with fixed buckets: time is cut
// into windows of `windowMs` (UTC days by default) and a device's count is the union of the
// current and the previous bucket. That covers between 24 h and 48 h of history, never less,
// and needs one set (a HyperLogLog in Redis) per device per day instead of a timestamp per card.
import { DAY_MS } from "./cardState.js";

export const DEFAULT_DEVICE_WINDOW_MS = DAY_MS;

/** Index of the bucket holding `nowMs`; the window counted is this bucket and the one before. */
export const deviceWindowBucket = (nowMs: number, windowMs: number): number => Math.floor(nowMs / windowMs);
