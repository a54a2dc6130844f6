// The options every card-state store shares (the Redis store and its in-memory twin), with one
// set of defaults and one validation, so both keep the same history and count devices alike.
import { DEFAULT_DEVICE_WINDOW_MS } from "./deviceWindowBuckets.js";

export interface CardHistoryOptions {
  /** History entries kept per card. */
  readonly historyLength?: number;
  /** Width of a device fan-out bucket; the fan-out counts this bucket and the previous one. */
  readonly deviceWindowMs?: number;
}

export const DEFAULT_HISTORY_LENGTH = 32;

const isPositiveInteger = (n: number) => Number.isSafeInteger(n) && n > 0;

/** The options with their defaults; a RangeError names the first one out of range. */
export function cardHistoryOptions({
  historyLength = DEFAULT_HISTORY_LENGTH,
  deviceWindowMs = DEFAULT_DEVICE_WINDOW_MS,
}: CardHistoryOptions): Required<CardHistoryOptions> {
  if (!isPositiveInteger(historyLength)) throw new RangeError(`historyLength must be a positive integer`);
  if (!isPositiveInteger(deviceWindowMs)) throw new RangeError(`deviceWindowMs must be a positive integer`);
  return { historyLength, deviceWindowMs };
}
