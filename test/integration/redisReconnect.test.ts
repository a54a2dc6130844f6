// The scorer's Redis client (src/state/redisClient.ts) against a real redis-server that accepts
// connections and does not answer them (stopped with SIGSTOP: the kernel completes the TCP
// handshake, the server never reads). ioredis alone would wait for its ready check for good.
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { Redis } from "ioredis";
import type { RedisConfig } from "../../src/ops/config.js";
import { connectRedis } from "../../src/state/redisClient.js";
import { startPrivateRedis } from "../../stack/privateRedis.js";

const configFor = (url: string): RedisConfig => ({
  url,
  tls: { enabled: false },
  namespace: "fs",
  stateTtlMs: 60_000,
  historyLength: 8,
  stateCacheCards: 0,
  hmacKey: Buffer.alloc(32),
});

describe("the scorer's Redis client", () => {
  it("drops a connection whose ready check goes unanswered, and is ready once Redis answers again", async () => {
    const server = await startPrivateRedis();
    server.freeze();
    const client = connectRedis(configFor(server.url)) as Redis;
    client.on("error", () => {});
    let connects = 0;
    client.on("connect", () => connects++);
    try {
      for (let waited = 0; connects < 3 && waited < 30_000; waited += 50) await sleep(50);
      // Each connection was accepted, none answered, and each was given up for a fresh one.
      expect(connects).toBeGreaterThanOrEqual(3);
      expect(client.status).not.toBe("ready");
      await expect(client.get("x")).rejects.toThrow(/Stream isn't writeable/);

      server.thaw();
      await once(client, "ready");
      expect(await client.ping()).toBe("PONG");
    } finally {
      client.disconnect();
      await server.stop();
    }
  }, 60_000);
});
