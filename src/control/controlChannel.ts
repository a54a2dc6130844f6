// The port promotion goes through: publish a control record; follow the records (the latest of
// each key first, then every new one, in order). The Kafka binding is a compacted topic keyed by
// ControlKey, read by every instance from the beginning with no consumer group (each instance must
// see every record, not a share of them); it lives with the Kafka client in src/stream/kafka/.
import type { ControlKey, ControlRecord } from "./controlRecord.js";

export interface ControlSubscription {
  stop(): Promise<void>;
}

export interface ControlChannel {
  publish(record: ControlRecord): Promise<void>;
  /** Calls onRecord one record at a time (awaiting each), starting with the latest of every key. */
  follow(onRecord: (record: ControlRecord) => Promise<void>): Promise<ControlSubscription>;
  /** The latest record of a key, if any: what `rollback` reads to find `previous`. */
  latest(key: ControlKey): Promise<ControlRecord | undefined>;
}

/** In-process channel with compacted-topic semantics, for one process and for tests. */
export class InMemoryControlChannel implements ControlChannel {
  readonly #latest = new Map<ControlKey, ControlRecord>();
  readonly #followers = new Set<(record: ControlRecord) => Promise<void>>();
  #delivery: Promise<void> = Promise.resolve();

  async publish(record: ControlRecord): Promise<void> {
    this.#latest.set(record.key, record);
    const followers = [...this.#followers];
    // One delivery at a time, in publish order, as a partition would give them.
    this.#delivery = this.#delivery.then(async () => {
      for (const f of followers) await f(record);
    });
    await this.#delivery;
  }

  async follow(onRecord: (record: ControlRecord) => Promise<void>): Promise<ControlSubscription> {
    for (const record of this.#latest.values()) await onRecord(record);
    this.#followers.add(onRecord);
    return { stop: async () => void this.#followers.delete(onRecord) };
  }

  async latest(key: ControlKey): Promise<ControlRecord | undefined> {
    return this.#latest.get(key);
  }
}
