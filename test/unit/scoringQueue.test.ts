import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { DecisionInit } from "../../src/codec/messages.js";
import { streamPosition } from "../../src/scoring/ports.js";
import type { ScoringItem } from "../../src/scoring/scoreBatch.js";
import { ScoringQueue } from "../../src/stream/scoringQueue.js";

/**
 * A transaction whose record was stamped ageMs ago (its budget started then). Stamps are whole
 * milliseconds (Date.now(), as Kafka's record timestamps are), so a wait measured from one with
 * performance.now() can end up to 1 ms short of the linger: the bounds below allow that.
 */
const item = (n: number, ageMs = 0): ScoringItem =>
  ({
    position: streamPosition(n, 0),
    budgetStartMs: Date.now() - ageMs,
    decodeUs: 0,
  }) as unknown as ScoringItem;
const decision = (i: ScoringItem) => ({ transactionId: String(i.position) }) as DecisionInit;

function recordingQueue(maxBatch: number, lingerMs: number) {
  const batches: number[] = [];
  const queue = new ScoringQueue({
    maxBatch,
    lingerMs,
    score: async (items) => {
      batches.push(items.length);
      return { decisions: items.map(decision), stateWritten: Promise.resolve() };
    },
    publish: async () => undefined,
  });
  return { queue, batches };
}

describe("scoring queue batches", () => {
  it("without a linger scores what has arrived at once, one by one when they trickle in", async () => {
    const { queue, batches } = recordingQueue(64, 0);
    for (let n = 0; n < 5; n++) {
      void queue.submit([item(n)]);
      await sleep(2);
    }
    await queue.idle();
    expect(batches).toEqual([1, 1, 1, 1, 1]);
  });

  it("with a linger gathers what arrives within it into one batch", async () => {
    const { queue, batches } = recordingQueue(64, 50);
    const started = performance.now();
    const done: Array<Promise<void>> = [];
    for (let n = 0; n < 5; n++) {
      done.push(queue.submit([item(n)]));
      await sleep(2);
    }
    await Promise.all(done);
    expect(batches).toEqual([5]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(48);
  });

  it("does not linger once maxBatch has arrived", async () => {
    const { queue, batches } = recordingQueue(4, 300);
    const started = performance.now();
    const first = queue.submit([item(0), item(1)]);
    await sleep(1);
    const second = queue.submit([item(2), item(3), item(4)]);
    await first;
    expect(batches).toEqual([4]);
    expect(performance.now() - started).toBeLessThan(200);
    // The one left over waits out the linger from its own arrival.
    expect(queue.depth).toBe(1);
    await second;
    expect(batches).toEqual([4, 1]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(298);
  });

  it("lingers only for what is left of the linger since the record's timestamp", async () => {
    const { queue, batches } = recordingQueue(64, 100);
    const started = performance.now();
    // Stamped 70 ms ago (the producer, the broker and the fetch took that): 30 ms are left.
    const first = queue.submit([item(0, 70)]);
    await sleep(10);
    void queue.submit([item(1, 5)]);
    await first;
    const waited = performance.now() - started;
    expect(batches).toEqual([2]);
    expect(waited).toBeGreaterThanOrEqual(25);
    expect(waited).toBeLessThan(90);
  });

  it("does not hold a transaction that arrives already past the linger", async () => {
    const { queue, batches } = recordingQueue(64, 200);
    const started = performance.now();
    const fresh = queue.submit([item(0)]);
    await sleep(5);
    // A partition that lagged delivers an old record: it wakes the lingering batch at once.
    await queue.submit([item(1, 250)]);
    await fresh;
    expect(batches).toEqual([2]);
    expect(performance.now() - started).toBeLessThan(150);
  });

  it("waits at most the linger after arrival, whatever a record's timestamp says", async () => {
    const { queue, batches } = recordingQueue(64, 40);
    const started = performance.now();
    // A producer clock 10 s ahead: the record looks 10 s younger than it is.
    await queue.submit([item(0, -10_000)]);
    expect(batches).toEqual([1]);
    const waited = performance.now() - started;
    // Timers may fire up to a millisecond early by performance.now().
    expect(waited).toBeGreaterThanOrEqual(37);
    expect(waited).toBeLessThan(150);
  });

  it("scores the next batch while a batch's state write is out, and resolves a submission only once its write is answered", async () => {
    const writes: Array<() => void> = [];
    const published: number[] = [];
    const scored: number[] = [];
    const queue = new ScoringQueue({
      maxBatch: 1,
      score: async (items) => {
        scored.push(items.length);
        return {
          decisions: items.map(decision),
          stateWritten: new Promise<void>((resolve) => writes.push(resolve)),
        };
      },
      publish: async (decisions) => {
        published.push(decisions.length);
      },
    });
    let firstDone = false;
    const first = queue.submit([item(0)]).then(() => (firstDone = true));
    const second = queue.submit([item(1)]);
    await sleep(10);
    // Both batches scored and published, neither write answered: nothing may be committed yet.
    expect(scored).toEqual([1, 1]);
    expect(published).toEqual([1, 1]);
    expect(firstDone).toBe(false);
    writes[0]!();
    await first;
    expect(firstDone).toBe(true);
    writes[1]!();
    await second;
    await queue.idle();
  });
});
