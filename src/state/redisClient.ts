// The one place the scorer's Redis client is built from config. The card-state store (and any
// other Redis adapter) is handed the client; nothing else in src imports ioredis.
import { Redis } from "ioredis";
import type { Logger } from "pino";
import type { ScorerConfig } from "../ops/config.js";

/** Redis calls fail fast while disconnected: the breakers, not a queue, decide what waits. */
export function connectRedis(config: ScorerConfig["redis"]): Redis {
  return new Redis(config.url, {
    ...(config.password !== undefined ? { password: config.password } : {}),
    ...(config.tls ? { tls: {} } : {}),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 50, 1_000),
  });
}

/**
 * Give Redis a moment to connect so the first batches do not trip the breakers; but a scorer
 * must start when Redis is down too (the rules decide until it is back), so never wait long.
 */
export async function redisReadyOrWarn(redis: Redis, logger: Logger, waitMs = 5_000): Promise<void> {
  if (redis.status === "ready") return;
  const ready = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), waitMs);
    redis.once("ready", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  if (!(await ready)) logger.warn({ waitMs }, "Redis not reachable yet; the rules decide until it is");
}
