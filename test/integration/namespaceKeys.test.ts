// A run's clean-up removes its own namespace from the shared Redis and nothing else: not a
// namespace that merely begins with the same characters, not another's keys, and a namespace
// that would widen the SCAN pattern is refused before anything is deleted.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteNamespace, deleteNamespaceAt } from "../../src/state/namespaceKeys.js";
import { testEndpoints } from "./endpoints.js";

describe("deleting a namespace's keys", () => {
  let redis: Redis;
  const namespace = `test-ns-${randomUUID().slice(0, 8)}`;
  const neighbours = [`${namespace}x:cardstate:1:{c1}`, `other-${namespace}:hist:1:{c1}`, namespace];

  beforeAll(async () => {
    redis = new Redis(testEndpoints().redisUrl, { lazyConnect: true });
    await redis.connect();
  });

  afterAll(async () => {
    await redis.del(...neighbours);
    await redis.quit();
  });

  it("deletes every key under `<namespace>:` and leaves the neighbours", async () => {
    const own = Array.from({ length: 2_500 }, (_, i) => `${namespace}:cardstate:1:{card-${i}}`);
    own.push(`${namespace}:hist:1:{card-0}`, `${namespace}:dev:{ab12}:86400000:20427`);
    const pipeline = redis.pipeline();
    for (const key of [...own, ...neighbours]) pipeline.set(key, "v", "EX", 600);
    await pipeline.exec();

    expect(await deleteNamespace(redis, namespace)).toBe(own.length);
    expect(await redis.exists(...own)).toBe(0);
    expect(await redis.exists(...neighbours)).toBe(neighbours.length);
  });

  it("over a connection of its own, given the Redis URL", async () => {
    await redis.set(`${namespace}:cardstate:1:{card-x}`, "v", "EX", 600);
    expect(await deleteNamespaceAt(testEndpoints().redisUrl, namespace)).toBe(1);
    expect(await redis.exists(...neighbours)).toBe(neighbours.length);
  });

  it("refuses a namespace that would match other keys, deleting nothing", async () => {
    await expect(deleteNamespace(redis, "test-ns-*")).rejects.toThrow(RangeError);
    await expect(deleteNamespace(redis, "")).rejects.toThrow(/must match/);
    expect(await redis.exists(...neighbours)).toBe(neighbours.length);
  });
});
