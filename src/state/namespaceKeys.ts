// What the scorer keeps in Redis sits under one namespace: every key begins `<namespace>:`
// (redisCardStateStore.ts's key layout). A run that made its own namespace (the demo, the bench,
// a test) removes it here, and nothing else: the namespace is checked before it becomes a SCAN
// pattern, so a glob character in it cannot widen the match to other keys.
import { Redis } from "ioredis";

/** Names and versions go into keys verbatim: no separators, hash-tag braces or glob characters. */
export const isKeySafe = (part: string): boolean => /^[A-Za-z0-9._-]+$/.test(part);

/**
 * Deletes every key under `<namespace>:` of a single Redis node (SCAN + UNLINK, never FLUSHALL
 * on a shared Redis); returns how many were deleted.
 */
export async function deleteNamespace(redis: Redis, namespace: string): Promise<number> {
  if (!isKeySafe(namespace))
    throw new RangeError(`namespace ${JSON.stringify(namespace)} must match [A-Za-z0-9._-]+`);
  let cursor = "0";
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${namespace}:*`, "COUNT", 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.unlink(...keys);
  } while (cursor !== "0");
  return deleted;
}

/** deleteNamespace over a connection of its own to the Redis at `url`, closed afterwards. */
export async function deleteNamespaceAt(url: string, namespace: string): Promise<number> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    return await deleteNamespace(redis, namespace);
  } finally {
    redis.disconnect();
  }
}
