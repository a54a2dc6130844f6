// Exact count of distinct cards per device over a trailing window: the in-memory twin of the
// Redis HyperLogLog serving uses, for training, replay and tests. Transactions must arrive in
// event-time order (as the training pipeline feeds them).
import type { FeatureHash } from "../ingest/featureHashes.js";
import { DAY_MS } from "./cardState.js";

export class DeviceFanOutCounter {
  readonly #windowMs: number;
  readonly #lastSeen = new Map<FeatureHash, Map<string, number>>();

  constructor({ windowMs = DAY_MS }: { windowMs?: number } = {}) {
    this.#windowMs = windowMs;
  }

  /** Records that `cardId` used `device` at `timeMs`; returns the distinct cards on it in the window, this one included. */
  observe(device: FeatureHash, cardId: string, timeMs: number): number {
    if (device === 0) return 0;
    let cards = this.#lastSeen.get(device);
    if (cards === undefined) {
      cards = new Map();
      this.#lastSeen.set(device, cards);
    }
    cards.set(cardId, timeMs);
    let count = 0;
    for (const [card, seen] of cards) {
      if (timeMs - seen < this.#windowMs) count++;
      else cards.delete(card);
    }
    return count;
  }
}
