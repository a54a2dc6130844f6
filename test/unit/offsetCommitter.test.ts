import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { PartitionOffset } from "../../src/stream/kafkaPort.js";
import { OffsetCommitter } from "../../src/stream/offsetCommitter.js";

const deferred = () => {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

/** A committer that records each commit call as "partition@offset" strings, sorted. */
function recording(intervalMs: number) {
  const calls: string[][] = [];
  const committer = new OffsetCommitter({
    intervalMs,
    commit: async (offsets: readonly PartitionOffset[]) =>
      void calls.push(offsets.map((o) => `${o.partition}@${o.offset}`).sort()),
  });
  return { calls, committer };
}

describe("offset commits wait for deferred card-state work", () => {
  it("commits the next offset only after the batch's state work has settled", async () => {
    const { calls, committer } = recording(0);
    const state = deferred();
    committer.track("tx", 3, 41, state.promise);
    await sleep(10);
    expect(calls).toEqual([]);
    state.resolve();
    await committer.flush();
    expect(calls).toEqual([["3@42"]]);
  });

  it("never commits a partition past work that has not settled, even when later work has", async () => {
    const { calls, committer } = recording(0);
    const slow = deferred();
    committer.track("tx", 0, 10, slow.promise);
    committer.track("tx", 0, 20, Promise.resolve());
    committer.track("tx", 1, 5, Promise.resolve());
    await sleep(10);
    expect(calls.flat()).toEqual(["1@6"]);
    slow.resolve();
    await committer.flush();
    // Partition 0 moves once its first batch settles, straight to what has settled since.
    expect(calls.flat().filter((c) => c.startsWith("0@"))).toEqual(["0@21"]);
  });

  it("commits nothing of a partition again once one of its batches failed", async () => {
    const { calls, committer } = recording(0);
    const failing = deferred();
    committer.track("tx", 0, 10, failing.promise);
    committer.track("tx", 0, 20, Promise.resolve());
    committer.track("tx", 1, 5, Promise.resolve());
    failing.reject(new Error("decisions could not be published"));
    await committer.flush();
    expect(calls.flat()).toEqual(["1@6"]);
  });

  it("commits the partitions that settled within an interval together, at most once per interval", async () => {
    const { calls, committer } = recording(1_000);
    committer.track("tx", 0, 1, Promise.resolve());
    await sleep(20);
    expect(calls).toEqual([["0@2"]]); // the first commit does not wait
    committer.track("tx", 0, 2, Promise.resolve());
    committer.track("tx", 1, 7, Promise.resolve());
    committer.track("tx", 0, 3, Promise.resolve());
    await sleep(50);
    expect(calls).toHaveLength(1); // the interval has not passed
    await sleep(1_100);
    expect(calls).toEqual([["0@2"], ["0@4", "1@8"]]);
  });

  it("flush commits what is ready at once, without waiting for the interval", async () => {
    const { calls, committer } = recording(60_000);
    committer.track("tx", 0, 1, Promise.resolve());
    await sleep(10);
    committer.track("tx", 0, 9, Promise.resolve());
    await committer.flush();
    expect(calls).toEqual([["0@2"], ["0@10"]]);
  });

  it("reports a failed commit and keeps committing later offsets", async () => {
    const errors: unknown[] = [];
    let fail = true;
    const commits: string[] = [];
    const committer = new OffsetCommitter({
      intervalMs: 0,
      commit: async (offsets) => {
        if (fail) {
          fail = false;
          throw new Error("rebalance in progress");
        }
        commits.push(...offsets.map((o) => String(o.offset)));
      },
      onError: (err) => errors.push(err),
    });
    committer.track("tx", 0, 1, Promise.resolve());
    await committer.flush();
    committer.track("tx", 0, 2, Promise.resolve());
    await committer.flush();
    expect(errors).toHaveLength(1);
    expect(commits).toEqual(["3"]);
  });
});
