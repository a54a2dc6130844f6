// Redis failing: killed for 10 s, slowed by a delaying proxy, and run as a three-master Cluster
// with one master killed. Always a private redis-server on a spare port (or a proxy in front of
// the shared one), never the shared server itself.
import { setTimeout as sleep } from "node:timers/promises";
import { startDelayProxy } from "../delayProxy.js";
import { faultRun } from "../faultRun.js";
import { ms, outcome } from "../outcome.js";
import { startPrivateRedis, startPrivateRedisCluster } from "../../stack/privateRedis.js";
import { check, type Scenario } from "../scenario.js";
import { slowDependency } from "./slowDependency.js";

const BUDGET_MS = 200;

export const redisOutageScenario: Scenario = {
  name: "redis-outage",
  summary: "Redis SIGKILLed for 10 s under load, then started again (empty)",
  async run(ctx) {
    const rate = 1_000;
    const durationS = Math.max(25, Math.round(60 * ctx.scale));
    const killAtMs = Math.round(durationS * 300);
    const redis = await startPrivateRedis();
    try {
      // The state is gone with the server (no persistence): the card-state count is not checked.
      const result = await faultRun(
        ctx,
        { label: "redisdown", ratePerSecond: rate, durationS, redisUrl: redis.url, checkCardState: false },
        async ({ at }) => {
          await at(killAtMs);
          await redis.kill();
          ctx.log("  Redis SIGKILLed");
          await sleep(10_000);
          await redis.restart();
          ctx.log("  Redis back");
        },
      );
      const d = result.decisions;
      return outcome(
        `${rate} tx/s × ${durationS} s, Redis down 10 s`,
        result,
        [check(`every decision inside ${BUDGET_MS} ms (p100)`, d.p100Ms <= BUDGET_MS, ms(d.p100Ms))],
        ["card state not checked: the killed Redis had no persistence"],
      );
    } finally {
      await redis.stop();
    }
  },
};

/** A proxy in front of the shared Redis (never the shared server itself). */
const slowRedis = (delayMs: number) =>
  slowDependency("Redis", delayMs, async (ctx) => {
    const target = new URL(ctx.endpoints.redisUrl);
    const proxy = await startDelayProxy({
      targetHost: target.hostname,
      targetPort: Number(target.port || 6379),
      delayMs,
    });
    const proxied = new URL(ctx.endpoints.redisUrl);
    proxied.port = String(proxy.port);
    return { endpoints: { redisUrl: proxied.toString() }, close: () => proxy.close() };
  });

export const slowRedis50Scenario = slowRedis(50);
export const slowRedis500Scenario = slowRedis(500);

export const redisClusterScenario: Scenario = {
  name: "redis-cluster",
  summary: "three Redis masters (cluster mode); one master SIGKILLed halfway",
  async run(ctx) {
    const rate = 1_000;
    const durationS = Math.max(20, Math.round(60 * ctx.scale));
    const cluster = await startPrivateRedisCluster();
    try {
      const result = await faultRun(
        ctx,
        {
          label: "rcluster",
          ratePerSecond: rate,
          durationS,
          redisUrl: cluster.url,
          scorerEnv: { REDIS_CLUSTER_NODES: cluster.ports.map((p) => `127.0.0.1:${p}`).join(",") },
          checkCardState: false,
        },
        async ({ at }) => {
          await at((durationS * 1000) / 2);
          await cluster.killNode(2);
          ctx.log("  cluster master 3 SIGKILLed");
        },
      );
      const d = result.decisions;
      return outcome(
        `${rate} tx/s × ${durationS} s, 3 masters, 1 killed`,
        result,
        [
          check(
            "fallback only for the killed master's cards (share ≤ 50 %)",
            d.fallbackShare <= 0.5,
            `${(d.fallbackShare * 100).toFixed(1)} %`,
          ),
        ],
        [
          "the scorer is given the three masters as REDIS_CLUSTER_NODES; card state is not checked (a master's slots die with it)",
        ],
      );
    } finally {
      await cluster.stop();
    }
  },
};
