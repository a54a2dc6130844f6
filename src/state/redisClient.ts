// The one place the scorer's Redis client is built from config: a single node, or a Cluster when
// seed nodes are given. The card-state store (and any other Redis adapter) is handed the client;
// nothing else in src imports ioredis.
import { readFileSync } from "node:fs";
import { Cluster, Redis, type RedisOptions } from "ioredis";
import type { Logger } from "pino";
import type { RedisConfig } from "../ops/config.js";

export type ScorerRedis = Redis | Cluster;

/** What every connection to a node carries: who we are, and TLS. */
type NodeConnection = Pick<RedisOptions, "username" | "password" | "tls">;

/**
 * Credentials and TLS from the URL and the keys, the keys winning. The options are built here
 * rather than handing ioredis the URL: ioredis lets a URL's parts override the options, so a user
 * in the URL and the password in REDIS_PASSWORD would send an empty password.
 */
export function nodeConnection(
  config: RedisConfig,
): NodeConnection & { host: string; port: number; db: number } {
  const url = new URL(config.url);
  const fromUrl = (part: string) => (part === "" ? undefined : decodeURIComponent(part));
  const username = config.username ?? fromUrl(url.username);
  const password = config.password ?? fromUrl(url.password);
  const db = Number(url.pathname.slice(1) || 0);
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: Number(url.port || 6379),
    db: Number.isInteger(db) ? db : 0,
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(config.tls.enabled
      ? { tls: config.tls.caFile !== undefined ? { ca: [readFileSync(config.tls.caFile, "utf8")] } : {} }
      : {}),
  };
}

const clusterSeed = (node: string) => {
  const at = node.lastIndexOf(":");
  return { host: node.slice(0, at).replace(/^\[(.*)\]$/, "$1"), port: Number(node.slice(at + 1)) };
};

// Redis calls fail fast while disconnected: the breakers, not a queue, decide what waits.
const FAIL_FAST = { enableOfflineQueue: false, maxRetriesPerRequest: 0 } as const;
// Every transaction is the rules' until the client is back, and the time from Redis answering to
// the next attempt is part of that: at most 200 ms (1 s before, which left Redis-outage runs at
// 440–550 ms from Redis answering to the model deciding again). An attempt against a server
// that is down costs a refused connect, or one attempt per connect timeout when unreachable.
const reconnectDelay = (attempt: number) => Math.min(attempt * 50, 200);
// Both halves of a connection get 3 s before it is dropped and tried again, where ioredis would
// wait 10 s for the first and forever for the second; every transaction is the rules' meanwhile.
// Not less: behind a slow link a healthy Redis takes a while to be ready (through the fault
// suite's 500 ms delaying proxy the ready check took over 1 s, and at a 1 s limit the client
// never became ready: slow-redis-500ms applied no card state at all).
// - The TCP connect (ioredis's connectTimeout). A refused connect fails at once, but a dropped
//   SYN (a full accept queue, a lost packet) waits on TCP's retransmits, 1 s then 3 s then 7 s:
//   against a listener that never accepts, the client sat "connecting" for the whole 10 s.
// - The ready check (INFO), which ioredis sends once connected and gives no timeout: against a
//   server that accepts and never answers (a hung Redis, a proxy whose backend is down) the
//   client sat in "connect" for as long as it was watched (8 s), commands refused, never trying
//   another connection. (A Cluster's slot refresh gives up after 1 s, ioredis's default.)
//   A Redis still loading its data answers INFO and is asked again later; dropped meanwhile, it
//   is reconnected to and asked again, no worse for the rules deciding meanwhile.
const CONNECTION_TIMEOUT_MS = 3_000;

/** Drops a connection that is not ready `ms` after its TCP connect, so the client tries again. */
function dropIfNotReady(redis: Redis, ms: number): Redis {
  let timer: NodeJS.Timeout | undefined;
  const clear = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  redis.on("connect", () => {
    clear();
    timer = setTimeout(() => {
      timer = undefined;
      // Destroyed, not ended: ending waits for a FIN the silent server never sends, and ioredis
      // gives that 2 s (disconnectTimeout) before destroying it itself.
      if (redis.status === "connect") redis.stream.destroy();
    }, ms).unref();
  });
  redis.on("ready", clear);
  redis.on("close", clear);
  return redis;
}

export function connectRedis(config: RedisConfig): ScorerRedis {
  const { host, port, db, ...connection } = nodeConnection(config);
  if (config.clusterNodes === undefined)
    return dropIfNotReady(
      new Redis({
        host,
        port,
        db,
        ...connection,
        ...FAIL_FAST,
        connectTimeout: CONNECTION_TIMEOUT_MS,
        retryStrategy: reconnectDelay,
      }),
      CONNECTION_TIMEOUT_MS,
    );
  return new Cluster(config.clusterNodes.map(clusterSeed), {
    enableOfflineQueue: false,
    clusterRetryStrategy: reconnectDelay,
    redisOptions: { ...connection, maxRetriesPerRequest: 0, connectTimeout: CONNECTION_TIMEOUT_MS },
  });
}

/**
 * Give Redis a moment to connect so the first batches do not trip the breakers; but a scorer
 * must start when Redis is down too (the rules decide until it is back), so never wait long.
 */
export async function redisReadyOrWarn(redis: ScorerRedis, logger: Logger, waitMs = 5_000): Promise<void> {
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
