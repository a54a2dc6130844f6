import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RedisConfig } from "../../../src/ops/config.js";
import { Cluster, Redis } from "ioredis";
import { connectRedis, nodeConnection } from "../../../src/state/redisClient.js";

const redisConfig = (more: Partial<RedisConfig> = {}): RedisConfig => ({
  url: "redis://127.0.0.1:6379",
  tls: { enabled: false },
  namespace: "fs",
  stateTtlMs: 60_000,
  historyLength: 8,
  stateCacheCards: 0,
  hmacKey: Buffer.alloc(32),
  ...more,
});

describe("the Redis connection built from config", () => {
  it("takes host, port, database and credentials from the URL", () => {
    expect(nodeConnection(redisConfig({ url: "redis://scorer:p%40ss@cache.internal:6380/2" }))).toEqual({
      host: "cache.internal",
      port: 6380,
      db: 2,
      username: "scorer",
      password: "p@ss",
    });
  });

  it("lets the configured user and password win over the URL's", () => {
    // The chaos suite's finding: a user in the URL plus REDIS_PASSWORD sent an empty password.
    const connection = nodeConnection(
      redisConfig({ url: "redis://scorer@cache:6379", password: "from-key" }),
    );
    expect(connection).toMatchObject({ username: "scorer", password: "from-key" });
    expect(
      nodeConnection(
        redisConfig({ url: "redis://old:old-pw@cache:6379", username: "new", password: "new-pw" }),
      ),
    ).toMatchObject({ username: "new", password: "new-pw" });
  });

  it("sends no credentials when neither the URL nor the keys carry them", () => {
    const connection = nodeConnection(redisConfig());
    expect(connection).not.toHaveProperty("username");
    expect(connection).not.toHaveProperty("password");
    expect(connection).not.toHaveProperty("tls");
  });

  it("trusts the configured CA file for TLS", () => {
    const caFile = join(mkdtempSync(join(tmpdir(), "redis-ca-")), "ca.pem");
    writeFileSync(caFile, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    expect(nodeConnection(redisConfig({ tls: { enabled: true, caFile } })).tls).toEqual({
      ca: ["-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"],
    });
    expect(nodeConnection(redisConfig({ url: "rediss://cache:6380", tls: { enabled: true } })).tls).toEqual(
      {},
    );
  });

  it("gives up a connect after 3 s, not ioredis's 10, on a single node and on a Cluster", () => {
    // A dropped SYN would otherwise hold the client "connecting" for 10 s after Redis is back,
    // every transaction the rules' meanwhile. Port 9 (discard): nothing listens, nothing is kept.
    const node = connectRedis(redisConfig({ url: "redis://127.0.0.1:9" }));
    const cluster = connectRedis(redisConfig({ clusterNodes: ["127.0.0.1:9"] }));
    try {
      expect(node).toBeInstanceOf(Redis);
      expect(cluster).toBeInstanceOf(Cluster);
      expect((node as Redis).options.connectTimeout).toBe(3_000);
      expect((cluster as Cluster).options.redisOptions?.connectTimeout).toBe(3_000);
    } finally {
      node.disconnect();
      cluster.disconnect();
    }
  });
});
