import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { OffsetCommitter } from "../../src/stream/offsetCommitter.js";

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

describe("offset commits wait for deferred card-state work", () => {
  it("commits the next offset only after the batch's state work has settled", async () => {
    const commits: string[] = [];
    const committer = new OffsetCommitter({ commit: async (t, p, o) => void commits.push(`${t}/${p}@${o}`) });
    const state = deferred();
    committer.track("tx", 3, 41, state.promise);
    await sleep(10);
    expect(commits).toEqual([]);
    state.resolve();
    await committer.flush();
    expect(commits).toEqual(["tx/3@42"]);
  });

  it("never commits a partition past work that has not settled, even when later work has", async () => {
    const commits: string[] = [];
    const committer = new OffsetCommitter({ commit: async (_t, p, o) => void commits.push(`${p}@${o}`) });
    const slow = deferred();
    committer.track("tx", 0, 10, slow.promise);
    committer.track("tx", 0, 20, Promise.resolve());
    committer.track("tx", 1, 5, Promise.resolve());
    await sleep(10);
    expect(commits).toEqual(["1@6"]);
    slow.resolve();
    await committer.flush();
    expect(commits).toEqual(["1@6", "0@21"]); // 0@11 overtaken by 0@21, skipped
  });

  it("commits a batch a newer one overtook when the partition has had no commit for a second", async () => {
    const commits: string[] = [];
    const committer = new OffsetCommitter({ commit: async (_t, p, o) => void commits.push(`${p}@${o}`) });
    const first = deferred();
    const second = deferred();
    committer.track("tx", 0, 10, first.promise);
    committer.track("tx", 0, 20, second.promise);
    await sleep(1_100);
    first.resolve();
    await sleep(10);
    // Batches that keep waiting (records behind the registry) must not hold every commit back.
    expect(commits).toEqual(["0@11"]);
    second.resolve();
    await committer.flush();
    expect(commits).toEqual(["0@11", "0@21"]);
  });

  it("reports a failed commit and keeps committing later offsets", async () => {
    const errors: unknown[] = [];
    let fail = true;
    const commits: string[] = [];
    const committer = new OffsetCommitter({
      commit: async (_t, _p, o) => {
        if (fail) {
          fail = false;
          throw new Error("rebalance in progress");
        }
        commits.push(o);
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
